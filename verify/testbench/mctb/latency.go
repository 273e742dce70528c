package mctb

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/verify/testbench/tbutil"
	"github.com/nisim/nisim/verify/trace"
)

// The measurement drivers of mc-report (issue 13 section 4, design
// sections 3.1 to 3.4): each builds a cluster in the env it is given,
// maps the regions the measurement needs, starts the host programs of
// programs.go, runs to the end with every checker on and returns what the
// programs and the cluster's hooks measured. A checker's finding, a
// program that gave up or a run cut short is an error.

const (
	// roundGap is the writer's pause between two rounds of a latency
	// measurement. assumed: 20 µs, about four times the paper's 5.2 µs, so
	// that a round has arrived everywhere before the next starts.
	roundGap = 20 * clock.Microsecond
	// patience is how long a program polls for a write before giving up
	// (OneWay). assumed: 1 ms, about 200 times the paper's latency: no
	// correct write takes that long on an idle cluster.
	patience = clock.Millisecond
	// lockFlag is node 0's per-node test-and-set flag in its own memory.
	// assumed: any longword of the program's data below the receive
	// frames (Config.RxBase); 64 KB is clear of address 0.
	lockFlag = 0x1_0000
	// lockBackoff is a loser's pause before it tries again, in CPU cycles.
	// assumed: 100 cycles; without contention (all the report measures)
	// nobody loses, so it never counts.
	lockBackoff = 100
	// warmup is the rounds a latency measurement leaves out of its
	// statistics: the first round's poll finds the line not yet cached.
	warmup = 1
)

// cycles returns t in whole cycles of clk, rounded up.
func cycles(clk clock.Clock, t clock.Time) int {
	p := clk.Period()
	return int((t + p - 1) / p)
}

// Stats summarises a set of durations (tbutil.Stats).
type Stats = tbutil.Stats

// statsOf summarises ds (zero Stats for none).
func statsOf(ds []clock.Time) Stats { return tbutil.StatsOf(ds) }

// finishRun runs e to its end and joins the cluster's end-of-run checks
// (Cluster.Finish) to the run's error, unless the run was cut short (then
// the error says so, and the measurement reports nothing else).
func finishRun(e *env.Env, cl *Cluster) (env.Result, error) {
	res, err := e.Run()
	defer cl.Close()
	if res.Stopped {
		return res, errors.Join(err, errors.New("mctb: the run was cut short (time limit)"))
	}
	before := e.Monitor.Count()
	_ = cl.Finish()
	if e.Monitor.Count() > before {
		err = errors.Join(err, e.Monitor.Err())
	}
	return res, err
}

// Latency is a one-way write measurement: Last is the latency to the last
// reader (for one reader, the unicast latency), First to the first, over
// the rounds after the warm-up; Rounds is every round as measured; Run is
// the simulation's result.
type Latency struct {
	Last, First Stats
	Rounds      *WriteRounds
	Run         env.Result
}

// MeasureUnicast measures the one-way 4-byte write of design section 3.1:
// node 0's CPU 0 writes a longword of a point-to-point region that node 1
// receives, node 1's CPU 0 polls its copy; rounds rounds, the first left
// out of the statistics (warm-up).
func MeasureUnicast(e *env.Env, c Config, rounds int) (Latency, *Cluster, error) {
	return measureOneWay(e, c, rounds, false, nil)
}

// MeasureMulticast measures a write to a broadcast region without
// loop-back: node 0 writes, CPU 0 of every other node polls its copy; the
// round's latency is its last reader's (section 2.1: «Unicast and
// multicast process-to-process writes have a latency of 5.2 μs»).
func MeasureMulticast(e *env.Env, c Config, rounds int) (Latency, *Cluster, error) {
	return measureOneWay(e, c, rounds, true, nil)
}

