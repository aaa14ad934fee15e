package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// TestReadChannelStateAcrossCheckpoints reads a channel whose state is a
// run of buffers checkpoint 1 stored followed by buffers checkpoint 2
// wrote: the buffers come back in order, numbered from 1, with their
// rounds; a byte flipped in checkpoint 1's run fails the read naming the
// checkpoint restored, the input, the part and the checkpoint that wrote
// it.
func TestReadChannelStateAcrossCheckpoints(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	codec := plan.MsgpackCodec[int64]{}
	frames := func(vals ...int64) []byte {
		var out []byte
		for _, v := range vals {
			if out, err = inflight.AppendFrame(out, codec, inflight.Batch{Records: plan.Records[int64]{v}}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	// Checkpoint 1 stored buffers 10, 11, 12; checkpoint 2 refers to 11 and
	// 12 (still queued) and writes 13.
	one := append([]byte("state|"), frames(10, 11, 12)...)
	ref1, err := st.PutBlob(ctx, "j", 1, "mid/0/state", one)
	if err != nil {
		t.Fatal(err)
	}
	skip := int64(len("state|") + len(frames(10)))
	two := frames(13)
	ref2, err := st.PutBlob(ctx, "j", 2, "mid/0/state", two)
	if err != nil {
		t.Fatal(err)
	}
	cb := store.ChannelBlob{Input: 1, Buffers: 3, Records: 3, Blob: store.Section(ref2, 0, two),
		Rounds: []store.ChannelRound{{Checkpoint: 1, Buffers: 1}, {Checkpoint: 2, Buffers: 2}},
		Parts: []store.ChannelPart{{Checkpoint: 1, Ref: store.Section(ref1, skip, one[skip:]), Buffers: 2},
			{Checkpoint: 2, Ref: store.Section(ref2, 0, two), Buffers: 1}}}
	m := &store.Manifest{Job: "j", CheckpointID: 2}
	var locs [][]frameLoc
	read := func() ([][]inflight.Batch, error) {
		chans, l, _, err := readChannelState(ctx, st, m, "mid", 0, []store.ChannelBlob{cb}, nil,
			func(store.ChannelBlob) plan.BatchCodec { return codec })
		locs = l
		return chans, err
	}
	chans, err := read()
	if err != nil {
		t.Fatal(err)
	}
	// Where each buffer is stored, for the checkpoints after the restore.
	f11, f12 := int64(len(frames(11))), int64(len(frames(12)))
	wantLocs := []frameLoc{
		{ckpt: 1, ref: store.Section(ref1, skip, one[skip:skip+f11])},
		{ckpt: 1, ref: store.Section(ref1, skip+f11, one[skip+f11:skip+f11+f12])},
		{ckpt: 2, ref: store.Section(ref2, 0, two)},
	}
	if !slices.Equal(locs[0], wantLocs) {
		t.Fatalf("stored at %+v, want %+v", locs[0], wantLocs)
	}
	var got []string
	for _, b := range chans[0] {
		v, _ := plan.RecordsOf[int64](b.Records)
		got = append(got, fmt.Sprintf("%d:%d@%d", b.Seq, v[0], b.Round))
	}
	if want := []string{"1:11@1", "2:12@2", "3:13@2"}; !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	path := filepath.Join(dir, "j", fmt.Sprintf("chk-%020d", 1), "mid", "0", "state")
	one[skip+2] ^= 0x20
	if err := os.WriteFile(path, one, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = read()
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("corrupt part: %v, want ErrCorrupt", err)
	}
	for _, want := range []string{"restore checkpoint 2", "mid[0] channel state of input 1", "part 1 of 2, written by checkpoint 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}
