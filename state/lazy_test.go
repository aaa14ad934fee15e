package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// lazyRestored restores blobs (one per group) into a fresh allKinds with
// RestoreGroupsLazy, adopting copies of them.
func lazyRestored(t *testing.T, blobs [][]byte) allKinds {
	t.Helper()
	dst := newAllKinds(t, len(blobs))
	if err := dst.b.RestoreGroupsLazy(groupBlobs(blobs, true, rand.New(rand.NewPCG(5, 6)))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// materialised snapshots every group after decoding it: the decoded state
// encodes to the bytes it was restored from.
func (a allKinds) materialised(t *testing.T, groups int) [][]byte {
	t.Helper()
	for g := range groups {
		if err := a.b.Materialise(g); err != nil {
			t.Fatal(err)
		}
	}
	if n := a.b.Encoded(); n != 0 {
		t.Fatalf("%d groups still encoded after Materialise of every group", n)
	}
	return a.snapshots(t, groups)
}

// holdDecoder makes the backend's decoder stop before it decodes group
// held: entered is closed when it gets there, and it goes on once release
// is closed.
func holdDecoder(b *Backend, held int) (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	b.lazyGroups().beforeDecode = func(g int) {
		if g == held {
			close(entered)
			<-release
		}
	}
	return entered, release
}

// TestRestoreGroupsLazyKeepsGroupsEncodedUntilUsed: a lazy restore decodes
// no value, map or list table: groups stay encoded (Encoded counts them),
// their key counts and snapshots come from their bytes, and the first use
// of a group decodes it to the state it was restored from, in every kind
// of table; timers are restored at once.
func TestRestoreGroupsLazyKeepsGroupsEncodedUntilUsed(t *testing.T) {
	const groups = 8
	src := newAllKinds(t, groups)
	for g := range groups {
		if g%4 != 3 {
			src.fillAll(g, "k")
		}
	}
	want := src.snapshots(t, groups)
	dst := lazyRestored(t, want)
	if got := dst.b.Encoded(); got != 6 {
		t.Fatalf("Encoded() = %d after a lazy restore of 6 groups with state, want 6", got)
	}
	if got, want := dst.b.NonEmptyGroups(), src.b.NonEmptyGroups(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("NonEmptyGroups = %v, want %v", got, want)
	}
	for g := range groups {
		if got, want := dst.b.GroupLen(g), src.b.GroupLen(g); got != want {
			t.Fatalf("key group %d: GroupLen %d while encoded, want %d", g, got, want)
		}
		if got, want := dst.timers.Len(g), src.timers.Len(g); got != want {
			t.Fatalf("key group %d: %d timers, want %d: timers are restored at once", g, got, want)
		}
	}
	if got := dst.b.Encoded(); got != 6 {
		t.Fatalf("Encoded() = %d after counting keys, want 6: counting decodes nothing", got)
	}
	got := dst.snapshots(t, groups)
	for g := range groups {
		if !bytes.Equal(got[g], want[g]) {
			t.Fatalf("key group %d: snapshot of the encoded group differs from its blob", g)
		}
	}
	// A read of one table decodes the whole group.
	if v, ok := dst.counts.Get(1, "k-a"); !ok || v != 101 {
		t.Fatalf("counts of key group 1 key k-a = %d, %v; want 101, true", v, ok)
	}
	if got := dst.b.Encoded(); got != 5 {
		t.Fatalf("Encoded() = %d after a read of key group 1, want 5", got)
	}
	if got := dst.dump(1); got != src.dump(1) {
		t.Fatalf("key group 1 decoded on first read:\n%s\nwant\n%s", got, src.dump(1))
	}
	got = dst.materialised(t, groups)
	for g := range groups {
		if !bytes.Equal(got[g], want[g]) {
			t.Fatalf("key group %d decodes to other state than it was restored from:\n%s\nwant\n%s", g, dst.dump(g), src.dump(g))
		}
	}
}

// TestLazyRestoreServesGroupsWhileTheDecoderIsHeld: while the background
// decoder is held at one group, every other group is served: the task
// decodes each it needs itself, and its state is the restored one. Once
// released, the decoder stages the held group and InstallDecoded installs
// it; a write to a group the decoder staged sees the staged state.
func TestLazyRestoreServesGroupsWhileTheDecoderIsHeld(t *testing.T) {
	const groups = 8
	src := newFilledAllKinds(t, groups, "k")
	want := src.snapshots(t, groups)
	dst := lazyRestored(t, want)
	entered, release := holdDecoder(dst.b, 0)
	staged := make(chan struct{})
	if !dst.b.DecodeInBackground(func() { close(staged) }) {
		t.Fatal("DecodeInBackground started nothing with 8 groups encoded")
	}
	defer dst.b.StopDecoding()
	<-entered // the decoder holds at group 0
	for g := 1; g < groups; g++ {
		if err := dst.b.Materialise(g); err != nil {
			t.Fatal(err)
		}
		dst.counts.Put(g, "k-a", -1)
	}
	if got := dst.b.Encoded(); got != 1 {
		t.Fatalf("Encoded() = %d with the decoder held at group 0, want 1", got)
	}
	close(release)
	<-staged
	if got := dst.b.Encoded(); got != 1 {
		t.Fatalf("Encoded() = %d before InstallDecoded, want 1: the decoder installs nothing itself", got)
	}
	if err := dst.b.InstallDecoded(); err != nil {
		t.Fatal(err)
	}
	if got := dst.b.Encoded(); got != 0 {
		t.Fatalf("Encoded() = %d after InstallDecoded, want 0", got)
	}
	for g := range groups {
		v, _ := dst.counts.Get(g, "k-a")
		if wantV := map[bool]int64{true: 1, false: -1}[g == 0]; v != wantV {
			t.Fatalf("key group %d: counts k-a = %d, want %d", g, v, wantV)
		}
		dst.counts.Put(g, "k-a", int64(g)*100+1) // back to the restored value
		if got := dst.snapshots(t, groups)[g]; !bytes.Equal(got, want[g]) {
			t.Fatalf("key group %d is not the restored state:\n%s\nwant\n%s", g, dst.dump(g), src.dump(g))
		}
	}
}

// TestLazyRestoreWritesDuringBackgroundDecodeLoseNothing: the task adds to
// every key of every group right after the restore while the decoder
// decodes the same groups: each key ends up one above its restored value,
// whichever of the two decoded its group (run with -race).
func TestLazyRestoreWritesDuringBackgroundDecodeLoseNothing(t *testing.T) {
	const groups = 32
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	src := newTestTables(t, groups)
	for g := range groups {
		for k := range 50 {
			src.counts.Put(g, fmt.Sprintf("key-%d", k), int64(g*1000+k))
		}
	}
	blobs := make([][]byte, groups)
	for g := range groups {
		var err error
		if blobs[g], err = src.b.SnapshotGroup(g); err != nil {
			t.Fatal(err)
		}
	}
	dst := newTestTables(t, groups)
	if err := dst.b.RestoreGroupsLazy(groupBlobs(blobs, true, rng)); err != nil {
		t.Fatal(err)
	}
	staged := make(chan struct{})
	dst.b.DecodeInBackground(func() { close(staged) })
	defer dst.b.StopDecoding()
	for _, g := range rng.Perm(groups) {
		for k := range 50 {
			key := fmt.Sprintf("key-%d", k)
			v, ok := dst.counts.Get(g, key)
			if !ok {
				t.Fatalf("key group %d lost %s", g, key)
			}
			dst.counts.Put(g, key, v+1)
		}
	}
	<-staged
	if err := dst.b.InstallDecoded(); err != nil {
		t.Fatal(err)
	}
	for g := range groups {
		for k := range 50 {
			if v, _ := dst.counts.Get(g, fmt.Sprintf("key-%d", k)); v != int64(g*1000+k+1) {
				t.Fatalf("seed %d: key group %d key-%d = %d, want %d: an update was lost", seed, g, k, v, g*1000+k+1)
			}
		}
	}
}

// TestLazyRestoreSnapshotOfEncodedGroupsIsTheBarriers: an asynchronous
// snapshot taken while groups are still encoded (the decoder held) gives
// their restored bytes, although the task decodes them and changes their
// values in place (byte values included) before the snapshot is encoded;
// a restore of it gives the state at the barrier.
func TestLazyRestoreSnapshotOfEncodedGroupsIsTheBarriers(t *testing.T) {
	const groups = 6
	src := newFilledAllKinds(t, groups, "k")
	want := src.snapshots(t, groups)
	dst := lazyRestored(t, want)
	entered, release := holdDecoder(dst.b, 2)
	staged := make(chan struct{})
	dst.b.DecodeInBackground(func() { close(staged) })
	defer dst.b.StopDecoding()
	<-entered // groups 0 and 1 staged by the decoder, 2 held, the rest encoded
	snap, err := dst.b.SnapshotAsync(dst.b.NonEmptyGroups())
	if err != nil {
		t.Fatal(err)
	}
	var blobs map[int][]byte
	var encErr error
	encoded := make(chan struct{})
	go func() {
		defer close(encoded)
		blobs, encErr = snap.Encode()
	}()
	// The task changes every group after the barrier, in place too.
	for g := range groups {
		if g == 2 {
			continue // the decoder holds it
		}
		for k := range dst.bytes.Keys(g) {
			v, _ := dst.bytes.Get(g, k)
			for i := range v {
				v[i] = 'Z'
			}
			dst.counts.Put(g, k, 9)
		}
		dst.counts.Put(g, "new", 1)
	}
	close(release)
	<-encoded
	if encErr != nil {
		t.Fatal(encErr)
	}
	for g := range groups {
		if !bytes.Equal(blobs[g], want[g]) {
			t.Fatalf("key group %d: the snapshot holds state changed after the barrier", g)
		}
	}
	<-staged
	if err := dst.b.InstallDecoded(); err != nil {
		t.Fatal(err)
	}
	back := lazyRestored(t, want)
	got := back.materialised(t, groups)
	for g := range groups {
		if !bytes.Equal(got[g], want[g]) {
			t.Fatalf("key group %d restored from the snapshot differs", g)
		}
	}
}

// TestLazyRestoreIncrementalRefersToEncodedGroups: with changes tracked, the
// first snapshot after a lazy restore writes the encoded groups whole, from
// their bytes; once it is confirmed, the next writes a group still encoded
// as a delta that names no value, map or list table (unchanged: the chain
// refers to the section stored), and whole section + delta restore the
// same state.
func TestLazyRestoreIncrementalRefersToEncodedGroups(t *testing.T) {
	const groups = 4
	src := newFilledAllKinds(t, groups, "k")
	want := src.snapshots(t, groups)
	dst := newAllKinds(t, groups)
	dst.b.TrackChanges()
	if err := dst.b.RestoreGroupsLazy(groupBlobs(want, true, rand.New(rand.NewPCG(8, 9)))); err != nil {
		t.Fatal(err)
	}
	all := func(int) bool { return true }
	s1, err := dst.b.SnapshotAsyncAt(1, dst.b.NonEmptyGroups())
	if err != nil {
		t.Fatal(err)
	}
	b1, d1, err := s1.EncodeIncremental(all)
	if err != nil {
		t.Fatal(err)
	}
	for g := range groups {
		if d1[g] || !bytes.Equal(b1[g], want[g]) {
			t.Fatalf("key group %d: the first snapshot after the restore is not its restored blob (delta %v)", g, d1[g])
		}
	}
	dst.b.Confirm(1)
	dst.counts.Put(1, "k-a", 7) // group 1 decoded and changed; the others stay encoded
	s2, err := dst.b.SnapshotAsyncAt(2, dst.b.NonEmptyGroups())
	if err != nil {
		t.Fatal(err)
	}
	b2, d2, err := s2.EncodeIncremental(all)
	if err != nil {
		t.Fatal(err)
	}
	if got := dst.b.Encoded(); got != groups-1 {
		t.Fatalf("Encoded() = %d, want %d", got, groups-1)
	}
	for g := range groups {
		if !d2[g] {
			t.Fatalf("key group %d written whole by the second snapshot, want a delta", g)
		}
		_, entries, err := decodeBlob(b2[g], blobCRC{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, en := range entries {
			names = append(names, en.name)
		}
		wantNames := "[timers]" // written whole in every delta
		if g == 1 {
			wantNames = "[counts timers]"
		}
		if fmt.Sprint(names) != wantNames {
			t.Fatalf("key group %d: the delta names tables %v, want %s", g, names, wantNames)
		}
	}
	back := newAllKinds(t, groups)
	for g := range groups {
		if err := back.b.RestoreGroup(g, b1[g]); err != nil {
			t.Fatal(err)
		}
		if err := back.b.RestoreGroup(g, b2[g]); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := back.counts.Get(1, "k-a"); v != 7 {
		t.Fatalf("chain of key group 1 restores counts k-a = %d, want 7", v)
	}
	back.counts.Put(1, "k-a", 101)
	got := back.snapshots(t, groups)
	for g := range groups {
		if !bytes.Equal(got[g], want[g]) {
			t.Fatalf("key group %d: whole + delta restore to other state:\n%s\nwant\n%s", g, back.dump(g), src.dump(g))
		}
	}
}

// TestLazyRestoreDropAndReplaceForgetTheEncoding: a rescale's hand-off of a
// group still encoded gives its bytes and drops it without decoding; a
// group restored again (eagerly) replaces the encoded one; a table's own
// DropGroup decodes the group's other tables first.
func TestLazyRestoreDropAndReplaceForgetTheEncoding(t *testing.T) {
	const groups = 4
	src := newFilledAllKinds(t, groups, "k")
	want := src.snapshots(t, groups)
	other := newFilledAllKinds(t, groups, "other").snapshots(t, groups)
	dst := lazyRestored(t, want)
	blob, err := dst.b.SnapshotGroup(0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(blob, want[0]) {
		t.Fatal("hand-off of encoded key group 0 differs from its blob")
	}
	dst.b.DropGroup(0)
	if dst.b.GroupLen(0) != 0 || dst.b.Encoded() != groups-1 {
		t.Fatalf("after DropGroup(0): GroupLen %d, Encoded %d; want 0, %d", dst.b.GroupLen(0), dst.b.Encoded(), groups-1)
	}
	if err := dst.b.RestoreGroup(1, other[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := dst.b.SnapshotGroup(1); !bytes.Equal(got, other[1]) {
		t.Fatal("key group 1 restored again over its encoding is not the new state")
	}
	dst.counts.DropGroup(2)
	if dst.b.Encoded() != 1 {
		t.Fatalf("Encoded() = %d after a table dropped key group 2, want 1 (group 3)", dst.b.Encoded())
	}
	if dst.counts.Len(2) != 0 || dst.seen.Len(2) != src.seen.Len(2) {
		t.Fatalf("key group 2 after counts dropped it: counts %d, seen %d; want 0, %d", dst.counts.Len(2), dst.seen.Len(2), src.seen.Len(2))
	}
}

// TestLazyRestoreDecodeErrorNamesTheGroup: bytes that pass every check but
// do not decode into the registered type (a table's value type changed)
// fail Materialise, the background decoder's InstallDecoded and a table
// access with an error naming the key group and the table, every time.
func TestLazyRestoreDecodeErrorNamesTheGroup(t *testing.T) {
	const groups = 2
	src := newTestTables(t, groups)
	src.fill(1, "k")
	blob, err := src.b.SnapshotGroup(1)
	if err != nil {
		t.Fatal(err)
	}
	newDst := func() (*Backend, *ValueTable[string]) {
		b := NewBackend(groups)
		counts := NewValueTable[string]("counts", groups) // was int64
		for _, tb := range []Table{counts, NewMapTable[string, bool]("seen", groups), NewListTable[string]("buf", groups)} {
			if _, err := b.Register(tb); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.RestoreGroupsLazy([]GroupBlob{{Group: 1, Blob: bytes.Clone(blob)}}); err != nil {
			t.Fatalf("lazy restore checks no value: %v", err)
		}
		return b, counts
	}
	check := func(how string, err error) {
		t.Helper()
		if err == nil || !errors.Is(err, ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte(`key group 1 table "counts"`)) {
			t.Fatalf("%s: error %v, want ErrCorrupt naming key group 1 table counts", how, err)
		}
	}
	b, _ := newDst()
	check("Materialise", b.Materialise(1))
	check("Materialise again", b.Materialise(1))

	b, _ = newDst()
	done := make(chan struct{})
	b.DecodeInBackground(func() { close(done) })
	<-done
	check("InstallDecoded", b.InstallDecoded())

	_, counts := newDst()
	func() {
		defer func() {
			r := recover()
			err, _ := r.(error)
			check("Get", err)
		}()
		counts.Get(1, "k-a")
	}()
}

// TestLazyRestoreStopDecodingWaitsForTheDecoder: StopDecoding ends the
// decoder after the group it is decoding and waits for it; the groups it
// did not reach stay encoded and decode on use.
func TestLazyRestoreStopDecodingWaitsForTheDecoder(t *testing.T) {
	const groups = 4
	src := newFilledAllKinds(t, groups, "k")
	want := src.snapshots(t, groups)
	dst := lazyRestored(t, want)
	entered, release := holdDecoder(dst.b, 1)
	dst.b.DecodeInBackground(func() { t.Error("staged called by a stopped decoder") })
	<-entered
	w := dst.b.lazy.worker
	var stopped sync.WaitGroup
	stopped.Add(1)
	go func() {
		defer stopped.Done()
		dst.b.StopDecoding()
	}()
	<-w.stop // asked to stop while it decodes group 1
	close(release)
	stopped.Wait()
	if got := dst.b.Encoded(); got != groups {
		t.Fatalf("Encoded() = %d after the stop, want %d (staged groups are installed by the task only)", got, groups)
	}
	got := dst.materialised(t, groups)
	for g := range groups {
		if !bytes.Equal(got[g], want[g]) {
			t.Fatalf("key group %d differs", g)
		}
	}
}