// measureOneWay is both; hook (if not nil) is called on the cluster before
// the programs start, to add the caller's hooks.
func measureOneWay(e *env.Env, c Config, rounds int, multicast bool, hook func(*Cluster)) (Latency, *Cluster, error) {
	if rounds <= warmup {
		return Latency{}, nil, fmt.Errorf("mctb: rounds %d must be more than the %d warm-up round(s)", rounds, warmup)
	}
	if c.Nodes < 2 {
		return Latency{}, nil, fmt.Errorf("mctb: a one-way write needs 2 nodes (Nodes %d)", c.Nodes)
	}
	cl, err := Build(e, c)
	if err != nil {
		return Latency{}, nil, err
	}
	var r Region
	readers := []int{1}
	if multicast {
		r, err = cl.Broadcast("mc-latency", 4, false)
		readers = readers[:0]
		for i := 1; i < c.Nodes; i++ {
			readers = append(readers, i)
		}
	} else {
		r, err = cl.PointToPoint("mc-latency", 1, 4)
	}
	if err != nil {
		return Latency{}, cl, err
	}
	ow := OneWay{Tx: r.Tx[0], Rounds: rounds, Gap: cycles(c.Host.CPU.Clock, roundGap), Patience: patience}
	if err := ow.Validate(); err != nil {
		return Latency{}, cl, err
	}
	if hook != nil {
		hook(cl)
	}
	w := NewWriteRounds(rounds, len(readers))
	cl.Node(0).CPUs[0].Run(cpu.Go(ow.Writer(w)))
	for i, n := range readers {
		cl.Node(n).CPUs[0].Run(cpu.Go(ow.Reader(w, i, r.Rx[n])))
	}
	res, err := finishRun(e, cl)
	l := Latency{Rounds: w, Run: res}
	if res.Stopped {
		return l, cl, err
	}
	var last, first []clock.Time
	for k := range rounds {
		a, b, ok := w.Latency(k)
		if !ok {
			return l, cl, errors.Join(err, fmt.Errorf("mctb: round %d of the one-way write did not reach every reader within %v", k, patience))
		}
		if k >= warmup {
			last, first = append(last, a), append(first, b)
		}
	}
	l.Last, l.First = statsOf(last), statsOf(first)
	return l, cl, err
}

// Bandwidth is a streaming measurement: Bytes moved in Window between the
// marks (the deliveries or orders at 10% and 90% of the stream, so that
// the ramp-up and the drain are left out), the rate in MB/s (10^6 bytes
// per second, as the paper's «29 MB/s»), and the share of the window each
// node's PCI bus and memory bus were busy with transactions (PCIBusy,
// MemBusy: the cycles of address phases a target refused with a retry
// left out, PCIRetry and MemRetry: those cycles), and the hub's bus carried
// flits (HubBusy): what says which block limits the rate. A retried
// attempt says that the bus waits for what lies behind its target (a full
// TX FIFO, a full posted-write buffer), not that the bus is the limit.
type Bandwidth struct {
	Bytes             uint64
	Window            clock.Time
	MBps              float64
	PCIBusy, PCIRetry []float64
	MemBusy, MemRetry []float64
	HubBusy           float64
}

// busyMark is a snapshot of the busy counters at a mark.
type busyMark struct {
	at                           clock.Time
	bytes                        uint64
	pci, mem, pciRetry, memRetry []uint64
	hub                          uint64
}

// marker takes the snapshots of a bandwidth measurement: at the event
// numbered lo and at the one numbered hi (1-based), of total events.
type marker struct {
	cl     *Cluster
	lo, hi int
	n      int
	bytes  uint64
	marks  []busyMark
}

// newMarker marks the events at 10% and 90% of total.
func newMarker(cl *Cluster, total int) *marker {
	return &marker{cl: cl, lo: max(1, total/10), hi: max(2, total-total/10)}
}

// event counts one delivery or order of b bytes at now.
func (m *marker) event(now clock.Time, b int) {
	m.n++
	if m.n == m.lo || m.n == m.hi {
		k := busyMark{at: now, bytes: m.bytes}
		for _, n := range m.cl.Nodes {
			ps, ms := n.PCI.Stats(), n.MemBus().Stats()
			k.pci, k.pciRetry = append(k.pci, ps.BusyCycles), append(k.pciRetry, ps.Retries)
			k.mem, k.memRetry = append(k.mem, ms.BusyCycles), append(k.memRetry, ms.Retries)
		}
		k.hub = m.cl.Star.Hub.BusyCycles()
		m.marks = append(m.marks, k)
	}
	m.bytes += uint64(b)
}

