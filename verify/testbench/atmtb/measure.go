package atmtb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/tbutil"
	"github.com/nisim/nisim/verify/trace"
)

// The measurement drivers of atm-report (issue 15 section 4, design
// section 3.6): each builds a cluster in the env it is given, exports and
// imports the segments (untimed, at t=0), starts the programs of
// programs.go, runs to the end with every checker the cluster carries and
// returns what the programs measured. A checker's finding, a program that
// gave up or a run cut short is an error.

// Stats summarises a set of durations (tbutil.Stats).
type Stats = tbutil.Stats

// Warmup is the rounds a latency measurement leaves out of its mean: a
// tenth of them, at most 100 (issue 15 section 4: «mean of ≥1000 after
// warm-up»; design 3.6: 100 warm-up rounds before 1000), at least 1 (the
// first round finds every cache line cold).
func Warmup(rounds int) int { return max(1, min(100, rounds/10)) }

// StepStat is one code step as its cpu.step trace record gives it.
type StepStat struct {
	// Node is the node whose CPU ran it; Label the step's name.
	Node  int
	Label string
	// Instrs, Mem and IO are its instructions, memory and I/O accesses;
	// Cycles its CPU cycles from start to end.
	Instrs, Mem, IO int
	Cycles          uint64
}

// Latency is a latency measurement: the per-round figure after the
// warm-up (half a round trip for WRITEs, the whole trip for a READ, whose
// figure in the paper is a round trip of two cells), the interrupts the
// receivers took and the cells their handlers drained.
type Latency struct {
	Stats
	// Rounds is every round's figure, warm-up included.
	Rounds []clock.Time
	// IRQs are the interrupts the kernels took (every node), Drained the
	// cells they read.
	IRQs, Drained uint64
	// Run is the simulation's result.
	Run env.Result
}

// finishRun runs e to its end and joins the cluster's end-of-run checks
// and the programs' failure to the run's error.
func finishRun(e *env.Env, cl *Cluster, rs *Rounds) (env.Result, error) {
	res, err := e.Run()
	if res.Stopped {
		return res, errors.Join(err, errors.New("atmtb: the run was cut short (time limit)"))
	}
	before := e.Monitor.Count()
	ferr := cl.Finish()
	if e.Monitor.Count() > before {
		err = errors.Join(err, e.Monitor.Err())
	}
	return res, errors.Join(err, ferr, rs.Err)
}

// latencyOf summarises rounds after the warm-up, each divided by div.
func latencyOf(cl *Cluster, rs *Rounds, res env.Result, div clock.Time) (Latency, error) {
	l := Latency{Rounds: make([]clock.Time, len(rs.Trip)), Run: res}
	for i, t := range rs.Trip {
		l.Rounds[i] = t / div
	}
	w := Warmup(len(rs.Trip))
	for i, t := range l.Rounds[w:] {
		if t == 0 {
			return l, fmt.Errorf("atmtb: round %d never completed", w+i)
		}
	}
	l.Stats = tbutil.StatsOf(l.Rounds[w:])
	for _, n := range cl.Nodes {
		kc := n.Kernel.Counters()
		l.IRQs += kc.Interrupts
		for op := range kc.Received {
			l.Drained += kc.Received[op]
		}
	}
	return l, nil
}

// setUp builds the cluster of c in e and connects its segments.
func setUp(e *env.Env, c Config) (*Cluster, []uint8, error) {
	cl, err := Build(e, c)
	if err != nil {
		return nil, nil, err
	}
	segs, err := Connect(cl)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, segs, nil
}

// checkRounds refuses too few rounds for the warm-up.
func checkRounds(rounds int) error {
	if rounds < 2 {
		return fmt.Errorf("atmtb: rounds %d must be at least 2 (one warm-up)", rounds)
	}
	return nil
}

// checkBytes refuses a message that is not whole words of a segment.
func checkBytes(bytes int) error {
	if bytes < 4 || bytes%4 != 0 || bytes > SegBytes {
		return fmt.Errorf("atmtb: bytes %d must be a multiple of 4 in 4..%d", bytes, SegBytes)
	}
	return nil
}

