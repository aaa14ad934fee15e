package sessions

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// sessionKey identifies a session in a comparison.
type sessionKey struct {
	User       string
	Start, End int64 // Unix ms
}

// Expected computes the sessions straightforwardly: each user's on-time
// clicks sorted by time, split where the next click comes Gap or more after
// the previous one.
func Expected(seed, n int64, users int) map[sessionKey]int64 {
	byUser := map[string][]int64{}
	for i := range n {
		if IsLate(i, n) {
			continue
		}
		c := MakeClick(seed, i, n, users)
		byUser[c.User] = append(byUser[c.User], c.TS)
	}
	gap := Gap.Milliseconds()
	out := map[sessionKey]int64{}
	for user, ts := range byUser {
		slices.Sort(ts)
		start, count := ts[0], int64(1)
		for j := 1; j <= len(ts); j++ {
			if j == len(ts) || ts[j] >= ts[j-1]+gap {
				out[sessionKey{user, start, ts[j-1] + gap}] = count
				if j < len(ts) {
					start, count = ts[j], 0
				}
			}
			count++
		}
	}
	return out
}

// LateCount is the number of late clicks among n.
func LateCount(n int64) int64 {
	c := int64(0)
	for i := range n {
		if IsLate(i, n) {
			c++
		}
	}
	return c
}

// VerifyFiles checks the job's output: every expected session exactly once
// with its count, nothing else, and every late click exactly once in the
// late file.
func VerifyFiles(out, lateOut string, seed, n int64, users int) error {
	want := Expected(seed, n, users)
	got := map[sessionKey]int64{}
	err := readLines(out, func(line []byte) error {
		var s Session
		if err := json.Unmarshal(line, &s); err != nil {
			return err
		}
		k := sessionKey{s.Key, s.Start.UnixMilli(), s.End.UnixMilli()}
		if _, dup := got[k]; dup {
			return fmt.Errorf("session %+v twice", k)
		}
		got[k] = s.Value
		return nil
	})
	if err != nil {
		return err
	}
	var missing, extra []sessionKey
	for k, c := range want {
		g, ok := got[k]
		if !ok {
			missing = append(missing, k)
			continue
		}
		if g != c {
			return fmt.Errorf("session %+v has %d clicks, want %d", k, g, c)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		return fmt.Errorf("%d sessions, want %d: %d missing %s, %d not expected %s", len(got), len(want),
			len(missing), firstSessions(missing, want), len(extra), firstSessions(extra, got))
	}
	seen := map[int64]bool{}
	err = readLines(lateOut, func(line []byte) error {
		var c Click
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		if !IsLate(c.Seq, n) || seen[c.Seq] {
			return fmt.Errorf("late file: click %d is not late or is there twice", c.Seq)
		}
		seen[c.Seq] = true
		return nil
	})
	if err != nil {
		return err
	}
	if int64(len(seen)) != LateCount(n) {
		return fmt.Errorf("%d late clicks, want %d", len(seen), LateCount(n))
	}
	return nil
}

// readLines calls fn for every line of the file at path.
func readLines(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sessions output: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s line %d: %w", path, line, err)
		}
	}
	return sc.Err()
}

// firstSessions names the earliest few of keys (at most 4), with their
// clicks in counts, for an error.
func firstSessions(keys []sessionKey, counts map[sessionKey]int64) string {
	slices.SortFunc(keys, func(a, b sessionKey) int {
		if a.Start != b.Start {
			return int(a.Start - b.Start)
		}
		return strings.Compare(a.User, b.User)
	})
	var b strings.Builder
	b.WriteString("[")
	for i, k := range keys[:min(len(keys), 4)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s–%s (%d clicks)", k.User, time.UnixMilli(k.Start).UTC().Format(time.StampMilli),
			time.UnixMilli(k.End).UTC().Format(time.StampMilli), counts[k])
	}
	if len(keys) > 4 {
		b.WriteString(", …")
	}
	b.WriteString("]")
	return b.String()
}
