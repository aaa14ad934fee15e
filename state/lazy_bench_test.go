package state

import (
	"hash/crc32"
	"testing"
)

// BenchmarkRestoreLazy restores 128 key groups holding 1 M keys × 256 B
// (a ValueTable[[]byte]) from adopted blobs: eagerly (RestoreGroups, every
// group decoded before it returns), lazily until the task could run
// (RestoreGroupsLazy: blobs checked against their known CRC, nothing
// decoded) and lazily until every
// group is decoded by the background decoder and installed.
func BenchmarkRestoreLazy(b *testing.B) {
	const maxP, n = 128, 1 << 20
	keys, groups := benchKeys(n, maxP)
	src := NewBackend(maxP)
	vals := NewValueTable[[]byte]("values", maxP)
	if _, err := src.Register(vals); err != nil {
		b.Fatal(err)
	}
	v := make([]byte, 256)
	for i, k := range keys {
		vals.Put(groups[i], k, v)
	}
	blobs := make([][]byte, maxP)
	size := 0
	for g := range blobs {
		var err error
		if blobs[g], err = src.SnapshotGroup(g); err != nil {
			b.Fatal(err)
		}
		size += len(blobs[g])
	}
	src, vals = nil, nil
	crcs := make([]uint32, maxP)
	for g, blob := range blobs {
		crcs[g] = crc32.Checksum(blob, castagnoli)
	}
	fresh := func() (*Backend, []GroupBlob) {
		dst := NewBackend(maxP)
		if _, err := dst.Register(NewValueTable[[]byte]("values", maxP)); err != nil {
			b.Fatal(err)
		}
		gbs := make([]GroupBlob, maxP)
		for g, blob := range blobs {
			// As a store hands them over: verified against their CRC. They
			// are never changed, so adopting them again is safe here.
			gbs[g] = GroupBlob{Group: g, Blob: blob, CRC: crcs[g], CRCKnown: true}
		}
		return dst, gbs
	}
	run := func(name string, restore func(*Backend, []GroupBlob) error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for range b.N {
				b.StopTimer()
				dst, gbs := fresh()
				b.StartTimer()
				if err := restore(dst, gbs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("eager", func(dst *Backend, gbs []GroupBlob) error { return dst.RestoreGroups(gbs, true) })
	run("lazy-running", func(dst *Backend, gbs []GroupBlob) error { return dst.RestoreGroupsLazy(gbs) })
	run("lazy-decoded", func(dst *Backend, gbs []GroupBlob) error {
		if err := dst.RestoreGroupsLazy(gbs); err != nil {
			return err
		}
		done := make(chan struct{})
		dst.DecodeInBackground(func() { close(done) })
		<-done
		return dst.InstallDecoded()
	})
}