// measureLatency is the frame of the latency drivers: it checks rounds,
// builds the cluster of c in e (its segments connected when connect),
// lets start start the programs (an error from it ends the measurement),
// runs to the end and summarises the rounds, each divided by div.
func measureLatency(e *env.Env, c Config, rounds int, connect bool, div clock.Time,
	start func(cl *Cluster, segs []uint8, rs *Rounds) error) (Latency, error) {
	if err := checkRounds(rounds); err != nil {
		return Latency{}, err
	}
	cl, segs, err := build(e, c, connect)
	if err != nil {
		return Latency{}, err
	}
	defer cl.Close()
	rs := &Rounds{Trip: make([]clock.Time, rounds)}
	if err := start(cl, segs, rs); err != nil {
		return Latency{}, err
	}
	res, err := finishRun(e, cl, rs)
	if err != nil {
		return Latency{Run: res}, err
	}
	return latencyOf(cl, rs, res, div)
}

// measureThroughput is the frame of the stream drivers: it builds the
// cluster of c in e (its segments connected when connect), starts the
// sender and receiver progs returns for the stream's mark and end, runs
// to the end and computes the figures of bytes.
func measureThroughput(e *env.Env, c Config, bytes int, connect bool,
	progs func(cl *Cluster, at func(now clock.Time), end *clock.Time, rs *Rounds) (send, recv func(p *cpu.Proc))) (Throughput, error) {
	cl, _, err := build(e, c, connect)
	if err != nil {
		return Throughput{}, err
	}
	defer cl.Close()
	rs := &Rounds{}
	var end clock.Time
	var m streamMark
	send, recv := progs(cl, m.at(cl), &end, rs)
	run(cl, send, recv)
	res, err := finishRun(e, cl, rs)
	if err != nil {
		return Throughput{Run: res}, err
	}
	return m.throughput(cl, bytes, end, res), nil
}

// build builds the cluster of c in e, its segments connected when
// connect (setUp).
func build(e *env.Env, c Config, connect bool) (*Cluster, []uint8, error) {
	if connect {
		return setUp(e, c)
	}
	cl, err := Build(e, c)
	return cl, nil, err
}

// run starts prog[i] on node i's CPU (nil: none).
func run(cl *Cluster, progs ...func(p *cpu.Proc)) {
	for i, pr := range progs {
		if pr != nil {
			cl.Nodes[i].CPUs[0].Run(cpu.Go(pr))
		}
	}
}

// MeasureRaw measures section 2.3's raw write (11 µs, L115, calibration
// C1): raw mode, the device mapped to the user, no kernel; node 0 sends a
// 10-word cell, node 1 polls it, copies its words to memory and sends one
// back; half the round trip.
func MeasureRaw(e *env.Env, c Config, rounds int) (Latency, error) {
	return measureLatency(e, c, rounds, false, 2, func(cl *Cluster, _ []uint8, rs *Rounds) error {
		run(cl, pingRaw(cl.Nodes[0].Kernel.Raw(), rounds, rs), pongRaw(cl.Nodes[1].Kernel.Raw(), rounds, rs))
		return nil
	})
}

// MeasureWrite measures the protected WRITE of bytes (a multiple of 4, up
// to SegBytes): node 0 WRITEs them to node 1's segment as WRITE traps of
// up to 40 bytes, node 1 spins on the last word and WRITEs the same back;
// half the round trip. Direct (c.Switched false): section 2.3's 30 µs
// for 40 bytes (calibration C2); switched: Table 2's 37 and 55 µs for 40
// and 80 bytes.
func MeasureWrite(e *env.Env, c Config, bytes, rounds int) (Latency, error) {
	return measurePingPong(e, c, bytes, rounds, pingWrite, pongWrite)
}

