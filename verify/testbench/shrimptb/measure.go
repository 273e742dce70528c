package shrimptb

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/tbutil"
	"github.com/nisim/nisim/verify/trace"
)

// The measurement drivers of shrimp-report (issue 14 section 5, design
// section 7): each builds a cluster in the env it is given, exports,
// imports and binds what it needs (untimed, before time 0: the kernel's
// table writes at t=0), starts the programs of programs.go on CPU 0 of
// the nodes involved, runs to the end with every checker on and returns
// what the programs measured. A checker's finding, a program that gave up
// or a run cut short is an error.

const (
	// roundGap is the sender's pause between two rounds of a latency
	// measurement, in CPU cycles. assumed: 1200 cycles, 20 µs at 60 MHz,
	// about three times the paper's 6 µs, so that a round has arrived
	// before the next starts.
	roundGap = 1200
	// patience is how long a program polls before giving up. assumed: 2
	// ms, over 300 times the paper's latencies: no correct transfer takes
	// that long on an idle cluster.
	patience = 2 * clock.Millisecond
	// warmup is the rounds a latency measurement leaves out: the first
	// round's poll and send find their lines and pages cold.
	warmup = 1
	// RecvBase is where a receiver exports its buffer; SendBase where a
	// sender keeps its bound or source pages; FlagBase the flag pages.
	// assumed: clear of address 0 and of each other, far below the
	// kernel's proxy pool (vmmc.Kernel.UserLimit).
	RecvBase = 0x10_0000
	SendBase = 0x40_0000
	FlagBase = 0x0F_0000
)

// Stats summarises a set of durations (tbutil.Stats).
type Stats = tbutil.Stats

// statsOf summarises ds (zero Stats for none).
func statsOf(ds []clock.Time) Stats { return tbutil.StatsOf(ds) }

// finishRun runs e to its end and joins the cluster's end-of-run checks
// to the run's error (a run cut short is an error by itself).
func finishRun(e *env.Env, cl *Cluster) (env.Result, error) {
	res, err := e.Run()
	if res.Stopped {
		return res, errors.Join(err, errors.New("shrimptb: the run was cut short (time limit)"))
	}
	before := e.Monitor.Count()
	ferr := cl.Finish()
	if e.Monitor.Count() > before {
		err = errors.Join(err, e.Monitor.Err())
	}
	return res, errors.Join(err, ferr)
}

// pair is a sender process on node src with a proxy of a buffer the
// receiver process on node dst exported.
type pair struct {
	tx, rx *vmmc.Process
	px     *vmmc.Proxy
}

// connect exports bytes at RecvBase on dst, imports them on src and, if
// bind, binds SendBase on src to the whole buffer for automatic update.
func connect(cl *Cluster, src, dst, bytes int, bind, combine bool, subpage int) (pair, error) {
	rx := process(cl, dst)
	tx := process(cl, src)
	b, err := rx.Export(nil, RecvBase, bytes, false)
	if err != nil {
		return pair{}, err
	}
	px, err := tx.Import(nil, b)
	if err != nil {
		return pair{}, err
	}
	if bind {
		if err := tx.Bind(nil, SendBase, px, 0, bytes, combine, subpage); err != nil {
			return pair{}, err
		}
	}
	return pair{tx: tx, rx: rx, px: px}, nil
}

// process returns the running process of node i, making one if the
// kernel has none.
func process(cl *Cluster, i int) *vmmc.Process {
	k := cl.Nodes[i].Kernel
	if p := k.Current(); p != nil {
		return p
	}
	return k.NewProcess(fmt.Sprintf("n%d.p0", i))
}

// start runs prog on CPU 0 of node i.
func start(cl *Cluster, i int, prog func(p *cpu.Proc)) { cl.Nodes[i].CPUs[0].Run(cpu.Go(prog)) }