// retryCycles is what a retried attempt holds a bus: derived from rtl/bus
// (an address phase the target refuses, then the idle turnaround, after
// arbitration unless it is hidden).
func retryCycles(c bus.Config) uint64 {
	n := c.AddrCycles + c.IdleCycles
	if !c.HiddenArb {
		n += c.ArbCycles
	}
	return uint64(n)
}

// result is the bandwidth between the two marks.
func (m *marker) result(c Config) (Bandwidth, error) {
	if len(m.marks) != 2 {
		return Bandwidth{}, fmt.Errorf("mctb: the stream ended after %d of the %d packets it should have", m.n, m.hi)
	}
	a, b := m.marks[0], m.marks[1]
	w := b.at - a.at
	if w <= 0 {
		return Bandwidth{}, fmt.Errorf("mctb: the stream's window between packets %d and %d is empty", m.lo, m.hi)
	}
	bw := Bandwidth{Bytes: b.bytes - a.bytes, Window: w}
	bw.MBps = float64(bw.Bytes) / (float64(w) / float64(clock.Second)) / 1e6
	frac := func(d uint64, clk clock.Clock) float64 { return float64(d) * float64(clk.Period()) / float64(w) }
	for i := range a.pci {
		pr := (b.pciRetry[i] - a.pciRetry[i]) * retryCycles(c.Host.IOBus)
		mr := (b.memRetry[i] - a.memRetry[i]) * retryCycles(c.Host.MemBus)
		bw.PCIBusy = append(bw.PCIBusy, frac(b.pci[i]-a.pci[i]-pr, c.Host.IOBus.Clock))
		bw.PCIRetry = append(bw.PCIRetry, frac(pr, c.Host.IOBus.Clock))
		bw.MemBusy = append(bw.MemBusy, frac(b.mem[i]-a.mem[i]-mr, c.Host.MemBus.Clock))
		bw.MemRetry = append(bw.MemRetry, frac(mr, c.Host.MemBus.Clock))
	}
	bw.HubBusy = frac(b.hub-a.hub, c.Hub.Clock())
	return bw, nil
}

// MeasureLinkBandwidth measures the per-link bandwidth of design section
// 3.2: node 0's CPU 0 streams bytes bytes as 32-byte write-combined
// stores into a point-to-point region of node 1 (loop-back off); the rate
// is the bytes the receive DMA delivers into node 1's memory per second
// (section 2.1: «perlink transfer bandwidths of 29 MB/s»).
func MeasureLinkBandwidth(e *env.Env, c Config, bytes int) (Bandwidth, *Cluster, error) {
	if c.Nodes < 2 {
		return Bandwidth{}, nil, fmt.Errorf("mctb: a link stream needs 2 nodes (Nodes %d)", c.Nodes)
	}
	cl, err := Build(e, c)
	if err != nil {
		return Bandwidth{}, nil, err
	}
	span := c.Adapter.PageBytes
	r, err := cl.PointToPoint("mc-stream", 1, span)
	if err != nil {
		return Bandwidth{}, cl, err
	}
	s := Stream{Tx: r.Tx[0], Span: span, Bytes: bytes, Seed: 1}
	if err := s.Validate(); err != nil {
		return Bandwidth{}, cl, err
	}
	m := newMarker(cl, bytes/BurstBytes)
	cl.OnMemory(func(now clock.Time, node int, x *Expect) {
		if node == 1 {
			m.event(now, len(x.Data))
		}
	})
	cl.Node(0).CPUs[0].Run(cpu.Go(s.Program(nil)))
	res, err := finishRun(e, cl)
	if res.Stopped {
		return Bandwidth{}, cl, err
	}
	bw, merr := m.result(c)
	return bw, cl, errors.Join(err, merr)
}

// MeasureAggregate measures the aggregate bandwidth of design section
// 3.3: CPU 0 of every node streams bytes bytes into its own part of one
// broadcast region, loop-back disabled (section 2.1: «MC peak aggregate
// bandwidth, calculated with loop-back disabled, is about 60 MB/s»); the
// rate is the bytes the hub puts in its global order per second.
func MeasureAggregate(e *env.Env, c Config, bytes int) (Bandwidth, *Cluster, error) {
	return measureAggregate(e, c, bytes, false)
}