// measurePingPong measures a ping-pong of bytes between node 0's program
// first and node 1's second (each sending into the other's segment), half
// the round trip.
func measurePingPong(e *env.Env, c Config, bytes, rounds int,
	first, second func(k *rma.Kernel, reg, bytes, rounds int, rs *Rounds) func(p *cpu.Proc)) (Latency, error) {
	if err := checkRounds(rounds); err != nil {
		return Latency{}, err
	}
	if err := checkBytes(bytes); err != nil {
		return Latency{}, err
	}
	return measureLatency(e, c, rounds, true, 2, func(cl *Cluster, _ []uint8, rs *Rounds) error {
		run(cl, first(cl.Nodes[0].Kernel, 1, bytes, rounds, rs), second(cl.Nodes[1].Kernel, 0, bytes, rounds, rs))
		return nil
	})
}

// MeasureBlock measures a block transfer of bytes as MeasureWrite
// measures WRITEs: a ping-pong of one block transfer each way (section
// 2.3: «using the block transfer primitive to transfer single cells leads
// to higher latency because of the overhead of pointer checking»).
func MeasureBlock(e *env.Env, c Config, bytes, rounds int) (Latency, error) {
	return measurePingPong(e, c, bytes, rounds, pingBlock, pongBlock)
}

// RPCStackBytes is the server's stack in MeasureRPC: 25 cell slots
// (assumed: MW-128's 15 cells fit with room).
const RPCStackBytes = 1000

// RPCProc is MeasureRPC's one procedure's number: RPCSum.
const RPCProc = 1

// RPCSum is MeasureRPC's one procedure: the sum of its arguments (section
// 3.1.3: «the computation time required to calculate the result is
// negligible»).
func RPCSum(_ *cpu.Proc, args []uint32) uint32 {
	var s uint32
	for _, a := range args {
		s += a
	}
	return s
}

// RPCArgs returns the words arguments of MeasureRPC's call of round r
// (argument i is 1000·r + i) and their sum, the result RPCSum returns.
func RPCArgs(r, words int) (args []uint32, sum uint32) {
	args = make([]uint32, words)
	for i := range args {
		args[i] = uint32(1000*r + i)
		sum += args[i]
	}
	return args, sum
}

// MeasureRPC measures Table 4's RPC of words argument words returning an
// integer (Simple: 4, MW-32/64/128): node 0 serves one stack (host/rpc,
// c.RPC), node 1 binds and calls rounds times in a row; each call from
// Call's start to its result, the whole call (Table 4's «time required
// for an RPC»), after the warm-up.
func MeasureRPC(e *env.Env, c Config, words, rounds int) (Latency, error) {
	return measureLatency(e, c, rounds, true, 1, func(cl *Cluster, _ []uint8, rs *Rounds) error {
		srv, err := NewRPCServer(cl, 0, 1, RPCStackBytes, map[uint16]rpc.Proc{RPCProc: RPCSum})
		if err != nil {
			return err
		}
		b, err := rpc.Bind(cl.Nodes[1].Kernel, c.RPC, 0, srv.Server)
		if err != nil {
			return fmt.Errorf("atmtb: %w", err)
		}
		if words < 0 || words > b.MaxArgs() {
			return fmt.Errorf("atmtb: RPC words %d must be in 0..%d", words, b.MaxArgs())
		}
		done := false
		run(cl, func(p *cpu.Proc) { srv.Serve(p, func() bool { return done }) }, func(p *cpu.Proc) {
			defer func() { done = true }()
			for r := range rounds {
				args, want := RPCArgs(r, words)
				t0 := p.Now()
				got, err := srv.Call(b, p, RPCProc, args)
				if err == nil && got != want {
					err = fmt.Errorf("result %d, want %d", got, want)
				}
				if err != nil {
					rs.fail(fmt.Errorf("atmtb: RPC call %d: %w", r, err))
					return
				}
				rs.Trip[r] = p.Now() - t0
			}
		})
		return nil
	})
}

// readStamp is the word node 1's segment holds at word 9 for the READ
// measurement, set before the run.
const readStamp = 0x5EAD_0001

// readDst is the word offset in node 0's segment where READ replies land.
const readDst = 1024