// Latency is a one-way measurement: Lat the latencies after the warm-up,
// Overhead the sender's call times (Done - Sent), Rounds every round as
// measured, Run the simulation's result.
type Latency struct {
	Lat, Overhead Stats
	Rounds        *Rounds
	Run           env.Result
}

func roundsResult(r *Rounds, res env.Result, err error) (Latency, error) {
	l := Latency{Rounds: r, Run: res}
	lat, ok := r.Latencies(warmup)
	if !ok && err == nil {
		err = fmt.Errorf("shrimptb: %d of the %d rounds arrived within %v", len(lat)+warmup, len(r.Sent), patience)
	}
	ov, _ := r.Overheads(warmup)
	l.Lat, l.Overhead = statsOf(lat), statsOf(ov)
	return l, err
}

// MeasureAULatency measures the automatic-update one-word latency of
// section 4.2 (3.71 µs): node 0 stores a word to a page bound (without
// combining) to node 1's buffer, node 1 polls it; rounds rounds, the first
// a warm-up.
func MeasureAULatency(e *env.Env, c Config, rounds int) (Latency, *Cluster, error) {
	if rounds <= warmup {
		return Latency{}, nil, fmt.Errorf("shrimptb: rounds %d must be more than the %d warm-up round(s)", rounds, warmup)
	}
	cl, err := Build(e, c)
	if err != nil {
		return Latency{}, nil, err
	}
	pr, err := connect(cl, 0, 1, c.NI.PageBytes, true, false, c.NI.PageBytes)
	if err != nil {
		cl.Close()
		return Latency{}, nil, err
	}
	_ = pr
	r := NewRounds(rounds)
	o := AUOneWay{Local: SendBase, Remote: RecvBase, Rounds: rounds, Gap: roundGap, Patience: patience}
	start(cl, 0, o.Writer(r))
	start(cl, 1, o.Reader(r))
	res, err := finishRun(e, cl)
	l, err := roundsResult(r, res, err)
	return l, cl, err
}

// MeasureDULatency measures the deliberate-update latency of section 4.1
// (6 µs): node 0 sends bytes from its source page to node 1's buffer,
// node 1 polls the first word. With async the send returns once started
// (Params.AsyncSend); Overhead is then the send overhead of section 4.3.
func MeasureDULatency(e *env.Env, c Config, rounds, bytes int, async bool) (Latency, *Cluster, error) {
	return measureDU(e, c, rounds, bytes, async, false)
}

// MeasureDULatencyClean is MeasureDULatency with the source page
// write-through, so that the round's word is in memory when the engine
// reads it (no dirty line to write back on the read's snoop): the
// latency of a send whose buffer the CPU does not hold modified.
func MeasureDULatencyClean(e *env.Env, c Config, rounds, bytes int) (Latency, *Cluster, error) {
	return measureDU(e, c, rounds, bytes, false, true)
}

func measureDU(e *env.Env, c Config, rounds, bytes int, async, clean bool) (Latency, *Cluster, error) {
	if rounds <= warmup {
		return Latency{}, nil, fmt.Errorf("shrimptb: rounds %d must be more than the %d warm-up round(s)", rounds, warmup)
	}
	if bytes < 4 || bytes > c.NI.PageBytes {
		return Latency{}, nil, fmt.Errorf("shrimptb: DU latency size %d must be 4..%d", bytes, c.NI.PageBytes)
	}
	c.Params.AsyncSend = async
	cl, err := Build(e, c)
	if err != nil {
		return Latency{}, nil, err
	}
	pr, err := connect(cl, 0, 1, c.NI.PageBytes, false, false, 0)
	if err == nil && clean {
		err = cl.Nodes[0].Mem.SetPolicy(SendBase, uint64(c.NI.PageBytes), memsys.WriteThrough)
	}
	if err != nil {
		cl.Close()
		return Latency{}, nil, err
	}
	r := NewRounds(rounds)
	var serr error
	o := DUOneWay{Proc: pr.tx, Proxy: pr.px, Src: SendBase, Bytes: bytes, Remote: RecvBase, Rounds: rounds,
		Gap: roundGap, Patience: patience, Err: &serr}
	start(cl, 0, o.Sender(r))
	start(cl, 1, o.Reader(r))
	res, err := finishRun(e, cl)
	l, err := roundsResult(r, res, errors.Join(err, serr))
	return l, cl, err
}

