// Package stats collects network statistics over the classic three phases
// of a NoC experiment: warm-up (nothing counted), measurement (packets
// created in it are tagged) and drain (the run continues until every tagged
// packet has arrived or been dropped). It reports packet and flit latency
// (mean, min, max, p50, p99), network latency, hops, offered and accepted
// throughput; per-link utilisation and per-port stalls come from the links
// and switches themselves (see the network scenarios' reports).
//
// Latencies are kept in constant space: a count per cycle value (Hist), not
// a list of samples, so a run's memory does not grow with its length or
// load.
package stats

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Phase is where a run is.
type Phase uint8

// Phases.
const (
	Warmup Phase = iota
	Measure
	Drain
	Done
)

// Window sets the phases in cycles of the network clock: warm-up for
// Warmup cycles, then measurement for Measure cycles; drain lasts until
// every measured packet has arrived (or DrainLimit cycles, after which the
// run counts as saturated).
type Window struct {
	Warmup, Measure, DrainLimit uint64
}

// Packet is what the collector knows of one delivered packet.
type Packet struct {
	Src, Dst  int
	Flits     int
	Created   uint64 // cycle the source generated it
	Injected  uint64 // cycle its head entered the network
	Delivered uint64 // cycle its tail left the network
	Hops      int
}

// Collector accumulates statistics for one run.
type Collector struct {
	win           Window
	nodes         int
	created       uint64 // measured packets created
	createdFlits  uint64
	outstanding   int  // measured packets not yet delivered or dropped
	dropped       int  // measured packets dropped on the way
	latencies     Hist // per measured packet: its creation to its tail's arrival
	netLatencies  Hist // per measured packet: its head's injection to its tail's arrival
	flitLat       Hist // per flit of a measured packet: its injection to its arrival
	hops          uint64
	accepted      uint64 // flits delivered during the measurement window
	acceptedPkts  uint64
	measureEnd    uint64
	lastDelivered uint64
}

// New returns a collector for a network of nodes endpoints.
func New(nodes int, w Window) *Collector {
	return &Collector{win: w, nodes: nodes, measureEnd: w.Warmup + w.Measure}
}

// PhaseAt returns the phase at a cycle.
func (c *Collector) PhaseAt(cycle uint64) Phase {
	switch {
	case cycle < c.win.Warmup:
		return Warmup
	case cycle < c.measureEnd:
		return Measure
	case c.outstanding > 0 && (c.win.DrainLimit == 0 || cycle < c.measureEnd+c.win.DrainLimit):
		return Drain
	}
	return Done
}

// Measured reports whether a packet created at cycle is measured.
func (c *Collector) Measured(created uint64) bool {
	return created >= c.win.Warmup && created < c.measureEnd
}

// Created records a packet generated at cycle; it returns whether the
// packet is measured (its delivery must then be reported with Delivered).
func (c *Collector) Created(cycle uint64, flits int) bool {
	if !c.Measured(cycle) {
		return false
	}
	c.created++
	c.createdFlits += uint64(flits)
	c.outstanding++
	return true
}

// FlitArrived records one flit's arrival at cycle (for flit latency and
// accepted throughput): injected is the cycle the flit itself entered the
// network and created its packet's creation cycle. Flit latency is
// arrival minus injection, for the flits of measured packets. Flits of a
// packet later dropped for a failed CRC did cross the network and count.
func (c *Collector) FlitArrived(cycle, injected, created uint64) {
	if cycle >= c.win.Warmup && cycle < c.measureEnd {
		c.accepted++
	}
	if c.Measured(created) {
		c.flitLat.Add(cycle - injected)
	}
}

// Delivered records a packet whose tail arrived.
func (c *Collector) Delivered(p Packet) {
	c.lastDelivered = max(c.lastDelivered, p.Delivered)
	if p.Delivered >= c.win.Warmup && p.Delivered < c.measureEnd {
		c.acceptedPkts++
	}
	if !c.Measured(p.Created) {
		return
	}
	c.outstanding--
	c.latencies.Add(p.Delivered - p.Created)
	c.netLatencies.Add(p.Delivered - p.Injected)
	c.hops += uint64(p.Hops)
}

// Dropped records a packet discarded on the way (a failed CRC, a lost
// cell) that was created at cycle created: it will never be delivered.
func (c *Collector) Dropped(created uint64) {
	if c.Measured(created) {
		c.outstanding--
		c.dropped++
	}
}

// Outstanding returns the measured packets neither delivered nor dropped.
func (c *Collector) Outstanding() int { return c.outstanding }

// Dist summarises a latency distribution in cycles.
type Dist struct {
	N                  int
	Mean               float64
	Min, Max, P50, P99 uint64
}

// Result is the report of a run.
type Result struct {
	Packet, Network, Flit Dist
	// MeanHops is the mean number of routers a measured packet crossed.
	MeanHops float64
	// Offered and Accepted are in flits/node/cycle over the measurement
	// window; AcceptedPackets in packets/node/cycle.
	Offered, Accepted, AcceptedPackets float64
	// Lost counts measured packets that never arrived (drain limit hit):
	// the network is saturated. Dropped counts measured packets discarded
	// on the way (not part of the latency figures).
	Lost      int
	Dropped   int
	Saturated bool
	// LastDelivery is the cycle the last packet (measured or not) arrived.
	LastDelivery uint64
}

// Result computes the report.
func (c *Collector) Result() Result {
	r := Result{Packet: c.latencies.Dist(), Network: c.netLatencies.Dist(), Flit: c.flitLat.Dist()}
	if n := c.latencies.N(); n > 0 {
		r.MeanHops = float64(c.hops) / float64(n)
	}
	denom := float64(c.nodes) * float64(max(c.win.Measure, 1))
	r.Offered = float64(c.createdFlits) / denom
	r.Accepted = float64(c.accepted) / denom
	r.AcceptedPackets = float64(c.acceptedPkts) / denom
	r.Lost = c.outstanding
	r.Dropped = c.dropped
	r.Saturated = c.outstanding > 0
	r.LastDelivery = c.lastDelivered
	return r
}

// Print writes the result as a small table.
func (r Result) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "latency (cycles)\tn\tmean\tmin\tp50\tp99\tmax")
	for _, d := range []struct {
		name string
		d    Dist
	}{{"packet", r.Packet}, {"network", r.Network}, {"flit", r.Flit}} {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%d\t%d\t%d\t%d\n", d.name, d.d.N, d.d.Mean, d.d.Min, d.d.P50, d.d.P99, d.d.Max)
	}
	tw.Flush()
	fmt.Fprintf(w, "hops %.3f, offered %.4f and accepted %.4f flits/node/cycle (%.5f packets/node/cycle)",
		r.MeanHops, r.Offered, r.Accepted, r.AcceptedPackets)
	if r.Dropped > 0 {
		fmt.Fprintf(w, ", %d measured packets dropped", r.Dropped)
	}
	if r.Saturated {
		fmt.Fprintf(w, ", SATURATED: %d measured packets not delivered", r.Lost)
	}
	fmt.Fprintln(w)
}
