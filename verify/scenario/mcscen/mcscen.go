// Package mcscen holds the runnable experiments of the Memory Channel
// cluster (mcadapter, switch/mchub, verify/testbench/mctb): mc-report, the
// network figures of cashmere-2l-memory-channel.txt section 2.1 and the
// lock of section 2.3 measured on the model next to the paper's values,
// with the error of each (issue 13 section 4), and mc-traffic, random
// writes of every CPU with every checker on (issue 13 section 5; the
// regression tier's mc system).
//
// Two figures are calibration, each fitted by one parameter of the
// adapter (mcadapter.MC1, `calibrated:`): the unicast write latency (5.2
// µs) by PipelineCycles and the per-link bandwidth (29 MB/s) by
// TxBeatCycles. Everything else is validation, not fitted, reported with
// its error and explained in docs/mc-validation.md: the multicast
// latency, the aggregate bandwidth with loop-back disabled, the lock
// without contention and the MC flush.
package mcscen

import (
	"fmt"
	"math"
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/mctb"
	"github.com/nisim/nisim/waves"
)

// paper is where the figures come from.
const paper = "cashmere-2l-memory-channel.txt"

// The paper's figures.
const (
	// section 2.1: «Unicast and multicast process-to-process writes have a
	// latency of 5.2 μs on our system».
	paperLatency = 5.2 // µs
	// section 2.1: «Our MC configuration can sustain perlink transfer
	// bandwidths of 29 MB/s with the limiting factor being the 32-bit
	// AlphaServer 2100 PCI bus».
	paperLink = 29.0 // MB/s
	// section 2.1: «MC peak aggregate bandwidth, calculated with loop-back
	// disabled, is about 60 MB/s».
	paperAggregate = 60.0 // MB/s
	// section 2.3: «In the absence of contention, acquiring and releasing
	// a lock takes about 11 μs» (also section 2.1: «our implementation of
	// global locks requires 11 μs»).
	paperLock = 11.0 // µs
)

// Tolerances of issue 13 section 4: calibration within 10%, validation
// targeted within 20% (reported, not held).
const (
	calibTolerance = 10
	validTarget    = 20
)

// Scenarios returns the Memory Channel scenarios.
func Scenarios() []*scenario.Scenario {
	const sys = "Memory Channel"
	// Typical run time: the defaults, measured once with /usr/bin/time on
	// a 2-core machine shared with other jobs, 2026-11-27 (documentation
	// only).
	return []*scenario.Scenario{
		ReportScenario().In(sys, "2 s").WithWaves(View(reportSpan)),
		TrafficScenario().In(sys, "0.3 s").WithWaves(View(0)),
	}
}

// ReportParams are mc-report's parameters.
type ReportParams struct {
	// Rounds is the writes of each latency measurement (the first a
	// warm-up), and the flushes of the MC flush.
	Rounds int `toml:"rounds"`
	// LinkBytes is what one CPU streams to one node for the per-link
	// bandwidth.
	LinkBytes int `toml:"link_bytes"`
	// AggregateBytes is what each of the nodes streams into the broadcast
	// region for the aggregate bandwidth.
	AggregateBytes int `toml:"aggregate_bytes"`
	// LockRounds is the acquire-release pairs of each lock measurement
	// (the first a warm-up).
	LockRounds int `toml:"lock_rounds"`
}

// ReportDefaults are the defaults of mc-report.
func ReportDefaults() *ReportParams {
	return &ReportParams{
		// assumed: 10 writes, 9 measured; the model is deterministic, so
		// the rounds differ only by where the poll loop stands.
		Rounds: 10,
		// assumed: 32 KB, 1024 packets: the 10%-90% window then holds
		// about 800 packets, far more than the pipeline's few.
		LinkBytes: 32 << 10,
		// assumed: 8 KB per node, 2048 packets in all.
		AggregateBytes: 8 << 10,
		LockRounds:     5,
	}
}

