// Package weir is a stateful stream-processing runtime built as an actor system.
//
// A job is a dataflow graph written as a short Go program: sources, Map, FlatMap
// and Filter, KeyBy followed by a keyed process function with typed keyed state,
// and sinks. Every task instance, every channel between two instances and the job
// coordinator run as protoactor actors; records travel in batches with
// credit-based flow control, so a slow stage bounds the memory of a fast one.
//
//	g := weir.NewGraph("keycount")
//	recs := weir.Generate(g, "source", n, func(i int64) Event { return Event{Key: key(i)} })
//	counts := weir.NewValueState[int64](g, "count")
//	keyed := weir.KeyBy(recs, func(e Event) string { return e.Key })
//	out := weir.Process(keyed, "count", func(ctx *weir.KeyedContext[string], e Event, out *weir.Emitter[Count]) error {
//		c := counts.Get(ctx) + 1
//		counts.Set(ctx, c)
//		out.Emit(Count{Key: ctx.Key(), Count: c})
//		return nil
//	}, weir.WithState(counts))
//	weir.ToSink(out, "sink", weir.DiscardSink[Count]())
//	result, err := weir.Run(ctx, g)
package weir