// Bandwidth is a streaming measurement: Bytes delivered in Time (from
// the first store or send to the receiver seeing the flag), MBps their
// ratio (10^6 bytes per second).
type Bandwidth struct {
	Bytes int
	Time  clock.Time
	MBps  float64
	Run   env.Result
}

func bandwidth(bytes int, from, to clock.Time) Bandwidth {
	b := Bandwidth{Bytes: bytes, Time: to - from}
	if b.Time > 0 {
		b.MBps = float64(bytes) / (float64(b.Time) / float64(clock.Microsecond))
	}
	return b
}

// MeasureAUStream is the block-streaming workload (design section 7;
// section 4.5.1 «combining is very helpful for applications that would
// otherwise use deliberate update. These applications send large messages
// to contiguous addresses»): node 0 writes bytes (whole pages) through an
// automatic-update binding to node 1 in stores of storeBytes, combining
// off or on (sub-page = the page), then a flag on a bound flag page; node
// 1 polls the flag. bytes at 4..Bytes of bandwidth: no paper value for the
// curve, the ratio off/on is section 4.5.1's.
func MeasureAUStream(e *env.Env, c Config, bytes, storeBytes int, combine bool) (Bandwidth, *Cluster, error) {
	pg := c.NI.PageBytes
	if bytes < pg || bytes%pg != 0 {
		return Bandwidth{}, nil, fmt.Errorf("shrimptb: stream bytes %d must be a positive multiple of the %d-byte page", bytes, pg)
	}
	if storeBytes != 4 && storeBytes != 8 {
		return Bandwidth{}, nil, fmt.Errorf("shrimptb: store bytes %d must be 4 or 8", storeBytes)
	}
	cl, err := Build(e, c)
	if err != nil {
		return Bandwidth{}, nil, err
	}
	// The data and the flag are one buffer, the flag in the page after
	// the data, so that both go through one binding (one order domain).
	pr, err := connect(cl, 0, 1, bytes+pg, true, combine, pg)
	if err != nil {
		cl.Close()
		return Bandwidth{}, nil, err
	}
	_ = pr
	var from, seen clock.Time = 0, Unseen
	s := AUStream{Local: SendBase, Bytes: bytes, StoreBytes: storeBytes, Flag: SendBase + uint64(bytes), Value: 0x5eed}
	start(cl, 0, s.Program(&from))
	start(cl, 1, FlagReader(RecvBase+uint64(bytes), 0x5eed, streamPatience(bytes), &seen))
	res, err := finishRun(e, cl)
	if seen == Unseen && err == nil {
		err = fmt.Errorf("shrimptb: the stream's flag never arrived")
	}
	b := bandwidth(bytes, from, seen)
	b.Run = res
	return b, cl, err
}

// streamPatience is how long the receiver waits for a stream of bytes:
// assumed: 1 µs per byte (1 MB/s, far below any path's rate) plus the
// latency patience.
func streamPatience(bytes int) clock.Time {
	return patience + clock.Time(bytes)*clock.Microsecond
}

