package cluster

import "testing"

// FuzzDecodeHeartbeat: malformed heartbeats are errors, never panics, and
// whatever decodes re-encodes to the same heartbeat.
func FuzzDecodeHeartbeat(f *testing.F) {
	good, _ := EncodeHeartbeat(sampleHeartbeat())
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte("\x81\xa4node\xa1a"))
	f.Fuzz(func(t *testing.T, b []byte) {
		hb, err := DecodeHeartbeat(b)
		if err != nil {
			return
		}
		again, err := EncodeHeartbeat(hb)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", hb, err)
		}
		if _, err := DecodeHeartbeat(again); err != nil {
			t.Fatalf("decode of re-encoded %+v: %v", hb, err)
		}
	})
}

// FuzzDecodeRecords: lease values and job records from the KV never panic.
func FuzzDecodeRecords(f *testing.F) {
	lv, _ := encodeLease(LeaseValue{Node: "a", Epoch: 3, RenewedUnixNano: 99})
	f.Add(lv)
	f.Add([]byte{0xc1})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeLease(b)
		if r, err := decodeJob("j", b); err == nil && r.Name != "j" {
			t.Fatalf("record under key j decoded as %+v", r)
		}
	})
}