// MeasureRead measures section 2.3's READ of 40 bytes (45 µs): node 0
// READs 10 words of node 1's segment into its own and spins until the
// reply's last word has landed; the whole trip (the paper's READ is a
// round trip of two cells).
func MeasureRead(e *env.Env, c Config, rounds int) (Latency, error) {
	return measureLatency(e, c, rounds, true, 1, func(cl *Cluster, segs []uint8, rs *Rounds) error {
		if err := setReadStamp(cl); err != nil {
			return err
		}
		run(cl, reader(cl.Nodes[0].Kernel, segs[0], readDst, rma.MaxWords, rounds, readStamp, rs))
		return nil
	})
}

// setReadStamp writes readStamp to word 9 of node 1's segment, the last
// word a 40-byte READ of it returns (untimed, before the run).
func setReadStamp(cl *Cluster) error {
	w := binary.LittleEndian.AppendUint32(nil, readStamp)
	if err := cl.Nodes[1].Memory().Storage().Write(SegBase+4*(rma.MaxWords-1), w); err != nil {
		return fmt.Errorf("atmtb: %w", err)
	}
	return nil
}

// Throughput is a stream's figure: Bytes of data from the sender's first
// trap (or send) to the receiver's seeing the last word, in the measured
// pass that follows a warm-up pass of the same stream.
type Throughput struct {
	Bytes int
	Time  clock.Time
	// MBps is Bytes per microsecond (10^6 bytes a second, the paper's
	// «Mbytes/s»); Mbps the same in megabits a second.
	MBps, Mbps float64
	// Cells is the cells node 0's board sent; LinkBusy the share of Time
	// node 0's link direction spent serialising them.
	Cells    uint64
	LinkBusy float64
	// IRQs is the interrupts the receiver took; Drained its handler's
	// cells.
	IRQs, Drained uint64
	// Run is the simulation's result.
	Run env.Result
}

// MeasureStream measures a one-way stream of bytes (a multiple of 4, up
// to SegBytes) from node 0 to node 1: back-to-back WRITE traps of 40
// bytes, or one block transfer (block); the receiver spins on the last
// word. Table 3's 4.3 MB/s («overlaps multiple write requests; switch
// overhead is included», section 2.4) switched; section 2.3's 4 KB at
// 34.7 Mb/s by writes and 35.4 by block transfer direct.
func MeasureStream(e *env.Env, c Config, bytes int, block bool) (Throughput, error) {
	if err := checkBytes(bytes); err != nil {
		return Throughput{}, err
	}
	return measureThroughput(e, c, bytes, true, func(cl *Cluster, at func(clock.Time), end *clock.Time, rs *Rounds) (func(*cpu.Proc), func(*cpu.Proc)) {
		return streamer(cl.Nodes[0].Kernel, 1, bytes, block, at, rs), sink(cl.Nodes[1].Kernel, bytes, end, rs)
	})
}

// streamMark is the state of the cluster when a stream's measured pass
// started: its time, node 0's cells sent and node 1's interrupts and
// cells received.
type streamMark struct {
	start          clock.Time
	cells          uint64
	irqs, received uint64
}

// received sums a kernel's received cells of every op.
func received(k *rma.Kernel) uint64 {
	var n uint64
	for _, x := range k.Counters().Received {
		n += x
	}
	return n
}

// at returns the function the sender calls when the measured pass
// starts.
func (m *streamMark) at(cl *Cluster) func(now clock.Time) {
	return func(now clock.Time) {
		k1 := cl.Nodes[1].Kernel
		*m = streamMark{start: now, cells: cl.Nodes[0].Board.Counters().TxCells,
			irqs: k1.Counters().Interrupts, received: received(k1)}
	}
}

// throughput computes the measured pass's figures: bytes from m's start
// to end.
func (m *streamMark) throughput(cl *Cluster, bytes int, end clock.Time, res env.Result) Throughput {
	d := end - m.start
	k1 := cl.Nodes[1].Kernel
	t := Throughput{Bytes: bytes, Time: d, Run: res, Cells: cl.Nodes[0].Board.Counters().TxCells - m.cells,
		IRQs: k1.Counters().Interrupts - m.irqs, Drained: received(k1) - m.received}
	if d > 0 {
		us := float64(d) / float64(clock.Microsecond)
		t.MBps = float64(bytes) / us
		t.Mbps = 8 * t.MBps
		lc := cl.Config.Link
		cell := lc.Clock.Period() * clock.Time((53+lc.BytesPerCycle-1)/lc.BytesPerCycle)
		t.LinkBusy = float64(clock.Time(t.Cells)*cell) / float64(d)
	}
	return t
}

