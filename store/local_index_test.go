package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/logbuf"
)

// countingStore counts the sections read from a real store.
type countingStore struct {
	Store
	mu       sync.Mutex
	sections int
}

func (c *countingStore) GetSections(ctx context.Context, job string, ckpt uint64, refs []BlobRef) ([][]byte, error) {
	c.mu.Lock()
	c.sections += len(refs)
	c.mu.Unlock()
	return GetSections(ctx, c.Store, job, ckpt, refs)
}

func (c *countingStore) read() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sections
}

// taskState is one task's checkpoint blob as a task lays it out: key groups
// then channel state, each a section of one blob.
type taskState struct {
	snap TaskSnapshot
	secs []SectionRequest
	want [][]byte
	data []byte
}

// putTaskState stores, through st, a blob of instance inst of operator op
// holding key groups groups (each of groupBytes bytes) and channels channel
// sections, records its sections if st is a SnapshotRecorder, and returns
// what a restore asks for.
func putTaskState(t *testing.T, st Store, job string, ckpt uint64, op string, inst int, groups []int, groupBytes, channels int) taskState {
	t.Helper()
	var ts taskState
	var spans [][2]int64
	for _, g := range groups {
		part := bytes.Repeat([]byte{byte(g + 1)}, groupBytes)
		copy(part, fmt.Sprintf("%s kg %d ckpt %d", op, g, ckpt))
		spans = append(spans, [2]int64{int64(len(ts.data)), int64(len(part))})
		ts.data = append(ts.data, part...)
	}
	for c := 0; c < channels; c++ {
		part := []byte(fmt.Sprintf("channel %d of %s[%d] buffers", c, op, inst))
		spans = append(spans, [2]int64{int64(len(ts.data)), int64(len(part))})
		ts.data = append(ts.data, part...)
	}
	name := fmt.Sprintf("%s/%d/state", op, inst)
	whole, err := st.PutBlob(testCtx(t), job, ckpt, name, ts.data)
	if err != nil {
		t.Fatal(err)
	}
	ts.snap = TaskSnapshot{Operator: op, Instance: inst, KeyGroups: map[int]BlobRef{}, SourceOffset: -1}
	for i, s := range spans {
		ref := Section(whole, s[0], ts.data[s[0]:s[0]+s[1]])
		var key SectionKey
		if i < len(groups) {
			key = KeyGroupKey(op, groups[i])
			ts.snap.KeyGroups[groups[i]] = ref
		} else {
			in := i - len(groups)
			key = ChannelKey(op, inst, in)
			ts.snap.Channels = append(ts.snap.Channels, ChannelBlob{Input: in, Blob: ref, Buffers: 1, Records: 1})
		}
		ts.secs = append(ts.secs, SectionRequest{Key: key, Ref: ref})
		ts.want = append(ts.want, ts.data[s[0]:s[0]+s[1]])
	}
	if r, ok := st.(SnapshotRecorder); ok {
		if err := r.RecordSnapshot(testCtx(t), job, ckpt, ts.snap); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// newLoggedMirror is a Mirror over a real Local primary (counted) and a real
// Local copy, logging into the returned buffer.
func newLoggedMirror(t *testing.T) (*Mirror, *countingStore, *Local, *logbuf.Buffer) {
	t.Helper()
	p, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	primary := &countingStore{Store: p}
	return &Mirror{Primary: primary, Local: local, Log: zerolog.New(logs).With().Str("node", "n1").Logger()}, primary, local, logs
}

func flipLocalByte(t *testing.T, local *Local, job string, ckpt uint64, name string, off int64) {
	t.Helper()
	flipFile(t, filepath.Join(local.Dir(), job, checkpointDir(ckpt), filepath.FromSlash(name)), int(off))
}

func checkSections(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d sections, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("section %d differs: %q…, want %q…", i, got[i][:min(16, len(got[i]))], want[i][:min(16, len(want[i]))])
		}
	}
}