// MeasureRing is MeasureAggregate with point-to-point regions instead:
// node i streams into a region only node i+1 (mod Nodes) receives
// (design section 3.3's extra row; the paper gives no figure). Each node's
// PCI bus then carries one stream of DMA instead of Nodes-1.
func MeasureRing(e *env.Env, c Config, bytes int) (Bandwidth, *Cluster, error) {
	return measureAggregate(e, c, bytes, true)
}

func measureAggregate(e *env.Env, c Config, bytes int, ring bool) (Bandwidth, *Cluster, error) {
	if c.Nodes < 2 {
		return Bandwidth{}, nil, fmt.Errorf("mctb: an aggregate stream needs 2 nodes (Nodes %d)", c.Nodes)
	}
	cl, err := Build(e, c)
	if err != nil {
		return Bandwidth{}, nil, err
	}
	span := c.Adapter.PageBytes
	tx := make([]uint64, c.Nodes)
	if ring {
		for i := range c.Nodes {
			r, err := cl.PointToPoint(fmt.Sprintf("mc-ring%d", i), (i+1)%c.Nodes, span)
			if err != nil {
				return Bandwidth{}, cl, err
			}
			tx[i] = r.Tx[i]
		}
	} else {
		r, err := cl.Broadcast("mc-aggregate", c.Nodes*span, false)
		if err != nil {
			return Bandwidth{}, cl, err
		}
		for i := range c.Nodes {
			tx[i] = r.Tx[i] + uint64(i*span)
		}
	}
	m := newMarker(cl, c.Nodes*bytes/BurstBytes)
	cl.OnOrder(func(now clock.Time, w *mchub.Write, _ []int) { m.event(now, w.Len) })
	for i, n := range cl.Nodes {
		s := Stream{Tx: tx[i], Span: span, Bytes: bytes, Seed: uint32(i) << 24}
		if err := s.Validate(); err != nil {
			return Bandwidth{}, cl, err
		}
		n.CPUs[0].Run(cpu.Go(s.Program(nil)))
	}
	res, err := finishRun(e, cl)
	if res.Stopped {
		return Bandwidth{}, cl, err
	}
	bw, merr := m.result(c)
	return bw, cl, errors.Join(err, merr)
}

// LockTimes is a lock measurement without contention: the acquire, the
// release and both, over the rounds after the warm-up.
type LockTimes struct {
	Acquire, Release, Total Stats
	Lost                    int
}

// MeasureLock measures Cashmere-2L's global lock (Lock) taken and released
// rounds times by node 0's CPU 0 with nobody else contending (section
// 2.3: «In the absence of contention, acquiring and releasing a lock
// takes about 11 μs»); waitRelease chooses whether a release waits for
// its clear's loop-back (Lock.WaitRelease).
func MeasureLock(e *env.Env, c Config, rounds int, waitRelease bool) (LockTimes, *Cluster, error) {
	if rounds <= warmup {
		return LockTimes{}, nil, fmt.Errorf("mctb: rounds %d must be more than the %d warm-up round(s)", rounds, warmup)
	}
	cl, err := Build(e, c)
	if err != nil {
		return LockTimes{}, nil, err
	}
	// Section 2.3: «an 8-entry array in Memory Channel space», one
	// longword per node (MC-P18: «32-bits is the smallest unit that the
	// 21064 can access atomically»).
	r, err := cl.Loopback("mc-lock", 4*c.Nodes)
	if err != nil {
		return LockTimes{}, cl, err
	}
	l := Lock{Flag: lockFlag, Tx: r.Tx[0], Rx: r.Rx[0], Node: 0, Nodes: c.Nodes, Backoff: lockBackoff,
		WaitRelease: waitRelease, Patience: patience}
	if err := l.Validate(); err != nil {
		return LockTimes{}, cl, err
	}
	var out []LockRound
	cl.Node(0).CPUs[0].Run(cpu.Go(LockProgram(l, rounds, 0, cycles(c.Host.CPU.Clock, roundGap), &out)))
	res, err := finishRun(e, cl)
	if res.Stopped {
		return LockTimes{}, cl, err
	}
	if len(out) != rounds {
		return LockTimes{}, cl, errors.Join(err, fmt.Errorf("mctb: %d of the %d lock rounds completed (a loop-back did not come within %v)", len(out), rounds, patience))
	}
	var acq, rel, tot []clock.Time
	t := LockTimes{}
	for _, x := range out[warmup:] {
		acq = append(acq, x.Acquired-x.Start)
		rel = append(rel, x.Released-x.Acquired)
		tot = append(tot, x.Released-x.Start)
		t.Lost += x.Lost
	}
	t.Acquire, t.Release, t.Total = statsOf(acq), statsOf(rel), statsOf(tot)
	return t, cl, err
}