// MeasureRawStream measures raw mode's stream (section 2.4's «what would
// be possible if we directly used the FORE host-network interface»):
// node 0 sends cells raw cells of 40 data bytes back to back, node 1 polls
// them and copies each to memory.
func MeasureRawStream(e *env.Env, c Config, cells int) (Throughput, error) {
	if cells < 1 || cells > SegBytes/40 {
		return Throughput{}, fmt.Errorf("atmtb: cells %d must be in 1..%d", cells, SegBytes/40)
	}
	return measureThroughput(e, c, cells*rma.DataBytes, false, func(cl *Cluster, at func(clock.Time), end *clock.Time, rs *Rounds) (func(*cpu.Proc), func(*cpu.Proc)) {
		return rawStreamer(cl.Nodes[0].Kernel.Raw(), cells, at, rs), rawSink(cl.Nodes[1].Kernel.Raw(), cells, end, rs)
	})
}

// PIO is the processor-visible cost of the board's three accesses on a
// real node (design F1/F2, re-measured with the 3max bridge's
// PIOReadWaitStates): a one-word STATUS read, a 56-byte cell load from the
// RX port and a 56-byte burst store to the TX port, each from the
// operation's issue to its retirement, with the TURBOchannel's busy and
// data cycles of the cell load.
type PIO struct {
	Status, CellLoad, CellStore clock.Time
	// CellLoadTCBusy and CellLoadTCData are the TURBOchannel cycles the
	// cell load kept the bus busy and moved data.
	CellLoadTCBusy, CellLoadTCData uint64
}

// pioQuiet is the CPU cycles MeasurePIO waits before each access so that
// the buses are idle. assumed: 50 cycles (2 µs), several posted writes'
// drain.
const pioQuiet = 50

// MeasurePIO measures node 0's PIO costs on the cluster of c, the
// programs driving the boards themselves (no kernel call): node 0 turns
// its RX interrupt off (CONTROL 0), reads STATUS, waits for the cell node
// 1 wrote to its TX port, loads it from the RX port, and after a fence
// burst-stores a cell to its own TX port.
func MeasurePIO(e *env.Env, c Config) (PIO, error) {
	cl, err := Build(e, c)
	if err != nil {
		return PIO{}, err
	}
	defer cl.Close()
	var out PIO
	rs := &Rounds{}
	base := c.BoardBase
	tc := cl.Nodes[0].PCI
	cell := func(src, dst int) []byte {
		b := make([]byte, fore.CellBytes)
		h, _ := rawHeader(src, dst).Encode()
		copy(b, h[:4])
		pl := rawPayload(words(rma.MaxWords, 0))
		copy(b[8:], pl[:])
		return b
	}
	run(cl, func(p *cpu.Proc) {
		p.Store32(base+fore.RegControl, 0)
		p.Fence()
		// Let the posted CONTROL write cross the bridge first: the STATUS
		// read then finds both buses idle.
		p.Compute(pioQuiet)
		t := p.Now()
		p.Load(base+fore.RegStatus, 4)
		out.Status = p.Now() - t
		deadline := p.Now() + patience
		for p.Load32(base+fore.RegStatus)&fore.StatusRxMask == 0 {
			if p.Now() > deadline {
				rs.fail(errPatience("PIO", 0))
				return
			}
		}
		p.Compute(pioQuiet)
		before := tc.Stats()
		t = p.Now()
		p.Load(base+fore.RxPort, fore.CellBytes)
		out.CellLoad = p.Now() - t
		after := tc.Stats()
		out.CellLoadTCBusy, out.CellLoadTCData = after.BusyCycles-before.BusyCycles, after.DataCycles-before.DataCycles
		p.Fence()
		t = p.Now()
		p.Do(cpu.Op{Kind: cpu.Store, Addr: base + fore.TxPort, Data: cell(0, 1), Burst: true})
		out.CellStore = p.Now() - t
	}, func(p *cpu.Proc) {
		// Node 1, its interrupt off too, sends the cell node 0 loads and
		// takes the one node 0 stores, leaving both RX FIFOs empty.
		p.Store32(base+fore.RegControl, 0)
		p.Do(cpu.Op{Kind: cpu.Store, Addr: base + fore.TxPort, Data: cell(1, 0), Burst: true})
		deadline := p.Now() + patience
		for p.Load32(base+fore.RegStatus)&fore.StatusRxMask == 0 {
			if p.Now() > deadline {
				rs.fail(errPatience("PIO", 1))
				return
			}
		}
		p.Load(base+fore.RxPort, fore.CellBytes)
	})
	_, err = finishRun(e, cl, rs)
	return out, err
}