// maxStream bounds the streamed bytes: the checkers keep every write's
// expectation until it reaches memory, and a stream is bounded by the
// rate anyway. assumed: 1 MB, 30 ms of simulated time at 29 MB/s.
const maxStream = 1 << 20

// maxRounds bounds the rounds: assumed: 1000, 20 ms of simulated time at
// the 20 µs between rounds.
const maxRounds = 1000

// Keys implements scenario.Keyed.
func (p *ReportParams) Keys() []scenario.KeySpec {
	return []scenario.KeySpec{
		scenario.Key("rounds", "writes per latency measurement (first a warm-up)").Range(2, maxRounds).From("assumed: 10"),
		scenario.Key("link_bytes", "bytes").Range(10*mctb.BurstBytes, maxStream).Also(fmt.Sprintf("a multiple of %d", mctb.BurstBytes)).
			From("assumed: 32 KB"),
		scenario.Key("aggregate_bytes", "bytes per node").Range(10*mctb.BurstBytes, maxStream).Also(fmt.Sprintf("a multiple of %d", mctb.BurstBytes)).
			From("assumed: 8 KB"),
		scenario.Key("lock_rounds", "acquire-release pairs (first a warm-up)").Range(2, maxRounds).From("assumed: 5"),
	}
}

// Validate implements scenario.Params.
func (p *ReportParams) Validate() error {
	return scenario.FirstError(scenario.CheckKeys(p),
		scenario.Check(p.LinkBytes%mctb.BurstBytes != 0, "link_bytes", "must be a multiple of %d (one write-buffer block per packet), got %d", mctb.BurstBytes, p.LinkBytes),
		scenario.Check(p.AggregateBytes%mctb.BurstBytes != 0, "aggregate_bytes", "must be a multiple of %d (one write-buffer block per packet), got %d", mctb.BurstBytes, p.AggregateBytes))
}

// ReportScenario is mc-report.
func ReportScenario() *scenario.Scenario {
	return scenario.Typed("mc-report", "2.1/2.3, 8 AlphaServers: MC latency, bandwidth, lock, flush vs paper",
		ReportDefaults, RunReport)
}

// target says whether a validation figure is within the 20% target.
func target(model, paper float64) string {
	if math.Abs(scenario.PctError(model, paper)) <= validTarget {
		return fmt.Sprintf("within the %d%% target", validTarget)
	}
	return fmt.Sprintf("outside the %d%% target: docs/mc-validation.md", validTarget)
}

