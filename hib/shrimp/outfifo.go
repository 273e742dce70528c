package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/trace"
)

// mutNoThreshold silences the threshold interrupt (test-only fault).
var mutNoThreshold = env.DeclareMutation("shrimp.no-threshold",
	"every Nth rising crossing of the SHRIMP Outgoing FIFO's threshold raises no interrupt (N=1: never), so the OS "+
		"never deschedules the AU writers (caught by the overflow report, shrimp.overflow)")

// buildOutFIFO creates the Outgoing FIFO: FIFOBytes / FIFOWidthBytes words
// (SH-P19, SH-P20: 4096 × 8 B = 32 KB). The packetiser writes up to two
// words per core cycle (assumed: a store's header and data word together,
// so per-store packets keep up with the bus, SH-P20 «in order to keep up
// with the memory bus burst bandwidth»); the NIC port reads
// NICPortBytes / FIFOWidthBytes words per cycle. Its high-water mark is the
// threshold: occupancy above FIFOThreshold raises IRQThreshold once per
// rising crossing (SH-P21), judged when the cycle has settled.
func (n *NI) buildOutFIFO() error {
	c := &n.cfg
	f, err := fifo.MakeBuilder[outWord]().WithEnv(n.env).WithDepth(c.FIFOWords()).WithWidth(8 * c.FIFOWidthBytes).
		WithEnqPerCycle(2).WithDeqPerCycle(c.NICPortBytes / c.FIFOWidthBytes).
		WithHighWater(c.FIFOThreshold / c.FIFOWidthBytes).Build(n.name + ".OutFIFO")
	if err != nil {
		return err
	}
	f.Connect(n, n)
	f.OnHighWater(n.threshold)
	n.out.fifo = f
	n.out.thrBytes = c.FIFOThreshold
	n.out.noThrEvery = n.env.Mutation(mutNoThreshold)
	return nil
}

// threshold is the Outgoing FIFO's high-water callback.
func (n *NI) threshold(now clock.Time, above bool) {
	o := &n.out
	if n.env.Trace.Enabled() {
		ev := "below"
		if above {
			ev = "above"
		}
		n.env.Trace.Emit(now, n.Clock().CycleAt(now), n.name, "shrimp.fifo", trace.Str("event", ev),
			trace.Int("bytes", int64(o.fifo.Len()*n.cfg.FIFOWidthBytes)))
	}
	if !above {
		return
	}
	if o.noThrEvery > 0 {
		if o.thrs++; o.thrs%o.noThrEvery == 0 {
			return // mutation: no interrupt
		}
	}
	n.counters.ThresholdIRQs++
	n.raise(now, IRQThreshold)
}

// fifoRoom reports whether k more words fit in the Outgoing FIFO at now.
func (n *NI) fifoRoom(now clock.Time, k int) bool { return n.out.fifo.Free(now) >= k }

// pushWord writes one word into the Outgoing FIFO (the caller checked the
// room).
func (n *NI) pushWord(now clock.Time, w outWord) {
	o := &n.out
	o.fifo.Push(now, w)
	o.fifoBytes += n.cfg.FIFOWidthBytes
	n.counters.FIFOMax = max(n.counters.FIFOMax, o.fifoBytes)
}

// popWord reads the Outgoing FIFO's head word for the NIC port.
func (n *NI) popWord(now clock.Time) (outWord, bool) {
	o := &n.out
	w, ok := o.fifo.Pop(now)
	if ok {
		o.fifoBytes -= n.cfg.FIFOWidthBytes
	}
	return w, ok
}

// fifoOccupancy returns the Outgoing FIFO's occupancy in bytes.
func (n *NI) fifoOccupancy() int { return n.out.fifoBytes }

// setFIFOThreshold reprograms the threshold (the RegThreshold CSR write) to
// bytes: the interrupt is raised when the occupancy rises above it.
func (n *NI) setFIFOThreshold(now clock.Time, bytes int) error {
	if bytes < 0 || bytes >= n.cfg.FIFOBytes {
		return fmt.Errorf("FIFO threshold %d must be in 0..%d", bytes, n.cfg.FIFOBytes-1)
	}
	n.out.fifo.SetHighWater(now, bytes/n.cfg.FIFOWidthBytes)
	n.out.thrBytes = bytes
	return nil
}

// fifoThreshold returns the programmed threshold in bytes.
func (n *NI) fifoThreshold() int { return n.out.thrBytes }
