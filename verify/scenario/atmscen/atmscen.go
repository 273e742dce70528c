// Package atmscen holds the runnable experiments of the FORE ATM
// remote-memory cluster (hib/fore, host/rma, verify/testbench/atmtb):
// atm-report, the figures of atm-remote-memory-access.txt sections 2.3 and
// 2.4 measured on the model next to the paper's values, with the error of
// each (issue 15 section 4), and atm-traffic, random remote-memory
// operations with every checker on (issue 15 section 5).
//
// Three figures are calibration, each fitted by one parameter
// (each `calibrated:` where its parameter lives: fore.TCA100,
// atmtb.DefaultConfig, rpc.Defaults): the raw polled write (11 µs) by
// the board's CellLatency (C1), the protected 40-byte WRITE (30 µs) by
// host memory's latency MemCycles (C2) and RPC Simple (93 µs, Table 4)
// by the RPC stubs' instructions (C3). Everything else is validation,
// not fitted, reported with its error and explained in
// docs/atm-validation.md.
package atmscen

import (
	"fmt"
	"math"

	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/atmtb"
	"github.com/nisim/nisim/waves"
)

// paper is where the figures come from.
const paper = "atm-remote-memory-access.txt"

// The paper's figures.
const (
	// 2.3 (L115): «we measured the time to do a write operation at about
	// 11 µs» (raw mode).
	paperRaw = 11.0 // µs
	// 2.3 (L111): «a remote write operation containing one ATM cell (40
	// data bytes) takes 30 µs».
	paperWrite = 30.0 // µs
	// 2.3 (L111): «A remote read takes longer than a write — 45 µs».
	paperRead = 45.0 // µs
	// 2.3 (L115): «our software implementation has added about 19 µs to
	// the write operation».
	paperWriteOverhead = 19.0 // µs
	// 2.3 (L115, L126): «For read operations the increased cost is
	// greater (about 23 µs)».
	paperReadOverhead = 23.0 // µs
	// Table 2: DECstation 5000/200 ATM, 40 and 80 bytes, via the switch.
	paperT2x40, paperT2x80 = 37.0, 55.0 // µs
	// Table 3: «Sustained Throughput Mbytes/s ... 4.3».
	paperT3 = 4.3 // MB/s
	// 2.3 (L130): «a 4K remote block transfer to be 35.4 Mb/s, compared
	// to 34.7 Mb/s using remote writes».
	paperBlock4K, paperWrites4K = 35.4, 34.7 // Mb/s
	// 2.4 (L150): «Our implementation achieves 70% of what would be
	// possible if we directly used the FORE host-network interface».
	paperRawShare = 70.0 // %
	// Table 1: 209 and 375 instructions.
	paperWriteInstrs, paperReadInstrs = 209, 375
	// Table 4: «DEC 5000/200 93 300 488 698» µs: Simple (4 integer
	// arguments), MW-32, MW-64, MW-128 (32, 64, 128 words).
	paperRPCSimple = 93.0 // µs
	// 2.3: READ − WRITE, 45 − 30.
	paperReadMinusWrite = paperRead - paperWrite // µs
)

// Tolerances of issue 15 section 4: calibration within 10%, validation
// targeted within 20% (reported, not held); block ≈ writes within 5%
// (design 3.6); the link is not the bottleneck below 50% busy.
const (
	calibTolerance = 10
	validTarget    = 20
	blockTolerance = 5
	linkBottleneck = 0.5
)

// Scenarios returns the ATM scenarios.
func Scenarios() []*scenario.Scenario {
	const sys = "ATM"
	// Typical run time: the defaults, measured once on a 2-core machine
	// shared with other jobs, 2026-11-27 (documentation only).
	return []*scenario.Scenario{
		ReportScenario().In(sys, "20 s").WithWaves(view(reportSpan)),
		TrafficScenario().In(sys, "1 s").WithWaves(view(0)),
	}
}

// ReportParams are atm-report's parameters.
type ReportParams struct {
	// Rounds is the round trips of each latency measurement (a tenth, at
	// most 100, warm-up: atmtb.Warmup).
	Rounds int `toml:"rounds"`
	// RPCRounds is the calls of each RPC measurement (a tenth, at most
	// 100, warm-up).
	RPCRounds int `toml:"rpc_rounds"`
	// StreamCells is the 40-byte WRITEs of Table 3's stream and the raw
	// stream's cells.
	StreamCells int `toml:"stream_cells"`
	// CellLatency is the board's TX and RX pipe (C1), MemCycles host
	// memory's latency (C2): the calibrated parameters, keys so that a
	// sweep can refit them.
	CellLatency int `toml:"cell_latency"`
	MemCycles   int `toml:"mem_cycles"`
	// StubInstrs is the RPC stubs' instructions per call (C3), RPCN the
	// cells per RPC message (section 3.1.2's N).
	StubInstrs int `toml:"stub_instrs"`
	RPCN       int `toml:"rpc_n"`
}

