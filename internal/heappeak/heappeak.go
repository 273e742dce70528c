// Package heappeak measures the peak heap of a simulation run, for the
// memory benchmarks: a hook on the engine reads the runtime's heap metrics
// every so many events while the run goes on, so the peak is the largest
// heap seen during the run, not what is left after it.
//
// Two figures are kept. Live is the heap the last garbage collection found
// reachable (runtime/metrics /gc/heap/live:bytes): what the model and its
// checkers actually hold, independent of GOGC. It changes only at a
// collection, so the sampler reads it often enough to see every
// collection's value (it counts the collections it missed, two or more
// between two readings), and Finish adds a forced collection at the end of
// the run, while the model is still reachable. Objects is the heap
// including garbage not yet collected (/memory/classes/heap/objects:bytes,
// HeapAlloc): an upper bound, about twice Live at the default GOGC. The
// sampler starts no goroutine and allocates nothing per sample.
package heappeak

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/nisim/nisim/rtl/env"
	"github.com/sarchlab/akita/v3/sim"
)

// DefaultEvery is the sampling interval in engine events: one reading
// costs about a microsecond, an engine event (one edge of a clock domain,
// every component of that clock) several, so reading every 256 events
// costs well under 0.1% of a run.
const DefaultEvery = 256

// Heap is one reading, in bytes.
type Heap struct {
	// Live is the heap marked reachable by the last garbage collection.
	Live uint64
	// Objects is the heap occupied by objects, live or not yet swept.
	Objects uint64
}

// Sampler is hooked onto an engine and keeps the peak of the heap metrics.
type Sampler struct {
	every   uint64
	events  uint64
	samples [3]metrics.Sample
	// Base is the heap after a forced collection just before the run.
	Base Heap
	// Peak is the largest reading of each figure during the run (each on
	// its own: the two peaks need not be at the same moment).
	Peak Heap
	// Samples counts the readings; GCs counts the collections during the
	// run (Live is refreshed by each); Missed counts those whose Live no
	// reading saw (a later collection came before the next reading).
	Samples int
	GCs     uint64
	Missed  uint64
	gc0     uint64
	gcLast  uint64
}

// Hook collects garbage, reads the base heap and hooks a sampler onto e's
// engine that reads the heap every every events (0: DefaultEvery). Call it
// after building the model (or before: building counts too) and before
// running it; call Finish after the run.
func Hook(e *env.Env, every uint64) *Sampler {
	if every == 0 {
		every = DefaultEvery
	}
	s := &Sampler{every: every}
	s.samples[0].Name = "/gc/heap/live:bytes"
	s.samples[1].Name = "/memory/classes/heap/objects:bytes"
	s.samples[2].Name = "/gc/cycles/total:gc-cycles"
	runtime.GC()
	h, gcs := s.read()
	s.Base, s.Peak, s.gc0, s.gcLast = h, h, gcs, gcs
	e.Engine.AcceptHook(s)
	return s
}

// Func implements sim.Hook: a reading every s.every events.
func (s *Sampler) Func(ctx sim.HookCtx) {
	if ctx.Pos != sim.HookPosAfterEvent {
		return
	}
	s.events++
	if s.events%s.every == 0 {
		s.Sample()
	}
}

// Sample reads the heap now and updates the peaks.
func (s *Sampler) Sample() { s.sample() }

// Collect takes a reading, forces a garbage collection and takes another
// (both count for the peaks, the collection as one of the run's) and
// returns the second: the heap the model holds at this point, for example
// once it is built and before it runs. The first reading counts what was
// allocated since the last collection, garbage included (building a
// model raises no engine events, so nothing samples it).
func (s *Sampler) Collect() Heap {
	s.sample()
	runtime.GC()
	return s.sample()
}

func (s *Sampler) sample() Heap {
	h, gcs := s.read()
	s.Samples++
	s.Peak.Live = max(s.Peak.Live, h.Live)
	s.Peak.Objects = max(s.Peak.Objects, h.Objects)
	if gcs > s.gcLast+1 {
		s.Missed += gcs - s.gcLast - 1
	}
	s.GCs, s.gcLast = gcs-s.gc0, gcs
	return h
}

// Finish forces a collection at the end of the run and takes a last
// reading, so that what the run holds at its end counts exactly. keep are
// the roots of the model (the env, a cluster), kept reachable until the
// reading is taken.
func (s *Sampler) Finish(keep ...any) {
	s.Sample()
	runtime.GC()
	s.Sample()
	runtime.KeepAlive(keep)
}

func (s *Sampler) read() (Heap, uint64) {
	metrics.Read(s.samples[:])
	return Heap{Live: s.samples[0].Value.Uint64(), Objects: s.samples[1].Value.Uint64()}, s.samples[2].Value.Uint64()
}

// Events returns the engine events seen.
func (s *Sampler) Events() uint64 { return s.events }

// String summarises the peaks in MiB.
func (s *Sampler) String() string {
	return fmt.Sprintf("peak live %.1f MiB (base %.1f), peak heap %.1f MiB; %d samples, %d GCs (%d not seen)",
		mib(s.Peak.Live), mib(s.Base.Live), mib(s.Peak.Objects), s.Samples, s.GCs, s.Missed)
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// Report reports the peaks of a run of tx transactions on b:
// peak-live-MiB and peak-heap-MiB, the run's growth of the live heap over
// the base per transaction (live-B/tx), and tx.
func (s *Sampler) Report(b *testing.B, tx int) {
	b.ReportMetric(mib(s.Peak.Live), "peak-live-MiB")
	b.ReportMetric(mib(s.Peak.Objects), "peak-heap-MiB")
	grow := float64(s.Peak.Live) - float64(s.Base.Live)
	b.ReportMetric(grow/float64(max(tx, 1)), "live-B/tx")
	b.ReportMetric(float64(tx), "tx")
}