func checkStats(t *testing.T, got ReadStats, localSecs, remoteSecs int, localBytes, remoteBytes int64) {
	t.Helper()
	if got.LocalSections != localSecs || got.RemoteSections != remoteSecs || got.LocalBytes != localBytes || got.RemoteBytes != remoteBytes {
		t.Fatalf("read stats %+v, want local %d sections %d bytes, remote %d sections %d bytes",
			got, localSecs, localBytes, remoteSecs, remoteBytes)
	}
}

// readOneRemotely reads ts's sections of checkpoint ckpt through m and
// checks that they are the checkpoint's and that only section damaged came
// from the checkpoint store.
func readOneRemotely(t *testing.T, m *Mirror, primary *countingStore, ckpt uint64, ts taskState, damaged int) [][]byte {
	t.Helper()
	got, stats, err := ReadSections(testCtx(t), m, "j", ckpt, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, ts.want)
	size := ts.secs[damaged].Ref.Size
	checkStats(t, stats, len(ts.secs)-1, 1, sumSizes(ts.secs)-size, size)
	if n := primary.read(); n != 1 {
		t.Fatalf("%d sections read from the checkpoint store, want 1", n)
	}
	return got
}

func sumSizes(secs []SectionRequest) int64 {
	var n int64
	for _, s := range secs {
		n += s.Ref.Size
	}
	return n
}

// TestMirrorReadsAllSectionsLocallyAlignedAndUnaligned: key groups and
// channel-state sections are all served from the local copy, none from the
// checkpoint store.
func TestMirrorReadsAllSectionsLocallyAlignedAndUnaligned(t *testing.T) {
	for _, channels := range []int{0, 3} { // aligned: no channel state; unaligned: channel state
		t.Run(fmt.Sprintf("channels=%d", channels), func(t *testing.T) {
			m, primary, _, _ := newLoggedMirror(t)
			ts := putTaskState(t, m, "j", 4, "count", 1, []int{0, 1, 2, 3, 4, 5, 6, 7}, 512, channels)
			got, stats, err := ReadSections(testCtx(t), m, "j", 4, ts.secs)
			if err != nil {
				t.Fatal(err)
			}
			checkSections(t, got, ts.want)
			checkStats(t, stats, len(ts.secs), 0, sumSizes(ts.secs), 0)
			if n := primary.read(); n != 0 {
				t.Fatalf("%d sections read from the checkpoint store, want 0", n)
			}
		})
	}
}

// TestMirrorReadsOnlyTheDamagedSectionRemotely: one byte flipped in one
// local key-group section sends only that section to the checkpoint store;
// the log names node, job, checkpoint, operator and key group; the bytes
// returned are the checkpoint's.
func TestMirrorReadsOnlyTheDamagedSectionRemotely(t *testing.T) {
	m, primary, local, logs := newLoggedMirror(t)
	groups := []int{10, 11, 12, 13, 14, 15}
	ts := putTaskState(t, m, "j", 7, "count", 2, groups, 1024, 2)
	damaged := 3 // key group 13
	flipLocalByte(t, local, "j", 7, "count/2/state", ts.secs[damaged].Ref.Offset+100)
	readOneRemotely(t, m, primary, 7, ts, damaged)
	lines := logs.Lines(`"message":"local section damaged: reading it from the checkpoint store"`)
	if len(lines) != 1 {
		t.Fatalf("%d damaged-section log lines, want 1; log:\n%s", len(lines), logs)
	}
	for _, f := range []string{`"node":"n1"`, `"job":"j"`, `"checkpoint":7`, `"operator":"count"`, `"key_group":13`} {
		if !strings.Contains(lines[0], f) {
			t.Fatalf("log line %s lacks %s", lines[0], f)
		}
	}
}

// TestMirrorGetSectionsFallsBackPerSection: reading sections by blob
// reference (as checkpoint verification does) also goes to the checkpoint
// store only for the damaged section, not for the whole blob.
func TestMirrorGetSectionsFallsBackPerSection(t *testing.T) {
	m, primary, local, _ := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 2, "count", 0, []int{0, 1, 2, 3}, 256, 1)
	flipLocalByte(t, local, "j", 2, "count/0/state", ts.secs[1].Ref.Offset)
	got, err := GetSections(testCtx(t), m, "j", 2, refsOf(ts.secs))
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, ts.want)
	if n := primary.read(); n != 1 {
		t.Fatalf("%d sections read from the checkpoint store, want 1 (the damaged one)", n)
	}
}

