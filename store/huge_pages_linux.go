package store

import (
	"syscall"
	"unsafe"
)

// hugePages asks Linux to back b's whole pages with transparent huge pages
// when it first touches them (madvise MADV_HUGEPAGE), or, with on false, no
// longer to (MADV_NOHUGEPAGE: pages faulted in stay as they are, but the
// kernel's background collapsing leaves the range alone once the collector
// reuses it for other objects and returns some of its pages). Where the
// kernel has no huge pages the advice fails and nothing changes.
func hugePages(b []byte, on bool) {
	const page = 4096
	if len(b) < 2*page {
		return
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	lead := ((p + page - 1) &^ (page - 1)) - p // to the first whole page
	end := ((p + uintptr(len(b))) &^ (page - 1)) - p
	advice := syscall.MADV_NOHUGEPAGE
	if on {
		advice = syscall.MADV_HUGEPAGE
	}
	_ = syscall.Madvise(b[lead:end], advice)
}
