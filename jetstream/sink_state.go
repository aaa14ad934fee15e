package jetstream

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// staged is one message a sink holds until its checkpoint commits.
type staged struct {
	Subject string `msgpack:"s"`
	Data    []byte `msgpack:"d"`
}

// batch is the output a sink instance wrote between two checkpoints, sealed
// for Checkpoint. Nonce tells this sealing apart from any other of the same
// checkpoint id (a run restored from an older checkpoint reuses ids).
type batch struct {
	Checkpoint uint64   `msgpack:"c"`
	Nonce      string   `msgpack:"n"`
	Msgs       []staged `msgpack:"m"`
	// Writer is the Weir-Sink value the batch is published under: the
	// instance's whose state holds it (a restore at fewer instances
	// publishes a removed instance's batches under its identity). Empty in
	// states written before it was recorded: the instance's own.
	Writer string `msgpack:"w,omitempty"`
}

// id is the batch's Weir-Batch header value.
func (b *batch) id() string { return fmt.Sprintf("%d-%s", b.Checkpoint, b.Nonce) }

// key names the batch among every writer's: its Weir-Sink and Weir-Batch.
func (b *batch) key() string { return batchKey(b.Writer, b.id()) }

// batchKey is the key of batch id of writer.
func batchKey(writer, id string) string { return writer + " " + id }

// sinkState is what a sink instance stores in a checkpoint: its sealed,
// uncommitted batches, and the stream's last sequence when they were sealed
// (every message the instance published for a batch not in Batches has a
// sequence up to ScanFrom).
type sinkState struct {
	ScanFrom uint64  `msgpack:"f"`
	Batches  []batch `msgpack:"b"`
	// Writer is the instance's Weir-Sink value (empty in older states).
	Writer string `msgpack:"w,omitempty"`
}

// handOff is what an instance a live rescale removes hands to another: its
// sealed, uncommitted batches (the taker adopts them as its own), and the messages it
// wrote since its last checkpoint.
type handOff struct {
	Batches []batch  `msgpack:"b"`
	Open    []staged `msgpack:"o"`
}

func encodeSinkState(st sinkState) ([]byte, error) {
	b, err := msgpack.Marshal(&st)
	if err != nil {
		return nil, fmt.Errorf("encode sink state: %w", err)
	}
	return b, nil
}

func decodeSinkState(b []byte) (sinkState, error) {
	var st sinkState
	if err := msgpack.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("decode sink state (%d bytes): %w", len(b), err)
	}
	return st, nil
}