// TestMirrorLocalSectionsFoundByKeyAfterRescale: a key group written by one
// instance is found locally by (operator, key group) when another instance
// at another parallelism restores it.
func TestMirrorLocalSectionsFoundByKeyAfterRescale(t *testing.T) {
	m, primary, _, _ := newLoggedMirror(t)
	a := putTaskState(t, m, "j", 3, "count", 0, []int{0, 1, 2, 3}, 128, 0)
	b := putTaskState(t, m, "j", 3, "count", 1, []int{4, 5, 6, 7}, 128, 0)
	// New instance 0 of 3 owns groups 2..4: two from old instance 0, one from 1.
	secs := []SectionRequest{a.secs[2], a.secs[3], b.secs[0]}
	got, stats, err := ReadSections(testCtx(t), m, "j", 3, secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, [][]byte{a.want[2], a.want[3], b.want[0]})
	checkStats(t, stats, 3, 0, sumSizes(secs), 0)
	if primary.read() != 0 {
		t.Fatal("read from the checkpoint store")
	}
}

// TestMirrorWithoutIndexReadsRemotely: no index (state written by a node
// that did not index it, or lost) means every section comes from the
// checkpoint store, without an error or a warning.
func TestMirrorWithoutIndexReadsRemotely(t *testing.T) {
	m, primary, local, logs := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 5, "count", 0, []int{0, 1, 2}, 64, 1)
	if err := os.Remove(local.indexPath("j", 5)); err != nil {
		t.Fatal(err)
	}
	got, stats, err := ReadSections(testCtx(t), m, "j", 5, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, ts.want)
	checkStats(t, stats, 0, len(ts.secs), 0, sumSizes(ts.secs))
	if primary.read() != len(ts.secs) {
		t.Fatalf("%d sections from the checkpoint store, want %d", primary.read(), len(ts.secs))
	}
	if w := logs.Lines(`"level":"warn"`); len(w) != 0 {
		t.Fatalf("warnings for a missing index: %v", w)
	}
}

// TestMirrorIgnoresDamagedIndex: an index that fails its checksum is logged
// and ignored; everything is read remotely; recording a new task replaces it.
func TestMirrorIgnoresDamagedIndex(t *testing.T) {
	m, _, local, logs := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 6, "count", 0, []int{0, 1, 2}, 64, 0)
	p := local.indexPath("j", 6)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-2] ^= 1
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, stats, err := ReadSections(testCtx(t), m, "j", 6, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, ts.want)
	checkStats(t, stats, 0, len(ts.secs), 0, sumSizes(ts.secs))
	lines := logs.Lines(`"message":"local index damaged: ignoring it, reading the checkpoint store"`, `"job":"j"`, `"checkpoint":6`)
	if len(lines) != 1 {
		t.Fatalf("%d damaged-index log lines, want 1; log:\n%s", len(lines), logs)
	}
	// A later task's record replaces the damaged index.
	ts2 := putTaskState(t, m, "j", 6, "count", 1, []int{3}, 64, 0)
	if _, stats, err = ReadSections(testCtx(t), m, "j", 6, ts2.secs); err != nil || stats.LocalSections != 1 {
		t.Fatalf("after replacing the index: %+v, %v", stats, err)
	}
}

// TestMirrorSkipsLocalSectionOfOtherContent: an index entry whose checksum is
// not the manifest's (another attempt of the same checkpoint) is not used.
func TestMirrorSkipsLocalSectionOfOtherContent(t *testing.T) {
	m, primary, _, logs := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 8, "count", 0, []int{0, 1}, 64, 0)
	// The primary's (and manifest's) version of the blob differs.
	other := append([]byte(nil), ts.data...)
	other[3] ^= 1
	whole, err := primary.Store.PutBlob(testCtx(t), "j", 8, "count/0/state", other)
	if err != nil {
		t.Fatal(err)
	}
	secs := append([]SectionRequest(nil), ts.secs...)
	secs[0].Ref = Section(whole, 0, other[:64])
	got, stats, err := ReadSections(testCtx(t), m, "j", 8, secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, [][]byte{other[:64], ts.want[1]})
	checkStats(t, stats, 1, 1, 64, 64)
	if len(logs.Lines(`"key_group":0`, "local section is not the checkpoint's")) != 1 {
		t.Fatalf("log:\n%s", logs)
	}
}

