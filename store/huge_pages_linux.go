package store

import (
	"syscall"
	"unsafe"
)

// hugePages asks Linux to back b's whole pages with transparent huge pages
// when it first touches them (madvise MADV_HUGEPAGE); where the kernel has
// them disabled the advice fails and nothing changes.
func hugePages(b []byte) {
	const page = 4096
	if len(b) < 2*page {
		return
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	lead := ((p + page - 1) &^ (page - 1)) - p // to the first whole page
	end := ((p + uintptr(len(b))) &^ (page - 1)) - p
	_ = syscall.Madvise(b[lead:end], syscall.MADV_HUGEPAGE)
}
