package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// commitSectioned commits checkpoint ckpt of job as a task writes one:
// task count[1] with key groups 5 and 9 as sections of one blob and the
// channel state of input 0, and task src[0] with its operator state. Every
// ref names stored bytes, so the checkpoint verifies.
func commitSectioned(t *testing.T, s Store, job string, ckpt uint64) *Manifest {
	t.Helper()
	ctx := testCtx(t)
	g5, g9 := []byte("state of key group five"), []byte("nine")
	whole, err := s.PutBlob(ctx, job, ckpt, "count/1/state", append(slices.Clone(g5), g9...))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.PutBlob(ctx, job, ckpt, "count/1/in-0", []byte("in-flight buffers"))
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.PutBlob(ctx, job, ckpt, "src/0/offset", []byte("offset 12"))
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Job: job, CheckpointID: ckpt, Fingerprint: "fp", MaxParallelism: 16,
		Parallelism: map[string]int{"count": 2, "src": 1}, KeyGroups: map[string][]int32{"count": make([]int32, 16)},
		Tasks: []TaskSnapshot{
			{Operator: "count", Instance: 1, SourceOffset: -1,
				KeyGroups: map[int]BlobRef{5: Section(whole, 0, g5), 9: Section(whole, int64(len(g5)), g9)},
				Channels:  []ChannelBlob{{Input: 0, Blob: ch, Buffers: 1, Records: 3}}},
			{Operator: "src", Instance: 0, OperatorState: &op, SourceOffset: 12},
		},
		Mode: "aligned"}
	if err := s.CommitManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// runVerifyAndSweep checks VerifyCheckpoint and DeleteUncommitted against a