// TestMirrorReadSectionsErrorNamesTheSection: a section damaged in both
// copies fails with a *SectionError whose index is into the request.
func TestMirrorReadSectionsErrorNamesTheSection(t *testing.T) {
	m, primary, local, _ := newLoggedMirror(t)
	ts := putTaskState(t, m, "j", 9, "count", 0, []int{0, 1, 2}, 64, 0)
	flipLocalByte(t, local, "j", 9, "count/0/state", ts.secs[2].Ref.Offset)
	pp := filepath.Join(primary.Store.(*Local).Dir(), "j", checkpointDir(9), "count", "0", "state")
	data, _ := os.ReadFile(pp)
	data[ts.secs[2].Ref.Offset] ^= 1
	if err := os.WriteFile(pp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := ReadSections(testCtx(t), m, "j", 9, ts.secs)
	var se *SectionError
	if !errors.As(err, &se) || se.Index != 2 || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("error %v, want a corrupt *SectionError at index 2", err)
	}
}

// TestReadSectionsWithoutLocalCopyCountsRemote: a store with no local copy
// serves everything, counted as remote.
func TestReadSectionsWithoutLocalCopyCountsRemote(t *testing.T) {
	st, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts := putTaskState(t, st, "j", 1, "count", 0, []int{0, 1}, 32, 1)
	got, stats, err := ReadSections(testCtx(t), st, "j", 1, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, ts.want)
	checkStats(t, stats, 0, 3, 0, sumSizes(ts.secs))
}