// MeasureFlush measures the MC flush (Flush) rounds times on node 0's CPU
// 0: the store to a loop-back region to the load that sees it come back.
func MeasureFlush(e *env.Env, c Config, rounds int) (Stats, *Cluster, error) {
	if rounds <= warmup {
		return Stats{}, nil, fmt.Errorf("mctb: rounds %d must be more than the %d warm-up round(s)", rounds, warmup)
	}
	cl, err := Build(e, c)
	if err != nil {
		return Stats{}, nil, err
	}
	r, err := cl.Loopback("mc-flush", 4)
	if err != nil {
		return Stats{}, cl, err
	}
	var out []clock.Time
	f := Flush{Tx: r.Tx[0], Rx: r.Rx[0], Patience: patience}
	cl.Node(0).CPUs[0].Run(cpu.Go(FlushProgram(f, rounds, cycles(c.Host.CPU.Clock, roundGap), &out)))
	res, err := finishRun(e, cl)
	if res.Stopped {
		return Stats{}, cl, err
	}
	if len(out) != rounds {
		return Stats{}, cl, errors.Join(err, fmt.Errorf("mctb: %d of the %d flushes came back within %v", len(out), rounds, patience))
	}
	return statsOf(out[warmup:]), cl, err
}

// Stamp is one event on a write's path and when it happened.
type Stamp struct {
	Event string
	At    clock.Time
}

// Leg is one block of a write's path: the time from one stamp to the
// next.
type Leg struct {
	Block    string
	From, To Stamp
}

// Time is the leg's duration.
func (l Leg) Time() clock.Time { return l.To.At - l.From.At }

// Breakdown is the one-way write of MeasureUnicast taken apart by block
// (issue 13 section 4: «the 5.2 µs broken down by block»): consecutive
// legs from the store's retirement to the load that returned the value.
// Their sum is Total, the round's latency.
type Breakdown struct {
	Legs  []Leg
	Total clock.Time
}

// legSpec is a stamp of the path of design section 3.1 and the block
// that follows it.
type legSpec struct {
	event, block string
}

// The stamps of a one-way write, in path order, each with the block that
// follows it.
var breakdownPath = []legSpec{
	{evStore, "CPU write buffer, cache"},
	{"N0 bus: tenure starts", "memory bus N0: arbitration to data"},
	{"N0 bus: data done", "bridge N0 (down)"},
	{"N0 PCI: tenure starts", "PCI N0: to data, 3 wait states/beat"},
	{"N0 PCI: data done", "adapter TX: FIFO, table, pipeline"},
	{evTx, "link up"},
	{"tail at hub", "hub: arbitration, order"},
	{evOrder, "hub: bus, forwarding delay"},
	{"hub sends to port 1", "link down"},
	{"tail at N1 adapter", "adapter RX: CRC, filter, pipeline"},
	{evRx, "receive DMA: setup"},
	{"N1 PCI: tenure starts", "PCI N1: DMA write"},
	{"N1 PCI: data done", "bridge N1 (up)"},
	{"N1 bus: tenure starts", "memory bus N1: write, invalidation"},
	{evMem, "reader's poll: the miss to memory"},
	{evSeen, ""},
}

// The stamps taken from the programs and the cluster's hooks.
const (
	evStore = "store retires (N0 CPU)"
	evTx    = "N0 adapter sends"
	evOrder = "hub orders"
	evRx    = "N1 DMA queued"
	evMem   = "N1 bus: in memory"
	evSeen  = "N1 load sees it"
)