// ReportDefaults are the defaults of atm-report.
func ReportDefaults() *ReportParams {
	c := atmtb.DefaultConfig()
	return &ReportParams{
		// issue 15 section 4: «mean of ≥1000 after warm-up»: 1100, 100
		// warm-up.
		Rounds: 1100,
		// assumed: 110, 100 measured: a call is a sequence of WRITEs the
		// rounds of the latencies above already average; MW-128 takes
		// 0.3 ms a call.
		RPCRounds: 110,
		// design 3.6: 250 < the RX FIFO's 300 cells (AT-P6).
		StreamCells: 250,
		CellLatency: c.Board.CellLatency,
		MemCycles:   c.MemCycles,
		StubInstrs:  c.RPC.StubInstrs,
		RPCN:        c.RPC.N,
	}
}

// Bounds of the keys: assumed, each the simulated time a run may take.
const (
	maxRounds = 100_000 // 100,000 READs of 45 µs: 4.5 s of simulated time
)

// Keys implements scenario.Keyed.
func (p *ReportParams) Keys() []scenario.KeySpec {
	c := atmtb.DefaultConfig()
	return []scenario.KeySpec{
		scenario.Key("rounds", "round trips per latency measurement (a tenth, at most 100, warm-up)").Range(2, maxRounds).
			From("issue 15 section 4: ≥1000 after warm-up"),
		scenario.Key("rpc_rounds", "calls per RPC measurement (a tenth, at most 100, warm-up)").Range(2, maxRounds).
			From("assumed: 110"),
		scenario.Key("stream_cells", "cells").Range(1, float64(c.Board.RxCells-1)).
			From("design 3.6: 250, less than the RX FIFO (AT-P6)"),
		scenario.Key("cell_latency", "link cycles each side").Range(0, 10_000).
			From("calibrated: C1, the raw write's 11 µs (fore.TCA100)"),
		scenario.Key("mem_cycles", "25 MHz memory-bus cycles, load to use").Range(1, atmtb.MaxMemCycles).
			From("calibrated: C2, the 40-byte WRITE's 30 µs (atmtb.DefaultConfig)"),
		scenario.Key("stub_instrs", "instructions per call, client and server").Range(0, 1_000_000).
			From("calibrated: C3, RPC Simple's 93 µs (rpc.Defaults)"),
		scenario.Key("rpc_n", "cells per RPC message").Range(1, rpc.MaxN).
			From("assumed: 8, section 3.1.2 «say N» (host/rpc)"),
	}
}

// Validate implements scenario.Params.
func (p *ReportParams) Validate() error { return scenario.CheckKeys(p) }

// ReportScenario is atm-report.
func ReportScenario() *scenario.Scenario {
	return scenario.Typed("atm-report", "2.3-3.1, DECstations on FORE ATM: raw, WRITE, READ, Tables 1-4 vs paper",
		ReportDefaults, RunReport)
}

// target says whether a validation figure is within the 20% target.
func target(model, paper float64) string {
	if math.Abs(scenario.PctError(model, paper)) <= validTarget {
		return fmt.Sprintf("within the %d%% target", validTarget)
	}
	return fmt.Sprintf("outside the %d%% target: docs/atm-validation.md", validTarget)
}

// config is the report's cluster: atmtb's with the keys' parameters.
func (p *ReportParams) config(switched bool) atmtb.Config {
	c := atmtb.DefaultConfig()
	c.Board.CellLatency, c.MemCycles, c.Switched = p.CellLatency, p.MemCycles, switched
	c.RPC.StubInstrs, c.RPC.N = p.StubInstrs, p.RPCN
	return c
}

// us is a time in microseconds.
func us(t clock.Time) float64 { return scenario.Micros(t) }

