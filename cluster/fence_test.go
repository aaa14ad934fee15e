package cluster

import (
	"errors"
	"testing"
)

func TestFence(t *testing.T) {
	type step struct {
		job         string
		epoch       uint64
		wantOK      bool
		wantHighest uint64
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"first epoch is admitted and becomes the highest", []step{
			{"j", 3, true, 3},
		}},
		{"same epoch again is admitted", []step{
			{"j", 2, true, 2}, {"j", 2, true, 2},
		}},
		{"a takeover raises the fence; the old coordinator is refused", []step{
			{"j", 1, true, 1}, {"j", 2, true, 2}, {"j", 1, false, 2}, {"j", 2, true, 2},
		}},
		{"epochs may jump", []step{
			{"j", 1, true, 1}, {"j", 7, true, 7}, {"j", 6, false, 7}, {"j", 1, false, 7},
		}},
		{"unstamped is admitted only before any epoch", []step{
			{"j", 0, true, 0}, {"j", 1, true, 1}, {"j", 0, false, 1},
		}},
		{"jobs are fenced apart", []step{
			{"a", 5, true, 5}, {"b", 1, true, 1}, {"a", 4, false, 5}, {"b", 2, true, 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFence()
			for i, s := range tc.steps {
				ok, h := f.Admit(s.job, s.epoch)
				if ok != s.wantOK || h != s.wantHighest {
					t.Fatalf("step %d: Admit(%s, %d) = %v, %d; want %v, %d", i, s.job, s.epoch, ok, h, s.wantOK, s.wantHighest)
				}
				if f.Highest(s.job) != s.wantHighest {
					t.Fatalf("step %d: Highest(%s) = %d, want %d", i, s.job, f.Highest(s.job), s.wantHighest)
				}
			}
		})
	}
}

func TestFencedErrorIsErrFenced(t *testing.T) {
	err := FencedError("keycount", 1, 2)
	if !errors.Is(err, ErrFenced) || err.Error() != "job keycount: command of coordinator epoch 1 refused: epoch 2 seen: "+ErrFenced.Error() {
		t.Fatalf("FencedError = %v", err)
	}
}