// TestMirrorJetStreamOnlyDamagedSectionRemote: with the real JetStream
// object store as the primary, one damaged local section is fetched from
// JetStream and the rest stay local.
func TestMirrorJetStreamOnlyDamagedSectionRemote(t *testing.T) {
	js := startJetStream(t)
	primary, err := NewJetStream(js, WithStorage(jetstream.MemoryStorage), WithBucketPrefix("mirror-"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := &logbuf.Buffer{}
	m := &Mirror{Primary: primary, Local: local, Log: zerolog.New(logs)}
	t.Cleanup(func() { m.Close() })
	ts := putTaskState(t, m, "j", 11, "count", 0, []int{0, 1, 2, 3, 4}, 4096, 2)
	flipLocalByte(t, local, "j", 11, "count/0/state", ts.secs[6].Ref.Offset) // channel state of input 1
	got, stats, err := ReadSections(testCtx(t), m, "j", 11, ts.secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, ts.want)
	size := ts.secs[6].Ref.Size
	checkStats(t, stats, len(ts.secs)-1, 1, sumSizes(ts.secs)-size, size)
	if len(logs.Lines("local section damaged", `"instance":0`, `"input":1`)) != 1 {
		t.Fatalf("log:\n%s", logs)
	}
}

// TestLocalIndexDecodeRejectsDamage: every flipped byte and every truncation
// of an index is ErrCorrupt; the intact one decodes to what was written.
func TestLocalIndexDecodeRejectsDamage(t *testing.T) {
	x := &localIndex{Job: "j", Checkpoint: 3}
	x.merge([]indexEntry{
		{Key: KeyGroupKey("count", 5), Ref: BlobRef{Name: "count/0/state", Size: 10, CRC32C: 1, Offset: 20, Whole: 40}},
		{Key: ChannelKey("count", 0, 1), Ref: BlobRef{Name: "count/0/state", Size: 10, CRC32C: 2, Offset: 30, Whole: 40}},
	})
	data, err := encodeLocalIndex(x)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeLocalIndex("j", 3, data)
	if err != nil || len(back.Sections) != 2 {
		t.Fatalf("decode: %+v, %v", back, err)
	}
	if _, err := decodeLocalIndex("j", 4, data); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("index of another checkpoint: %v, want ErrCorrupt", err)
	}
	for i := range data {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x10
		if _, err := decodeLocalIndex("j", 3, bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, err := decodeLocalIndex("j", 3, data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d bytes: %v, want ErrCorrupt", n, err)
		}
	}
}

// FuzzDecodeLocalIndex: arbitrary bytes never panic; what decodes is sorted
// and places every section inside its blob.
func FuzzDecodeLocalIndex(f *testing.F) {
	x := &localIndex{Job: "j", Checkpoint: 1}
	x.merge([]indexEntry{{Key: KeyGroupKey("op", 1), Ref: BlobRef{Name: "op/0/state", Size: 1, Whole: 2}}})
	good, _ := encodeLocalIndex(x)
	f.Add(good)
	f.Add(good[:frameHeaderSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeLocalIndex("j", 1, data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrInvalidName) {
				t.Fatalf("error %v wraps neither ErrCorrupt nor ErrInvalidName", err)
			}
			return
		}
		for i, e := range got.Sections {
			if e.Ref.Whole > 0 && e.Ref.Offset+e.Ref.Size > e.Ref.Whole {
				t.Fatalf("entry %d outside its blob", i)
			}
		}
	})
}

func flipFile(t *testing.T, p string, off int) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	data[off] ^= 0x08
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMirrorsSharingALocalCopyIndexEveryTask: the Mirrors of one node (one
// per job part, all over the same local copy) record tasks of the same
// checkpoint concurrently; the index ends up placing every task's sections.
func TestMirrorsSharingALocalCopyIndexEveryTask(t *testing.T) {
	m1, primary, local, _ := newLoggedMirror(t)
	m2 := &Mirror{Primary: primary, Local: local, Log: zerolog.Nop()}
	const tasks = 16
	states := make([]taskState, tasks)
	for i := range states {
		// Stored through m1 without recording: the recording races below.
		states[i] = putTaskState(t, struct{ Store }{m1}, "j", 1, "count", i, []int{2 * i, 2*i + 1}, 32, 1)
	}
	errs := make([]error, tasks)
	var wg sync.WaitGroup
	for i := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := m1
			if i%2 == 1 {
				m = m2
			}
			errs[i] = m.RecordSnapshot(context.Background(), "j", 1, states[i].snap)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var secs []SectionRequest
	for _, ts := range states {
		secs = append(secs, ts.secs...)
	}
	_, stats, err := ReadSections(testCtx(t), m1, "j", 1, secs)
	if err != nil {
		t.Fatal(err)
	}
	if stats.LocalSections != len(secs) {
		t.Fatalf("%d of %d sections local: the index lost tasks", stats.LocalSections, len(secs))
	}
}

// TestMirrorIndexedButMissingBlobIsLoggedAndReadRemotely: a blob file the
// index places but that is gone is logged and its sections read remotely.
func TestMirrorIndexedButMissingBlobIsLoggedAndReadRemotely(t *testing.T) {
	m, _, local, logs := newLoggedMirror(t)
	a := putTaskState(t, m, "j", 2, "count", 0, []int{0, 1}, 32, 0)
	b := putTaskState(t, m, "j", 2, "count", 1, []int{2}, 32, 0)
	if err := os.Remove(filepath.Join(local.Dir(), "j", checkpointDir(2), "count", "0", "state")); err != nil {
		t.Fatal(err)
	}
	secs := append(append([]SectionRequest(nil), a.secs...), b.secs...)
	got, stats, err := ReadSections(testCtx(t), m, "j", 2, secs)
	if err != nil {
		t.Fatal(err)
	}
	checkSections(t, got, append(append([][]byte(nil), a.want...), b.want...))
	checkStats(t, stats, 1, 2, 32, 64)
	if n := len(logs.Lines("local section damaged", `"key_group"`)); n != 2 {
		t.Fatalf("%d log lines for the missing sections, want 2:\n%s", n, logs)
	}
}