// RunReport runs every measurement: the unicast latency in e (the
// waveform shows it), the others each in an env of their own.
func RunReport(e *env.Env, p *ReportParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := mctb.DefaultConfig()
	a := c.Adapter
	rep := &scenario.Report{Title: fmt.Sprintf(
		"mc-report: %d AlphaServer 2100 4/233 nodes on an MC1 hub (MC-P12..P17), the figures of section 2.1 and the lock of 2.3 (calibration: unicast latency, per-link bandwidth; the rest validation); the waveform shows the unicast writes",
		c.Nodes)}
	seed := e.Rand("mc-report").Uint64()
	const phases = 9
	ph := scenario.NewPhases(e, phases)

	ph.Next("unicast latency")
	uni, cl, err := mctb.MeasureUnicast(e, c, p.Rounds)
	if err != nil {
		return rep, scenario.Label("unicast latency", err)
	}
	rep.Result = uni.Run
	rep.AddCalibrated(true, "fitted: unicast write latency, node 0 to node 1",
		scenario.Versus(scenario.Micros(uni.Last.Mean), paperLatency, "µs"), fmt.Sprintf("%.1f µs", paperLatency),
		paper+" 2.1 «Unicast and multicast process-to-process writes have a latency of 5.2 μs» (calibration, fitted by PipelineCycles); a 4-byte store and MB, from its retirement to the poll that sees it")
	rep.Measure("unicast_us", scenario.Micros(uni.Last.Mean), "µs")

	ph.Next("per-link bandwidth")
	link, _, err := mctb.MeasureLinkBandwidth(scenario.SideEnv(seed), c, p.LinkBytes)
	if err != nil {
		return rep, scenario.Label("per-link bandwidth", err)
	}
	rep.AddCalibrated(true, "fitted: per-link bandwidth, 32 B writes, 0 to 1",
		scenario.Versus(link.MBps, paperLink, "MB/s"), fmt.Sprintf("%.0f MB/s", paperLink),
		paper+" 2.1 «perlink transfer bandwidths of 29 MB/s with the limiting factor being the 32-bit AlphaServer 2100 PCI bus» (calibration, fitted by TxBeatCycles); "+
			fmt.Sprintf("one CPU streaming %d KB, delivered into node 1's memory", p.LinkBytes>>10))
	ll, lb := limiting(link)
	rep.Add("  limiting block (the busiest)", fmt.Sprintf("%s, busy %.0f%%", ll, 100*lb), "",
		fmt.Sprintf("share of the window busy with transactions: PCI %s (retried %s); memory bus %s (retried %s); hub bus %.0f%%",
			shares(link.PCIBusy[:2]), shares(link.PCIRetry[:2]), shares(link.MemBusy[:2]), shares(link.MemRetry[:2]), 100*link.HubBusy))
	rep.Measure("link_mbps", link.MBps, "MB/s")

	ph.Next("multicast latency")
	multi, _, err := mctb.MeasureMulticast(scenario.SideEnv(seed), c, p.Rounds)
	if err != nil {
		return rep, scenario.Label("multicast latency", err)
	}
	rep.Add(fmt.Sprintf("multicast write latency, to the last of %d nodes", c.Nodes-1),
		scenario.Versus(scenario.Micros(multi.Last.Mean), paperLatency, "µs"), fmt.Sprintf("%.1f µs", paperLatency),
		paper+" 2.1 «Unicast and multicast ... 5.2 μs» (validation, "+target(scenario.Micros(multi.Last.Mean), paperLatency)+")")
	rep.Add("  to the first receiver", fmt.Sprintf("%.2f µs", scenario.Micros(multi.First.Mean)), "", "the hub sends a packet to every output in the same cycles")
	rep.Measure("multicast_us", scenario.Micros(multi.Last.Mean), "µs")

	ph.Next("aggregate bandwidth")
	agg, _, err := mctb.MeasureAggregate(scenario.SideEnv(seed), c, p.AggregateBytes)
	if err != nil {
		return rep, scenario.Label("aggregate bandwidth", err)
	}
	limit, busy := limiting(agg)
	rep.Add(fmt.Sprintf("aggregate bandwidth, %d senders, loop-back off", c.Nodes),
		scenario.Versus(agg.MBps, paperAggregate, "MB/s"), fmt.Sprintf("~%.0f MB/s", paperAggregate),
		paper+" 2.1 «MC peak aggregate bandwidth, calculated with loop-back disabled, is about 60 MB/s» (validation, "+target(agg.MBps, paperAggregate)+
			fmt.Sprintf("); CPU 0 of every node streaming %d KB into its part of one broadcast region, the bytes the hub orders per second", p.AggregateBytes>>10))
	rep.Add("  limiting block (the busiest)", fmt.Sprintf("%s, busy %.0f%%", limit, 100*busy), "",
		fmt.Sprintf("share of the window busy with transactions: PCI %s (retried %s); memory bus %s (retried %s); hub bus %.0f%%",
			shares(agg.PCIBusy), shares(agg.PCIRetry), shares(agg.MemBusy), shares(agg.MemRetry), 100*agg.HubBusy))
	rep.Measure("aggregate_mbps", agg.MBps, "MB/s")

	ph.Next("ring bandwidth")
	ring, _, err := mctb.MeasureRing(scenario.SideEnv(seed), c, p.AggregateBytes)
	if err != nil {
		return rep, scenario.Label("ring bandwidth", err)
	}
	rl, rb := limiting(ring)
	rep.Add(fmt.Sprintf("aggregate, %d senders, point-to-point ring", c.Nodes), fmt.Sprintf("%.2f MB/s", ring.MBps), "-",
		"no paper figure: node i streams into a region only node i+1 receives, so each PCI bus carries one DMA stream, not 7")
	rep.Add("  limiting block (the busiest)", fmt.Sprintf("%s, busy %.0f%%", rl, 100*rb), "",
		fmt.Sprintf("share of the window busy with transactions: PCI %s (retried %s); hub bus %.0f%%",
			shares(ring.PCIBusy), shares(ring.PCIRetry), 100*ring.HubBusy))
	rep.Measure("ring_mbps", ring.MBps, "MB/s")

	var locks [2]mctb.LockTimes
	for i, wait := range []bool{true, false} {
		how := "release waits (assumed)"
		if !wait {
			how = "release does not wait"
		}
		ph.Next("lock, " + how)
		lt, _, err := mctb.MeasureLock(scenario.SideEnv(seed), c, p.LockRounds, wait)
		if err != nil {
			return rep, scenario.Label("lock", err)
		}
		locks[i] = lt
		src := paper + " 2.3 «In the absence of contention, acquiring and releasing a lock takes about 11 μs» (validation, " + target(scenario.Micros(lt.Total.Mean), paperLock) + ")"
		if wait {
			src += "; assumed: the release waits for its clear's loop-back, as the Digital UNIX lock «essentially the same as ours» (mctb.Lock.WaitRelease)"
		}
		rep.Add("lock acquire + release, "+how, scenario.Versus(scenario.Micros(lt.Total.Mean), paperLock, "µs"), fmt.Sprintf("~%.0f µs", paperLock), src)
		rep.Add("  acquire / release", fmt.Sprintf("%.2f / %.2f µs", scenario.Micros(lt.Acquire.Mean), scenario.Micros(lt.Release.Mean)), "",
			"no contention: one process, the 8-entry array in a loop-back region")
	}
	rep.Measure("lock_us", scenario.Micros(locks[0].Total.Mean), "µs")
	rep.Measure("lock_nowait_us", scenario.Micros(locks[1].Total.Mean), "µs")

	ph.Next("MC flush")
	fl, _, err := mctb.MeasureFlush(scenario.SideEnv(seed), c, p.Rounds)
	if err != nil {
		return rep, scenario.Label("MC flush", err)
	}
	rep.Add("MC flush (loop-back write until seen)", fmt.Sprintf("%.2f µs (unicast %+.1f%%)", scenario.Micros(fl.Mean), scenario.PctError(scenario.Micros(fl.Mean), scenario.Micros(uni.Last.Mean))), "-",
		paper+" 2.3 «By writing to a loopback region and waiting for the result» (no figure; a loop-back write crosses the same blocks as a unicast one)")
	rep.Measure("flush_us", scenario.Micros(fl.Mean), "µs")

	ph.Next("breakdown")
	// The breakdown traces the last of up to 3 rounds: one past the
	// warm-up, so the same round as the untraced measurement's.
	bdRounds := min(3, p.Rounds)
	bd, bl, err := mctb.MeasureBreakdown(c, seed, bdRounds)
	if err != nil {
		return rep, scenario.Label("breakdown", err)
	}
	for _, l := range bd.Legs {
		rep.Add("  breakdown: "+l.Block, fmt.Sprintf("%.3f µs", scenario.Micros(l.Time())), "", l.From.Event+" → "+l.To.Event)
	}
	rep.Add("  breakdown: total", fmt.Sprintf("%.3f µs", scenario.Micros(bd.Total)), fmt.Sprintf("%.1f µs", paperLatency),
		fmt.Sprintf("unicast round %d of %d, traced", bdRounds, bdRounds))
	e.Phase(phases, phases, "")

	rep.Add("calibrated: adapter pipeline delay per side",
		fmt.Sprintf("%d PCI cycles = %.2f µs", a.PipelineCycles, scenario.Micros(c.Host.IOBus.Clock.TimeOf(clock.Cycle(a.PipelineCycles)))), "",
		"mcadapter.Config.PipelineCycles, fitted to the unicast latency (mcadapter/config.go)")
	rep.Add("calibrated: TX FIFO write port, cycles per beat",
		fmt.Sprintf("%d PCI cycles (%d wait states)", a.TxBeatCycles, a.TxBeatCycles-1), "",
		"mcadapter.Config.TxBeatCycles, fitted to the per-link bandwidth (mcadapter/config.go)")

	ue, le := scenario.PctError(scenario.Micros(uni.Last.Mean), paperLatency), scenario.PctError(link.MBps, paperLink)
	rep.Check("unicast latency within 10% (calibration)", math.Abs(ue) <= calibTolerance, "%.2f µs vs %.1f µs: %+.1f%%", scenario.Micros(uni.Last.Mean), paperLatency, ue)
	rep.Check("per-link bandwidth within 10% (calibration)", math.Abs(le) <= calibTolerance, "%.2f MB/s vs %.0f MB/s: %+.1f%%", link.MBps, paperLink, le)
	var sum clock.Time
	for _, l := range bd.Legs {
		sum += l.Time()
	}
	rep.Check("breakdown adds up to the traced latency", sum == bd.Total && len(bd.Legs) > 0, "%d legs, sum %v, latency %v", len(bd.Legs), sum, bd.Total)
	// Tracing changes no timing: the traced round is a round of the same
	// measurement.
	tr, _, _ := bl.Rounds.Latency(bdRounds - 1)
	ut, _, _ := uni.Rounds.Latency(bdRounds - 1)
	rep.Check("traced and untraced latencies agree", tr == ut && tr == bd.Total,
		"round %d: traced %v, untraced %v", bdRounds, tr, ut)
	rep.Check("the lock was never contended", locks[0].Lost == 0 && locks[1].Lost == 0, "%d and %d rounds lost", locks[0].Lost, locks[1].Lost)
	n0 := cl.Node(0).Adapter.Counters()
	rep.Check("every unicast write left node 0", n0.TxPackets == uint64(p.Rounds), "%d packets for %d writes", n0.TxPackets, p.Rounds)
	return rep, nil
}