// MeasureDUStream sends bytes from node 0 to node 1 in deliberate updates
// of size bytes (bandwidth against size; no paper value), then a flag
// word; node 1 polls the flag.
func MeasureDUStream(e *env.Env, c Config, bytes, size int, async bool) (Bandwidth, *Cluster, error) {
	pg := c.NI.PageBytes
	if bytes < 4 || size < 4 || size > bytes {
		return Bandwidth{}, nil, fmt.Errorf("shrimptb: DU stream of %d bytes in sends of %d: both at least 4, size at most bytes", bytes, size)
	}
	c.Params.AsyncSend = async
	cl, err := Build(e, c)
	if err != nil {
		return Bandwidth{}, nil, err
	}
	span := (bytes + pg - 1) / pg * pg
	pr, err := connect(cl, 0, 1, span+pg, false, false, 0)
	if err != nil {
		cl.Close()
		return Bandwidth{}, nil, err
	}
	var from, seen clock.Time = 0, Unseen
	var serr error
	s := DUStream{Proc: pr.tx, Proxy: pr.px, Src: SendBase, Bytes: bytes, Size: size,
		Flag: SendBase + uint64(span), FlagOff: uint64(span), Value: 0x5eed, Err: &serr}
	start(cl, 0, s.Program(&from))
	start(cl, 1, FlagReader(RecvBase+uint64(span), 0x5eed, streamPatience(bytes), &seen))
	res, err := finishRun(e, cl)
	err = errors.Join(err, serr)
	if seen == Unseen && err == nil {
		err = fmt.Errorf("shrimptb: the stream's flag never arrived")
	}
	b := bandwidth(bytes, from, seen)
	b.Run = res
	return b, cl, err
}

// FIFOBound is the outgoing-FIFO measurement of section 4.5.2: senders
// nodes flood node 0 with per-store automatic updates; each sender's
// FIFO rises past the threshold, the kernel deschedules the writer, and
// the growth above the threshold is what the FIFO must hold beyond it:
// «the memory write bandwidth multiplied by the time it takes the CPU to
// recognize the threshold interrupt».
type FIFOBound struct {
	// Overshoot is the largest FIFO growth above the threshold over the
	// senders (FIFOMax - FIFOThreshold), in bytes.
	Overshoot int
	// FIFOMax is the largest occupancy of any sender.
	FIFOMax int
	// Rate is the sender's measured FIFO fill rate in bytes per µs (the
	// words its stores made over the time it stored, before any
	// deschedule); Recognition the interrupt's recognition delay.
	Rate        float64
	Recognition clock.Time
	// Thresholds and Deschedules sum the senders' threshold interrupts
	// and the kernel's deschedules; Overflows must stay 0.
	Thresholds, Deschedules, Overflows uint64
	Run                                env.Result
}

// MeasureFIFOBound runs senders (1..Nodes-1) flooding node 0 with stores
// each, one packet per store (no combining).
func MeasureFIFOBound(e *env.Env, c Config, senders, stores int) (FIFOBound, *Cluster, error) {
	if senders < 1 || senders >= c.Nodes {
		return FIFOBound{}, nil, fmt.Errorf("shrimptb: FIFO bound senders %d must be 1..%d", senders, c.Nodes-1)
	}
	cl, err := Build(e, c)
	if err != nil {
		return FIFOBound{}, nil, err
	}
	pg := c.NI.PageBytes
	rx := process(cl, 0)
	lasts := make([]clock.Time, senders+1)
	for s := 1; s <= senders; s++ {
		b, err := rx.Export(nil, RecvBase+uint64(s*pg), pg, false)
		if err != nil {
			cl.Close()
			return FIFOBound{}, nil, err
		}
		tx := process(cl, s)
		px, err := tx.Import(nil, b)
		if err == nil {
			err = tx.Bind(nil, SendBase, px, 0, pg, false, pg)
		}
		if err != nil {
			cl.Close()
			return FIFOBound{}, nil, err
		}
		start(cl, s, AUFlood{Local: SendBase, Stores: stores, Span: pg}.Program(&lasts[s]))
	}
	res, err := finishRun(e, cl)
	f := FIFOBound{Run: res, Recognition: c.Host.CPU.Clock.TimeOf(clock.Cycle(c.Host.OS.InterruptDelay))}
	for s := 1; s <= senders; s++ {
		n := cl.Nodes[s]
		ct := n.NI.Counters()
		f.FIFOMax = max(f.FIFOMax, ct.FIFOMax)
		f.Thresholds += ct.ThresholdIRQs
		f.Overflows += ct.Overflows
		f.Deschedules += n.Kernel.Stats().Deschedules
	}
	f.Overshoot = f.FIFOMax - c.NI.FIFOThreshold
	// The fill rate: one sender's FIFO words per store over its store
	// time without deschedules (stores / (last store - descheduled)).
	n1 := cl.Nodes[1]
	busy := lasts[1] - n1.Kernel.Stats().Descheduled
	if busy > 0 {
		words := c.NI.PacketWords(4) * c.NI.FIFOWidthBytes
		f.Rate = float64(stores*words) / (float64(busy) / float64(clock.Microsecond))
	}
	return f, cl, err
}