// traceGap is the CPU cycles TraceSteps leaves between its warm-up
// operation and the traced one. assumed: 2500 cycles (100 µs), twice a
// READ's round trip: the warm-up has ended on both nodes.
const traceGap = 2500

// TraceSteps runs one operation twice on a fresh two-node direct cluster
// of c with cpu.step records kept, the first a warm-up (caches, kernel
// tables), and returns the code steps of both CPUs that ended after the
// second one started, in the order they ended: op "write" (a 40-byte
// WRITE, Table 1's 209 instructions) or "read" (a 40-byte READ, 375).
func TraceSteps(c Config, seed uint64, op string) ([]StepStat, error) {
	if op != "write" && op != "read" {
		return nil, fmt.Errorf("atmtb: TraceSteps op %q must be write or read", op)
	}
	e := env.New(env.Options{Seed: seed})
	rec := trace.NewRecorder().OnlyKinds("cpu.step")
	e.Trace = rec
	cl, segs, err := setUp(e, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	rs := &Rounds{}
	var traced clock.Time
	k := cl.Nodes[0].Kernel
	if op == "write" {
		run(cl, func(p *cpu.Proc) {
			for r := range 2 {
				if r == 1 {
					p.Compute(traceGap)
					traced = p.Now()
				}
				if s := k.Write(p, 1, 0, rma.MaxWords, false, words(rma.MaxWords, r)); s != rma.OK {
					rs.fail(fmt.Errorf("atmtb: WRITE refused: %v", s))
				}
			}
		}, func(p *cpu.Proc) {
			for r := range 2 {
				if !spin(p, lastWord(0, rma.DataBytes), stamp(r)) {
					rs.fail(errPatience("WRITE", r))
				}
			}
		})
	} else {
		if err := setReadStamp(cl); err != nil {
			return nil, err
		}
		dst := SegBase + uint64(4*(readDst+rma.MaxWords-1))
		run(cl, func(p *cpu.Proc) {
			for r := range 2 {
				if r == 1 {
					p.Compute(traceGap)
					traced = p.Now()
				}
				p.Store32(dst, 0)
				if _, s := k.Read(p, 1, 0, rma.MaxWords, int(segs[0]), readDst, false); s != rma.OK {
					rs.fail(fmt.Errorf("atmtb: READ refused: %v", s))
					return
				}
				if !spin(p, dst, readStamp) {
					rs.fail(errPatience("READ", r))
					return
				}
			}
		})
	}
	if _, err := finishRun(e, cl, rs); err != nil {
		return nil, err
	}
	var out []StepStat
	for _, r := range rec.Records() {
		if r.Time < traced {
			continue
		}
		s := StepStat{Label: field(r, "step")}
		fmt.Sscanf(r.Path, "N%d.", &s.Node)
		s.Instrs, _ = strconv.Atoi(field(r, "instrs"))
		s.Mem, _ = strconv.Atoi(field(r, "mem"))
		s.IO, _ = strconv.Atoi(field(r, "io"))
		s.Cycles, _ = strconv.ParseUint(field(r, "cycles"), 10, 64)
		out = append(out, s)
	}
	return out, nil
}

// field returns a record's field (empty if absent).
func field(r trace.Record, k string) string {
	v, _ := r.Get(k)
	return v
}