// limiting names the busiest block of a bandwidth measurement and its
// busy share: the hub's bus, a PCI bus or a memory bus, by the cycles it
// spent on transactions (retried attempts left out: they say that the bus
// waits for what lies behind its target, not that it is full). The first
// of equals wins (the hub, then node order).
func limiting(b mctb.Bandwidth) (string, float64) {
	name, busy := "the hub's bus", b.HubBusy
	for i, x := range b.PCIBusy {
		if x > busy {
			name, busy = fmt.Sprintf("N%d's PCI bus", i), x
		}
	}
	for i, x := range b.MemBusy {
		if x > busy {
			name, busy = fmt.Sprintf("N%d's memory bus", i), x
		}
	}
	return name, busy
}

// shares formats busy shares in percent.
func shares(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.0f", 100*x)
	}
	return strings.Join(s, "/") + "%"
}

// View returns the waveform of mc-report and mc-traffic (and of
// cashmere-report, which runs on the same cluster): node 0's CPU
// and PCI bus (the writer's side, through its adapter), the hub and its
// links 0 and 1, and node 1's PCI bus and CPU. span, when positive, is the
// time the save file shows (scenario.WaveView.Span).
func View(span clock.Time) func(scenario.Params) scenario.WaveView {
	return func(scenario.Params) scenario.WaveView {
		return scenario.WaveView{
			Select: []string{"n0", "n1", "mc.hub", "mc.link0", "mc.link1"},
			Groups: []waves.ViewGroup{
				scenario.KeyGroup("N0 host", "n0.cpu0.state", "n0.pci.phase"),
				scenario.KeyGroup("hub", "mc.hub.state"),
				scenario.KeyGroup("N1 host", "n1.pci.phase", "n1.cpu0.state"),
			},
			Span: span,
		}
	}
}

// reportSpan is mc-report's waveform span: a write takes about 5 µs and
// the rounds are 20 µs apart, so 10 µs shows one round's write whole.
const reportSpan = 10 * clock.Microsecond