// DUQueue is the deliberate-update queue micro-benchmark (section
// 4.5.3): Count asynchronous sends of Size bytes back to back, the time
// from the first call to the last transfer done.
type DUQueue struct {
	Time clock.Time
	Busy uint64 // initiations refused busy and retried
	Run  env.Result
}

// MeasureDUQueue runs the micro-benchmark with the NI's DUQueue as c
// gives it.
func MeasureDUQueue(e *env.Env, c Config, count, size int) (DUQueue, *Cluster, error) {
	if count < 1 || size < 4 || size > c.NI.PageBytes {
		return DUQueue{}, nil, fmt.Errorf("shrimptb: DU queue micro: count %d at least 1, size %d 4..%d", count, size, c.NI.PageBytes)
	}
	c.Params.AsyncSend = true
	cl, err := Build(e, c)
	if err != nil {
		return DUQueue{}, nil, err
	}
	pg := c.NI.PageBytes
	pr, err := connect(cl, 0, 1, pg, false, false, 0)
	if err != nil {
		cl.Close()
		return DUQueue{}, nil, err
	}
	var from, to clock.Time
	var serr error
	start(cl, 0, AsyncBurst{Proc: pr.tx, Proxy: pr.px, Src: SendBase, Count: count, Size: size, Span: pg, Err: &serr}.Program(&from, &to))
	res, err := finishRun(e, cl)
	return DUQueue{Time: to - from, Busy: pr.tx.Stats().Busy, Run: res}, cl, errors.Join(err, serr)
}

// Stamp is one event on a transfer's path and when it happened.
type Stamp struct {
	Event string
	At    clock.Time
}

// Leg is the time between two consecutive stamps.
type Leg struct {
	From, To Stamp
}

// Time is the leg's duration.
func (l Leg) Time() clock.Time { return l.To.At - l.From.At }

// Breakdown is a one-word latency taken apart (issue 14 section 5: «the
// 3.71 µs broken down by block»): consecutive legs between measured
// stamps, from the store's retirement (AU) or the send call (DU) to the
// load that returned the value; their sum is Total, the round's latency.
type Breakdown struct {
	Legs  []Leg
	Total clock.Time
}