// store; runConformance runs it for every implementation.
func runVerifyAndSweep(t *testing.T, h harness, newStore func(*testing.T) Store) {
	t.Run("VerifyCheckpointIntact", func(t *testing.T) {
		s := newStore(t)
		m := commitSectioned(t, s, "job1", 4)
		if err := VerifyCheckpoint(testCtx(t), s, m); err != nil {
			t.Fatalf("VerifyCheckpoint of an intact checkpoint: %v", err)
		}
	})

	t.Run("VerifyCheckpointNamesTheBrokenSection", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			blob   string
			breakB func([]byte) []byte
			want   []string
			is     error
		}{
			// Byte 24 lies in key group 9's section (group 5 is bytes 0-22).
			{"flipped key group", "count/1/state", func(b []byte) []byte { b[24] ^= 1; return b },
				[]string{"checkpoint 4", "task count[1]", "key group 9", "crc32c"}, ErrCorrupt},
			{"truncated channel state", "count/1/in-0", func(b []byte) []byte { return b[:3] },
				[]string{"checkpoint 4", "task count[1]", "channel state of input 0", "size"}, ErrCorrupt},
			{"flipped operator state", "src/0/offset", func(b []byte) []byte { b[0] ^= 0x20; return b },
				[]string{"checkpoint 4", "task src[0]", "operator state"}, ErrCorrupt},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t)
				m := commitSectioned(t, s, "job1", 4)
				h.rawWrite(t, s, "job1", 4, tc.blob, tc.breakB(h.rawRead(t, s, "job1", 4, tc.blob)))
				err := VerifyCheckpoint(testCtx(t), s, m)
				wantErrIs(t, "VerifyCheckpoint", err, tc.is)
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error %q does not name %q", err, w)
					}
				}
			})
		}
	})

	t.Run("VerifyCheckpointExceptHeldKeyGroups", func(t *testing.T) {
		// Key group 9's section is corrupt in the store. Held by a node,
		// it is not read (its restore there verifies it), nor the rest of
		// its blob; the other blobs are.
		s := newStore(t)
		m := commitSectioned(t, s, "job1", 4)
		h.rawWrite(t, s, "job1", 4, "count/1/state", func(b []byte) []byte { b[24] ^= 1; return b }(h.rawRead(t, s, "job1", 4, "count/1/state")))
		v, err := VerifyCheckpointExcept(testCtx(t), s, m, func(op string, g int) bool { return op == "count" && g == 9 })
		if err != nil {
			t.Fatalf("VerifyCheckpointExcept, key group 9 held: %v", err)
		}
		// Key group 5 lies in the same blob: that node's copy holds it too.
		if v.HeldSections != 2 || v.HeldBytes != int64(len("nine")+len("state of key group five")) || v.Sections != 2 ||
			v.Bytes != int64(len("in-flight buffers")+len("offset 12")) {
			t.Fatalf("verified %+v, want the channel and operator state read and key groups 5 and 9 (one blob, 27 bytes) left out", v)
		}
		if v, err := VerifyCheckpointExcept(testCtx(t), s, m, func(string, int) bool { return false }); !errors.Is(err, ErrCorrupt) || v.HeldSections != 0 {
			t.Fatalf("VerifyCheckpointExcept, nothing held: %+v, %v; want the corruption found", v, err)
		}
	})

	t.Run("VerifyCheckpointReplayRounds", func(t *testing.T) {
		s := newStore(t)
		m := commitSectioned(t, s, "job1", 4)
		cb := &m.Tasks[0].Channels[0]
		cb.Buffers = 3
		for _, tc := range []struct {
			rounds []ChannelRound
			ok     bool
		}{
			{[]ChannelRound{{Checkpoint: 2, Buffers: cb.Buffers - 1}, {Checkpoint: 4, Buffers: 1}}, true},
			{[]ChannelRound{{Checkpoint: 2, Buffers: cb.Buffers}}, true},
			{[]ChannelRound{{Checkpoint: 2, Buffers: cb.Buffers - 1}}, false},
			{[]ChannelRound{{Checkpoint: 5, Buffers: cb.Buffers}}, false},
			{[]ChannelRound{{Checkpoint: 0, Buffers: cb.Buffers}}, false},
			{[]ChannelRound{{Checkpoint: 2, Buffers: 0}, {Checkpoint: 4, Buffers: cb.Buffers}}, false},
		} {
			cb.Rounds = tc.rounds
			err := VerifyCheckpoint(testCtx(t), s, m)
			if tc.ok && err != nil {
				t.Fatalf("rounds %v: %v", tc.rounds, err)
			}
			if !tc.ok {
				wantErrIs(t, fmt.Sprintf("VerifyCheckpoint with rounds %v", tc.rounds), err, ErrCorrupt)
				if !strings.Contains(err.Error(), "channel state of input") {
					t.Fatalf("error %q does not name the channel", err)
				}
			}
		}
	})

	t.Run("VerifyCheckpointMissingBlob", func(t *testing.T) {
		s := newStore(t)
		m := commitSectioned(t, s, "job1", 4)
		m.Tasks[1].OperatorState = &BlobRef{Name: "src/0/gone", Size: 1}
		err := VerifyCheckpoint(testCtx(t), s, m)
		wantErrIs(t, "VerifyCheckpoint with a missing blob", err, ErrNotFound)
		if !strings.Contains(err.Error(), "task src[0], operator state") {
			t.Fatalf("error %q does not name the task and what is missing", err)
		}
	})

	t.Run("DeleteUncommitted", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		commitSectioned(t, s, "job1", 2)          // valid: kept
		putBlobs(t, s, "job1", 3, "count/0/kg-0") // aborted: deleted
		commitSectioned(t, s, "job1", 5)          // manifest made corrupt below: deleted
		putBlobs(t, s, "job1", 6, "count/0/kg-0") // never completed: deleted
		commitSectioned(t, s, "job1", 7)          // valid: kept
		putBlobs(t, s, "job1", 8, "a", "b/c")     // being written (≥ below): kept
		raw := h.rawRead(t, s, "job1", 5, manifestName)
		raw[len(raw)-1] ^= 0x01
		h.rawWrite(t, s, "job1", 5, manifestName, raw)

		got, err := DeleteUncommitted(ctx, s, "job1", 8)
		if err != nil || !slices.Equal(got, []uint64{3, 5, 6}) {
			t.Fatalf("DeleteUncommitted = %v, %v; want [3 5 6]", got, err)
		}
		wantList(t, s, "job1", []uint64{2, 7})
		left, err := s.(UncommittedLister).Uncommitted(ctx, "job1")
		if err != nil || !slices.Equal(left, []uint64{8}) {
			t.Fatalf("Uncommitted after the sweep = %v, %v; want [8] (the one being written)", left, err)
		}
		for _, id := range []uint64{3, 6} {
			if _, err := s.GetBlob(ctx, "job1", id, BlobRef{Name: "count/0/kg-0"}); !errors.Is(err, ErrNotFound) {
				t.Fatalf("blob of swept checkpoint %d: %v, want not found", id, err)
			}
		}
		if got, err := DeleteUncommitted(ctx, s, "job1", 8); err != nil || len(got) != 0 {
			t.Fatalf("second DeleteUncommitted = %v, %v; want nothing", got, err)
		}
		if got, err := DeleteUncommitted(ctx, s, "nojob", 100); err != nil || len(got) != 0 {
			t.Fatalf("DeleteUncommitted of an unknown job = %v, %v; want nothing", got, err)
		}
	})
}