// RunReport runs every measurement: the raw write in e (the waveform
// shows it), the others each in an env of their own.
func RunReport(e *env.Env, p *ReportParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	direct, switched := p.config(false), p.config(true)
	rep := &scenario.Report{Title: fmt.Sprintf(
		"atm-report: 2 DECstation 5000/200s with FORE TCA-100s, direct or through the ASX-100 (AT-P1..P22), sections 2.3-2.4 (calibration: raw write by CellLatency, 40-byte WRITE by MemCycles, RPC Simple by the stub instructions; the rest validation, never tuned); %d rounds per latency, %d warm-up",
		p.Rounds, atmtb.Warmup(p.Rounds))}
	seed := e.Rand("atm-report").Uint64()
	const phases = 13
	ph := scenario.NewPhases(e, phases)

	ph.Next("raw write")
	raw, err := atmtb.MeasureRaw(e, direct, p.Rounds)
	if err != nil {
		return rep, scenario.Label("raw write", err)
	}
	rep.Result = raw.Run
	rep.AddCalibrated(true, "fitted: raw polled write, 40 B, direct",
		scenario.Versus(us(raw.Mean), paperRaw, "µs"), fmt.Sprintf("%.0f µs", paperRaw),
		paper+" 2.3 «we measured the time to do a write operation at about 11 µs» (calibration, fitted by CellLatency); raw mode, half a polled ping-pong, the receiver copying the 10 words to memory")
	rep.Measure("raw_us", us(raw.Mean), "µs")

	ph.Next("protected WRITE")
	wr, err := atmtb.MeasureWrite(scenario.SideEnv(seed), direct, 40, p.Rounds)
	if err != nil {
		return rep, scenario.Label("protected WRITE", err)
	}
	rep.AddCalibrated(true, "fitted: protected WRITE, 40 B, direct",
		scenario.Versus(us(wr.Mean), paperWrite, "µs"), fmt.Sprintf("%.0f µs", paperWrite),
		paper+" 2.3 «a remote write operation containing one ATM cell (40 data bytes) takes 30 µs» (calibration, fitted by MemCycles); half a WRITE ping-pong, interrupt-driven receive")
	rep.Measure("write_us", us(wr.Mean), "µs")
	wo := us(wr.Mean) - us(raw.Mean)
	rep.Add("software overhead of a WRITE (WRITE − raw)", scenario.Versus(wo, paperWriteOverhead, "µs"), fmt.Sprintf("%.0f µs", paperWriteOverhead),
		paper+" 2.3 «our software implementation has added about 19 µs to the write operation» (both ends calibrated: checks their consistency, "+target(wo, paperWriteOverhead)+")")

	ph.Next("READ")
	rd, err := atmtb.MeasureRead(scenario.SideEnv(seed), direct, p.Rounds)
	if err != nil {
		return rep, scenario.Label("READ", err)
	}
	rep.Add("READ, 40 B, direct", scenario.Versus(us(rd.Mean), paperRead, "µs"), fmt.Sprintf("%.0f µs", paperRead),
		paper+" 2.3 «A remote read takes longer than a write — 45 µs» (validation, "+target(us(rd.Mean), paperRead)+"); issue to the reply's last word seen")
	rep.Measure("read_us", us(rd.Mean), "µs")
	ro := us(rd.Mean) - 2*us(raw.Mean)
	rep.Add("software overhead of a READ (READ − 2 raw writes)", scenario.Versus(ro, paperReadOverhead, "µs"), fmt.Sprintf("%.0f µs", paperReadOverhead),
		paper+" 2.3 «For read operations the increased cost is greater (about 23 µs)» (validation, "+target(ro, paperReadOverhead)+"); a READ's raw counterpart is two cells, one each way")
	rmw := us(rd.Mean) - us(wr.Mean)
	rep.Add("READ − WRITE", scenario.Versus(rmw, paperReadMinusWrite, "µs"), fmt.Sprintf("%.0f µs", paperReadMinusWrite),
		"45 − 30 (qualitative: a READ is a WRITE plus a second cell and a second interrupt; "+target(rmw, paperReadMinusWrite)+")")

	ph.Next("Table 2, 40 B")
	t40, err := atmtb.MeasureWrite(scenario.SideEnv(seed), switched, 40, p.Rounds)
	if err != nil {
		return rep, scenario.Label("Table 2 40 B", err)
	}
	rep.Add("Table 2: WRITE 40 B via the ASX-100", scenario.Versus(us(t40.Mean), paperT2x40, "µs"), fmt.Sprintf("%.0f µs", paperT2x40),
		paper+" Table 2 (validation of the switch preset's 7 µs, AT-P9, on the calibrated WRITE: "+target(us(t40.Mean), paperT2x40)+")")
	ph.Next("Table 2, 80 B")
	t80, err := atmtb.MeasureWrite(scenario.SideEnv(seed), switched, 80, p.Rounds)
	if err != nil {
		return rep, scenario.Label("Table 2 80 B", err)
	}
	rep.Add("Table 2: WRITE 80 B via the ASX-100", scenario.Versus(us(t80.Mean), paperT2x80, "µs"), fmt.Sprintf("%.0f µs", paperT2x80),
		paper+" Table 2 (validation, "+target(us(t80.Mean), paperT2x80)+"); two WRITE traps, the receiver spinning on the second cell's last word")
	rep.Add("  interrupts per 80-B round at the receivers", fmt.Sprintf("%.2f", float64(t80.IRQs)/float64(p.Rounds)/2), "",
		"1 when the second cell lands while the handler still drains the first (AT-P16)")
	rep.Measure("t2_40_us", us(t40.Mean), "µs")
	rep.Measure("t2_80_us", us(t80.Mean), "µs")

	ph.Next("Table 3 stream")
	t3, err := atmtb.MeasureStream(scenario.SideEnv(seed), switched, 40*p.StreamCells, false)
	if err != nil {
		return rep, scenario.Label("Table 3", err)
	}
	rep.Add(fmt.Sprintf("Table 3: sustained throughput, %d WRITEs of 40 B via the ASX-100", p.StreamCells),
		scenario.Versus(t3.MBps, paperT3, "MB/s"), fmt.Sprintf("%.1f MB/s", paperT3),
		paper+" Table 3 «overlaps multiple write requests; switch overhead is included» (validation, "+target(t3.MBps, paperT3)+")")
	rep.Add("  link busy, interrupts at the receiver", fmt.Sprintf("%.0f%%, %d IRQs for %d cells", 100*t3.LinkBusy, t3.IRQs, t3.Drained), "",
		"node 0's link serialising cells (3.03 µs each) over the stream's time")
	rep.Measure("t3_mbps", t3.MBps, "MB/s")

	ph.Next("4 KB by WRITEs")
	w4, err := atmtb.MeasureStream(scenario.SideEnv(seed), direct, 4096, false)
	if err != nil {
		return rep, scenario.Label("4 KB by WRITEs", err)
	}
	rep.Add("4 KB by remote WRITEs, direct", scenario.Versus(w4.Mbps, paperWrites4K, "Mb/s"), fmt.Sprintf("%.1f Mb/s", paperWrites4K),
		paper+" 2.3 «compared to 34.7 Mb/s using remote writes» (validation, "+target(w4.Mbps, paperWrites4K)+"); 103 WRITE traps")
	ph.Next("4 KB by block")
	b4, err := atmtb.MeasureStream(scenario.SideEnv(seed), direct, 4096, true)
	if err != nil {
		return rep, scenario.Label("4 KB by block", err)
	}
	rep.Add("4 KB by one block transfer, direct", scenario.Versus(b4.Mbps, paperBlock4K, "Mb/s"), fmt.Sprintf("%.1f Mb/s", paperBlock4K),
		paper+" 2.3 «a 4K remote block transfer to be 35.4 Mb/s» (validation, "+target(b4.Mbps, paperBlock4K)+")")
	rep.Add("  interrupts at the receiver, block / WRITEs", fmt.Sprintf("%d / %d for %d / %d cells", b4.IRQs, w4.IRQs, b4.Drained, w4.Drained), "",
		"AT-P16 «only the first arrival would interrupt; the interrupt handler would then drain the input queue»")
	rep.Measure("writes4k_mbps", w4.Mbps, "Mb/s")
	rep.Measure("block4k_mbps", b4.Mbps, "Mb/s")

	ph.Next("one cell: block vs WRITE")
	b1, err := atmtb.MeasureBlock(scenario.SideEnv(seed), direct, 40, p.Rounds)
	if err != nil {
		return rep, scenario.Label("one-cell block", err)
	}
	rep.Add("one cell by block transfer, direct", fmt.Sprintf("%.2f µs (WRITE %+.2f µs)", us(b1.Mean), us(b1.Mean)-us(wr.Mean)), "slower than a WRITE",
		paper+" 2.3 «using the block transfer primitive to transfer single cells leads to higher latency because of the overhead of pointer checking»; half a block ping-pong")

	ph.Next("raw stream")
	rs, err := atmtb.MeasureRawStream(scenario.SideEnv(seed), direct, p.StreamCells)
	if err != nil {
		return rep, scenario.Label("raw stream", err)
	}
	wsd, err := atmtb.MeasureStream(scenario.SideEnv(seed), direct, 40*p.StreamCells, false)
	if err != nil {
		return rep, scenario.Label("WRITE stream, direct", err)
	}
	share := 100 * wsd.MBps / rs.MBps
	rep.Add("WRITE stream / raw stream, direct", scenario.Versus(share, paperRawShare, "%"), fmt.Sprintf("%.0f%%", paperRawShare),
		paper+" 2.4 «Our implementation achieves 70% of what would be possible if we directly used the FORE host-network interface» (validation, "+target(share, paperRawShare)+
			fmt.Sprintf("); %d cells of 40 B each way: %.2f vs %.2f MB/s", p.StreamCells, wsd.MBps, rs.MBps))
	rep.Measure("raw_stream_mbps", rs.MBps, "MB/s")

	ph.Next("RPC, Table 4")
	simple, err := atmtb.MeasureRPC(scenario.SideEnv(seed), direct, 4, p.RPCRounds)
	if err != nil {
		return rep, scenario.Label("RPC Simple", err)
	}
	rep.AddCalibrated(true, "fitted: RPC Simple (4 words, one cell)", scenario.Versus(us(simple.Mean), paperRPCSimple, "µs"), fmt.Sprintf("%.0f µs", paperRPCSimple),
		paper+" Table 4 «Simple ... four integer arguments and the return of an integer result» (calibration, fitted by the stubs' instructions); node 1 calls node 0, the whole call")
	rep.Measure("rpc_simple_us", us(simple.Mean), "µs")
	for _, mw := range []struct {
		words int
		paper float64
	}{{32, 300}, {64, 488}, {128, 698}} {
		l, err := atmtb.MeasureRPC(scenario.SideEnv(seed), direct, mw.words, p.RPCRounds)
		if err != nil {
			return rep, scenario.Label(fmt.Sprintf("RPC MW-%d", mw.words), err)
		}
		rep.Add(fmt.Sprintf("RPC MW-%d (%d cells)", mw.words, rpcCells(mw.words)), scenario.Versus(us(l.Mean), mw.paper, "µs"), fmt.Sprintf("%.0f µs", mw.paper),
			paper+" Table 4 «Arguments of 32, 64, and 128 32-bit words» (validation, "+target(us(l.Mean), mw.paper)+")")
		rep.Measure(fmt.Sprintf("rpc_mw%d_us", mw.words), us(l.Mean), "µs")
	}

	ph.Next("Table 1 counts")
	ws, err := atmtb.TraceSteps(direct, seed, "write")
	if err != nil {
		return rep, scenario.Label("Table 1 WRITE", err)
	}
	rs1, err := atmtb.TraceSteps(direct, seed, "read")
	if err != nil {
		return rep, scenario.Label("Table 1 READ", err)
	}
	wi, ri := instrs(ws), instrs(rs1)
	rep.Add("Table 1: instructions of one 40-B WRITE", fmt.Sprint(wi), fmt.Sprint(paperWriteInstrs), "every cpu.step record of both CPUs, warm: "+steps(ws))
	rep.Add("Table 1: instructions of one 40-B READ", fmt.Sprint(ri), fmt.Sprint(paperReadInstrs), "every cpu.step record of both CPUs, warm: "+steps(rs1))

	ph.Next("PIO costs")
	pio, err := atmtb.MeasurePIO(scenario.SideEnv(seed), direct)
	if err != nil {
		return rep, scenario.Label("PIO costs", err)
	}
	rep.Add("PIO: STATUS read (one word)", fmt.Sprintf("%.2f µs", us(pio.Status)), "-", "processor-visible, the 3max bridge holding the load in wait states")
	rep.Add("PIO: cell load (56 B)", fmt.Sprintf("%.2f µs", us(pio.CellLoad)), "0.56 µs on the TC",
		fmt.Sprintf("processor-visible; TURBOchannel busy %d cycles, %d data cycles («14 (40 nanosecond) I/O bus read cycles», AT-P5)", pio.CellLoadTCBusy, pio.CellLoadTCData))
	rep.Add("PIO: cell burst store (56 B)", fmt.Sprintf("%.2f µs", us(pio.CellStore)), "-", "processor-visible (posted by the write buffer)")
	e.Phase(phases, phases, "")

	rep.Add("calibrated: board cell latency per side", fmt.Sprintf("%d link cycles = %.2f µs", direct.Board.CellLatency,
		us(direct.Link.Clock.TimeOf(clock.Cycle(direct.Board.CellLatency)))), "",
		"fore.Config.CellLatency (TX FIFO to wire, wire to RX FIFO), fitted to the raw write (hib/fore TCA100)")
	rep.Add("calibrated: RPC stub instructions per call", fmt.Sprint(direct.RPC.StubInstrs), "-",
		"rpc.Params.StubInstrs (client and server, split evenly), fitted to RPC Simple (host/rpc Defaults)")
	rep.Add("calibrated: host memory latency", fmt.Sprintf("%d cycles = %d ns", direct.MemCycles, direct.MemCycles*40), "200 ns (assumed, AT-P18)",
		"atmtb.Config.MemCycles, fitted to the 40-byte WRITE (atmtb.DefaultConfig)")

	re, we := scenario.PctError(us(raw.Mean), paperRaw), scenario.PctError(us(wr.Mean), paperWrite)
	rep.Check("raw write within 10% (calibration)", math.Abs(re) <= calibTolerance, "%.2f µs vs %.0f µs: %+.1f%%", us(raw.Mean), paperRaw, re)
	rep.Check("protected WRITE within 10% (calibration)", math.Abs(we) <= calibTolerance, "%.2f µs vs %.0f µs: %+.1f%%", us(wr.Mean), paperWrite, we)
	se := scenario.PctError(us(simple.Mean), paperRPCSimple)
	rep.Check("RPC Simple within 10% (calibration)", math.Abs(se) <= calibTolerance, "%.2f µs vs %.0f µs: %+.1f%%", us(simple.Mean), paperRPCSimple, se)
	rep.Check("Table 1 counts exact", wi == paperWriteInstrs && ri == paperReadInstrs, "WRITE %d (Table 1: %d), READ %d (%d)", wi, paperWriteInstrs, ri, paperReadInstrs)
	rep.Check("a burst interrupts once", b4.IRQs == 1, "the 4 KB block's %d cells: %d interrupts", b4.Drained, b4.IRQs)
	rep.Check("the link is not the bottleneck", t3.LinkBusy < linkBottleneck, "Table 3's link %.0f%% busy (< %.0f%%)", 100*t3.LinkBusy, 100*linkBottleneck)
	be := scenario.PctError(b4.Mbps, w4.Mbps)
	rep.Check("block ≈ WRITEs in throughput", math.Abs(be) <= blockTolerance, "4 KB: block %.1f vs WRITEs %.1f Mb/s: %+.1f%% (within %d%%)", b4.Mbps, w4.Mbps, be, blockTolerance)
	rep.Check("a one-cell block is slower than a WRITE", b1.Mean > wr.Mean, "%.2f vs %.2f µs", us(b1.Mean), us(wr.Mean))
	return rep, nil
}