// MeasureBreakdown runs MeasureAULatency (du false) or MeasureDULatency
// (du true, a 4-byte synchronous send) with rounds rounds in an env of
// its own (seed seed) with a trace recorder, and takes its last round
// apart from the first record of each kind on the path after the round
// began: node 0's UDMA references and DU engine (shrimp.udma, shrimp.du),
// its Xpress and EISA tenures at the word's address (bus records, start
// and end), its NI's snoop, packet and transmission (shrimp.snoop,
// shrimp.pkt, shrimp.tx), node 1's NI receiving it and its incoming DMA
// burst (shrimp.rx, shrimp.rxdma), node 1's EISA and Xpress writes and
// the poll that saw the value. Stamps are ordered by time; a kind that is
// missing is left out, its time going to the leg around it.
func MeasureBreakdown(c Config, seed uint64, rounds int, du bool) (Breakdown, Latency, error) {
	rec := trace.NewRecorder().OnlyKinds("bus.", "shrimp.")
	e := env.New(env.Options{Seed: seed, Trace: rec})
	var l Latency
	var err error
	first := "store retires (N0 CPU)"
	if du {
		first = "send called (N0 CPU)"
		l, _, err = MeasureDULatency(e, c, rounds, 4, false)
	} else {
		l, _, err = MeasureAULatency(e, c, rounds)
	}
	if err != nil {
		return Breakdown{}, l, err
	}
	last := len(l.Rounds.Sent) - 1
	from, seen := l.Rounds.Sent[last], l.Rounds.Seen[last]
	st := []Stamp{{first, from}}
	have := map[string]bool{} // looked up only
	set := func(name string, t clock.Time) {
		if !have[name] && t >= from && t <= seen {
			have[name] = true
			st = append(st, Stamp{name, t})
		}
	}
	tx, rx := trace.Addr("", SendBase).Val, trace.Addr("", RecvBase).Val
	mb, eisa := c.Host.MemBus.Clock, c.Host.IOBus.Clock
	for _, r := range rec.Records() {
		addr, _ := r.Get("addr")
		op, _ := r.Get("op")
		ev, _ := r.Get("ev")
		isBus := strings.HasPrefix(r.Kind, "bus.")
		switch {
		case r.Kind == "shrimp.udma" && r.Path == "N0.NI" && op == "store":
			set("N0 UDMA STORE latched", r.Time)
		case r.Kind == "shrimp.udma" && r.Path == "N0.NI" && op == "load":
			set("N0 UDMA LOAD answered", r.Time)
		case r.Kind == "shrimp.du" && r.Path == "N0.NI":
			set("N0 DU engine: "+ev, r.Time)
		case r.Kind == "shrimp.snoop" && r.Path == "N0.NI":
			set("N0 NI snoops the write", r.Time)
		case r.Kind == "shrimp.pkt" && r.Path == "N0.NI":
			set("N0 NI makes the packet", r.Time)
		case r.Kind == "shrimp.tx" && r.Path == "N0.NI":
			set("N0 NIC sends the head", r.Time)
		case r.Kind == "shrimp.rx" && r.Path == "N1.NI":
			set("N1 NI has the packet", r.Time)
		case r.Kind == "shrimp.rxdma" && r.Path == "N1.NI":
			set("N1 incoming DMA burst ready", r.Time)
		case isBus && addr == tx && r.Path == "N0.Bus":
			set("N0 Xpress tenure starts", startOf(r, mb))
			set("N0 Xpress data done", r.Time)
		case isBus && addr == tx && r.Path == "N0."+IOBusName:
			set("N0 EISA DMA read starts", startOf(r, eisa))
			set("N0 EISA DMA read done", r.Time)
		case isBus && addr == rx && r.Path == "N1."+IOBusName:
			set("N1 EISA tenure starts", startOf(r, eisa))
			set("N1 EISA data done", r.Time)
		case isBus && addr == rx && r.Path == "N1.Bus":
			set("N1 Xpress tenure starts", startOf(r, mb))
			set("N1 Xpress data done", r.Time)
		}
	}
	// Stable: the first stamp stays first, equal times keep the records'
	// order.
	slices.SortStableFunc(st, func(a, b Stamp) int { return cmp.Compare(a.At, b.At) })
	st = append(st, Stamp{"N1 load sees it", seen})
	var b Breakdown
	for i := 1; i < len(st); i++ {
		b.Legs = append(b.Legs, Leg{From: st[i-1], To: st[i]})
	}
	b.Total = seen - from
	return b, l, nil
}

// startOf is the time of a bus record's start cycle (the tenure's first
// cycle).
func startOf(r trace.Record, clk clock.Clock) clock.Time {
	s, _ := r.Get("start")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return r.Time
	}
	return clk.TimeOf(clock.Cycle(n))
}
