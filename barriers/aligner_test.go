package barriers

import (
	"errors"
	"testing"
	"time"
)

func TestOnBufferDoesNotAllocate(t *testing.T) {
	a, err := NewAligner(Config{Inputs: 2, Mode: Unaligned})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.OnBarrier(0, 1, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	var seq uint64
	allocs := testing.AllocsPerRun(1000, func() {
		seq++
		capture, err := a.OnBuffer(1, seq)
		if err != nil || !capture {
			t.Fatalf("OnBuffer(1, %d) = %v, %v; want capture", seq, capture, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("OnBuffer allocates %v times per call", allocs)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	if _, err := NewAligner(Config{Inputs: 1, Mode: Unaligned, AlignedTimeout: time.Second}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("NewAligner: %v, want ErrInvalidConfig", err)
	}
	a, err := NewAligner(Config{Inputs: 1, Mode: Aligned})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.OnBuffer(0, 3); !errors.Is(err, ErrProtocol) {
		t.Fatalf("OnBuffer gap: %v, want ErrProtocol", err)
	}
	if _, err := a.OnBarrier(0, 1, 4, false, 0); !errors.Is(err, ErrProtocol) {
		t.Fatalf("OnBarrier ahead of data: %v, want ErrProtocol", err)
	}
	if id, ok := a.InProgress(); ok {
		t.Fatalf("failed barrier left checkpoint %d in progress", id)
	}
}

// TestConfigIsCopied checks that the caller's ConsumedSeqs slice is not kept.
func TestConfigIsCopied(t *testing.T) {
	consumed := []uint64{4}
	a, err := NewAligner(Config{Inputs: 1, Mode: Unaligned, ConsumedSeqs: consumed})
	if err != nil {
		t.Fatal(err)
	}
	consumed[0] = 100
	if _, err := a.OnBuffer(0, 5); err != nil {
		t.Fatalf("OnBuffer(0, 5) after consumed 4: %v", err)
	}
}

func BenchmarkOnBuffer(b *testing.B) {
	for _, mode := range []Mode{Aligned, Unaligned} {
		b.Run(mode.String(), func(b *testing.B) {
			a, err := NewAligner(Config{Inputs: 4, Mode: mode})
			if err != nil {
				b.Fatal(err)
			}
			if mode == Unaligned {
				if _, err := a.OnBarrier(0, 1, 0, true, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			var seq uint64
			for b.Loop() {
				seq++
				if _, err := a.OnBuffer(1, seq); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCheckpoint(b *testing.B) {
	a, err := NewAligner(Config{Inputs: 4, Mode: Unaligned})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var id uint64
	for b.Loop() {
		id++
		for in := range 4 {
			if _, err := a.OnBarrier(in, id, 0, true, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestAwaits: a checkpoint in progress awaits the barriers of the inputs
// that have not delivered it, and says whether it is the final one.
func TestAwaits(t *testing.T) {
	a, err := NewAligner(Config{Inputs: 3, Mode: Unaligned})
	if err != nil {
		t.Fatal(err)
	}
	if aw, _ := a.Awaits(1, 0); aw {
		t.Fatal("Awaits(1, 0) before any barrier: true")
	}
	if _, err := a.OnBarrier(1, 1, 0, true, 0); err != nil {
		t.Fatal(err)
	}
	for input, want := range []bool{true, false, true, false} {
		if aw, final := a.Awaits(1, input); aw != want || final {
			t.Fatalf("Awaits(1, %d) = %v, %v; want %v, false", input, aw, final, want)
		}
	}
	if aw, _ := a.Awaits(2, 0); aw {
		t.Fatal("Awaits(2, 0) for a checkpoint not begun: true")
	}
	if _, err := a.OnFinalBarrier(0, 2, 0, 0); err != nil {
		t.Fatal(err)
	}
	if aw, final := a.Awaits(2, 2); !aw || !final {
		t.Fatalf("Awaits(2, 2) of the final checkpoint = %v, %v; want true, true", aw, final)
	}
}