// rpcCells is the cells of an RPC call's arguments: host/rpc's frame
// (rpc.Cells).
func rpcCells(words int) int { return rpc.Cells(words) }

// instrs sums the steps' instructions.
func instrs(ss []atmtb.StepStat) int {
	n := 0
	for _, s := range ss {
		n += s.Instrs
	}
	return n
}

// steps lists the steps as node, label, instructions and cycles.
func steps(ss []atmtb.StepStat) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("N%d %s %d (%d cycles)", s.Node, s.Label, s.Instrs, s.Cycles)
	}
	return out
}

// view returns the waveform of atm-report and atm-traffic: node 0's CPU,
// TURBOchannel and TX FIFO, node 1's RX FIFO, interrupt line,
// TURBOchannel and CPU. span, when positive, is the time the save file
// shows.
func view(span clock.Time) func(scenario.Params) scenario.WaveView {
	return func(scenario.Params) scenario.WaveView {
		return scenario.WaveView{
			Select: []string{"n0", "n1", "atm"},
			Groups: []waves.ViewGroup{
				scenario.KeyGroup("N0 host", "n0.cpu0.state", "n0.tc.phase"),
				scenario.KeyGroup("TCA-100s", "n0.fore.tx_fifo.occupancy", "n1.fore.rx_fifo.occupancy", "n1.fore.irq"),
				scenario.KeyGroup("N1 host", "n1.tc.phase", "n1.cpu0.state"),
			},
			Span: span,
		}
	}
}

// reportSpan is atm-report's waveform span: a raw round trip is about 22
// µs, so 30 µs shows one whole.
const reportSpan = 30 * clock.Microsecond