// MeasureBreakdown runs MeasureUnicast with rounds rounds in an env of its
// own (seed seed) with a trace recorder, and takes its last round apart
// from measured stamps: the store's retirement and the poll that saw it
// (the programs), the memory-bus and PCI tenures of both nodes (their
// bus.* trace records: start cycle and last data phase), the packet leaving the
// sending adapter (Cluster.OnTx), its tail on the links (link.packet
// records), the hub's order (Cluster.OnOrder) and its send to node 1's
// port (the mc.deliver record), the receive DMA queued
// (Cluster.OnRx) and the write reaching memory (Cluster.OnMemory). A
// stamp that is missing merges its leg into the one before.
func MeasureBreakdown(c Config, seed uint64, rounds int) (Breakdown, Latency, error) {
	rec := trace.NewRecorder().OnlyKinds("bus.", "link.packet", "mc.deliver")
	e := env.New(env.Options{Seed: seed, Trace: rec})
	var ev []Stamp // the hooks' events, in time order
	hook := func(cl *Cluster) {
		cl.OnTx(func(now clock.Time, w *mchub.Write, _ []byte) {
			if w.Src == 0 {
				ev = append(ev, Stamp{evTx, now})
			}
		})
		cl.OnOrder(func(now clock.Time, w *mchub.Write, _ []int) {
			if w.Src == 0 {
				ev = append(ev, Stamp{evOrder, now})
			}
		})
		cl.OnRx(func(now clock.Time, w *mchub.Write, _ uint64, _ []byte) {
			if w.Src == 0 {
				ev = append(ev, Stamp{evRx, now})
			}
		})
		cl.OnMemory(func(now clock.Time, node int, _ *Expect) {
			if node == 1 {
				ev = append(ev, Stamp{evMem, now})
			}
		})
	}
	l, cl, err := measureOneWay(e, c, rounds, false, hook)
	if err != nil {
		return Breakdown{}, l, err
	}
	last := len(l.Rounds.Sent) - 1
	from, seen := l.Rounds.Sent[last], l.Rounds.Seen[last][0]
	// The first time of each stamp from the measured store on (looked up
	// by name only, never iterated).
	st := map[string]clock.Time{}
	set := func(name string, t clock.Time) {
		if _, ok := st[name]; !ok && t >= from {
			st[name] = t
		}
	}
	set(evStore, from)
	set(evSeen, seen)
	for _, s := range ev {
		set(s.Event, s.At)
	}
	reg := cl.Regions()[0]
	tx, rx := hexAddr(reg.Tx[0]), hexAddr(reg.Rx[1])
	mb, pci := c.Host.MemBus.Clock, c.Host.IOBus.Clock
	for _, r := range rec.Records() {
		if r.Time < from {
			continue
		}
		addr, _ := r.Get("addr")
		switch {
		case r.Kind == "link.packet" && r.Path == "MC.Link0.AB":
			set("tail at hub", r.Time)
		case r.Kind == "link.packet" && r.Path == "MC.Link1.BA":
			set("tail at N1 adapter", r.Time)
		case r.Kind == "mc.deliver" && r.Path == "MC.Hub":
			if p, _ := r.Get("port"); p == "1" {
				set("hub sends to port 1", r.Time)
			}
		case addr == tx && r.Path == "N0.Bus":
			set("N0 bus: tenure starts", startOf(r, mb))
			set("N0 bus: data done", r.Time)
		case addr == tx && r.Path == "N0.PCI":
			set("N0 PCI: tenure starts", startOf(r, pci))
			set("N0 PCI: data done", r.Time)
		case addr == rx && r.Path == "N1.PCI":
			set("N1 PCI: tenure starts", startOf(r, pci))
			set("N1 PCI: data done", r.Time)
		case addr == rx && r.Path == "N1.Bus":
			set("N1 bus: tenure starts", startOf(r, mb))
		}
	}
	var b Breakdown
	var prev Stamp
	block := ""
	for _, p := range breakdownPath {
		t, ok := st[p.event]
		if !ok {
			continue
		}
		s := Stamp{Event: p.event, At: t}
		if block != "" {
			b.Legs = append(b.Legs, Leg{Block: block, From: prev, To: s})
		}
		prev, block = s, p.block
	}
	b.Total = seen - from
	return b, l, nil
}

// startOf is the time of a bus record's start cycle (the tenure's first
// cycle: arbitration, or the address phase when arbitration is hidden).
func startOf(r trace.Record, clk clock.Clock) clock.Time {
	s, _ := r.Get("start")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return r.Time
	}
	return clk.TimeOf(clock.Cycle(n))
}

// hexAddr formats an address as trace records do (trace.Addr).
func hexAddr(a uint64) string { return trace.Addr("", a).Val }
