package noc

import (
	"fmt"

	"errors"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/noctb"
)

// MCParams are the parameters of the mchub-star scenario: adapters on a
// first-generation Memory Channel hub (switch/mchub) writing to shared
// pages.
type MCParams struct {
	// Ports, Delay (hub cycles) and QueueDepth (flits per output queue)
	// are the hub's; the defaults are the MC1 preset.
	Ports      int `toml:"ports"`
	Delay      int `toml:"delay"`
	QueueDepth int `toml:"queue_depth"`
	// Mapping is broadcast (every page mapped at every adapter) or single
	// (each page mapped at one adapter drawn from the run seed); Pages is
	// how many pages there are; Loopback turns loop-back on for all of
	// them (MC-P8).
	Mapping  string `toml:"mapping"`
	Pages    int    `toml:"pages"`
	Loopback bool   `toml:"loopback"`
	// InjectionRate is each adapter's offered load as a fraction of its
	// link's bandwidth, in data bytes; WriteSize the write lengths in
	// bytes, "64" or a distribution such as "4:0.5,64:0.5".
	InjectionRate float64 `toml:"injection_rate"`
	WriteSize     string  `toml:"write_size"`
	// SamplePeriod link cycles per period; WarmupPeriods of warm-up and
	// MeasurePeriods of measurement; the drain may last DrainLimit cycles.
	SamplePeriod   int `toml:"sample_period"`
	WarmupPeriods  int `toml:"warmup_periods"`
	MeasurePeriods int `toml:"measure_periods"`
	DrainLimit     int `toml:"drain_limit"`
}

// MCDefaults is the MC1 hub with its 8 adapters (MC-P12) writing to 16
// pages that every adapter maps: every write goes to the 7 others, so all
// of them must see the writes in one order (MC-P9), the property the hub
// exists for.
func MCDefaults() *MCParams {
	h := noctb.DefaultMCConfig()
	return &MCParams{Ports: h.Ports, Delay: h.Delay, QueueDepth: h.QueueDepth,
		// assumed: 16 shared pages; Cashmere's shared structures
		// (directory, write notices, lock arrays) are a few pages mapped
		// everywhere.
		Mapping: "broadcast", Pages: 16,
		// assumed: half 4-byte words (directory entries and flags,
		// «32-bits is the smallest unit that the 21064 can access
		// atomically», MC-P18) and half 64-byte cache lines («A cache line
		// is 64 bytes.», MC-P17).
		WriteSize: "4:0.5,64:0.5",
		// assumed: 0.05 of a link per adapter, 6.7 MB/s; the hub bus, one
		// link wide, carries all 8 writers' traffic once: 8 x 0.05 x 42/34
		// (the mean write's 34 data bytes are (12+72)/2 = 42 on the wire
		// with the MC1 packet format) = 0.49 of its bandwidth, and each
		// output link the 7 others', 0.43.
		InjectionRate: 0.05,
		// 1000 cycles = 30 µs a period: 5 of warm-up, 20 measured (about
		// 120 writes per adapter, each to 7 receivers).
		SamplePeriod: 1000, WarmupPeriods: 5, MeasurePeriods: 20, DrainLimit: 20000}
}

func (p *MCParams) window() window {
	return window{p.SamplePeriod, p.WarmupPeriods, p.MeasurePeriods, p.DrainLimit}
}

// Validate implements scenario.Params.
func (p *MCParams) Validate() error {
	sizes, err := traffic.ParseSizes(p.WriteSize)
	if err != nil {
		return &scenario.KeyError{Key: "write_size", Msg: err.Error()}
	}
	if err := scenario.FirstError(
		scenario.CheckKeys(p),
		scenario.Check(sizes.Max() > noctb.MCPageBytes, "write_size", "a write of %d bytes does not fit a page of %d", sizes.Max(), noctb.MCPageBytes),
		scenario.Check(noctb.MCWriteFlits(sizes.Max()) > p.QueueDepth, "write_size",
			"a write of %d bytes is %d flits, more than an output queue of queue_depth = %d holds", sizes.Max(), noctb.MCWriteFlits(sizes.Max()), p.QueueDepth),
		scenario.Check(p.Mapping == "single" && p.Pages < 2 && !p.Loopback, "pages",
			"with mapping = single and no loop-back, one page cannot give every adapter someone to write to"),
	); err != nil {
		return err
	}
	return p.window().validate(noctb.MCClock())
}

// MCScenario is the mchub-star scenario.
func MCScenario() *scenario.Scenario {
	return &scenario.Scenario{Name: "mchub-star",
		Summary:  "8 adapters on a hub: global write order, latency, throughput",
		Defaults: func() scenario.Params { return MCDefaults() },
		Run:      func(e *env.Env, p scenario.Params) (*scenario.Report, error) { return RunMC(e, p.(*MCParams)) }}
}

// RunMC builds the star of p in e (noctb.RunMC), runs the experiment and
// reports.
func RunMC(e *env.Env, p *MCParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sizes, _ := traffic.ParseSizes(p.WriteSize)
	c := noctb.DefaultMCConfig()
	c.Ports, c.Delay, c.QueueDepth = p.Ports, p.Delay, p.QueueDepth
	c.Broadcast, c.Pages, c.Loopback = p.Mapping == "broadcast", p.Pages, p.Loopback
	c.InjectionRate, c.Sizes, c.Window = p.InjectionRate, sizes, p.window().stats()
	x, runErr := noctb.RunMC(e, c)
	if x == nil {
		var ae *noctb.MCAdapterError
		if errors.As(runErr, &ae) {
			// A single mapping can leave an adapter without a page to
			// write to.
			return nil, &scenario.KeyError{Key: "mapping", Msg: ae.Err.Error()}
		}
		return nil, runErr
	}
	rep := p.report(x, e.Monitor)
	sent, recv, dropped := x.Shared.Deliveries.Counts()
	conserved(rep, "every write at every mapped receiver exactly once", e.Monitor, !x.Saturated, sent, recv, dropped,
		"(write, receiver) pairs", "MC.Deliveries")
	measured(rep, x.Stats.Packet.N, "writes")
	rep.Stuck = x.Stuck
	rep.Result = x.Result
	return rep, runErr
}

func (p *MCParams) report(x *noctb.MCRun, mon *check.Monitor) *scenario.Report {
	r, clk := x.Stats, x.Clock
	bpc := float64(x.Link.BytesPerCycle)
	mbps := func(bytesPerCycle float64) float64 { return bytesPerCycle * clk.HzFloat() / 1e6 }
	loop := "off"
	if p.Loopback {
		loop = "on"
	}
	rep := &scenario.Report{Title: fmt.Sprintf("mchub-star: %d adapters on a Memory Channel hub (a %d-byte bus, delay %d cycles, %d-flit output queues), %d pages mapped %s, loop-back %s, %s-byte writes at %g of the link bandwidth",
		p.Ports, x.BusBytes, p.Delay, p.QueueDepth, p.Pages, p.Mapping, loop, p.WriteSize, p.InjectionRate)}
	rep.Add("adapters on the hub", fmt.Sprint(p.Ports), "8 nodes", "MC-P12 «a cluster of eight 4-processor AlphaServer nodes»")
	rep.Add("write latency, mean (creation to the tail at a receiver)", durations(clk, r.Packet.Mean), "",
		"no figure for the hub alone: the 5.2 µs of section 2.1 is process to process, adapters and PCI included")
	rep.Add("write latency p50 / p99 / max", fmt.Sprintf("%d / %d / %d cycles", r.Packet.P50, r.Packet.P99, r.Packet.Max), "", "")
	rep.Add("network latency, min / mean (head onto the link to the tail at a receiver)",
		fmt.Sprintf("%d / %.1f cycles", r.Network.Min, r.Network.Mean), "", "")
	measureCycles := float64(max(x.Window.Measure, 1))
	ports := x.Shared.Ports()
	// Data bytes per adapter per cycle: generated, and put into the global
	// order by the hub, during the measurement window.
	offered := float64(x.Shared.OfferedBytes()) / (float64(p.Ports) * measureCycles) / bpc
	ordered := float64(x.Shared.OrderedBytes()) / (float64(p.Ports) * measureCycles)
	rep.Add("offered / accepted per adapter (fraction of link bandwidth, data bytes)",
		fmt.Sprintf("%.4f / %.4f (%.1f / %.1f MB/s)", offered, ordered/bpc, mbps(offered*bpc), mbps(ordered)), "", "")
	delivered := float64(x.Shared.DeliveredBytes()) / (float64(p.Ports) * measureCycles)
	rep.Add("delivered to each adapter, mean (data bytes)", fmt.Sprintf("%.1f MB/s", mbps(delivered)), "", "")
	rep.Add("measured deliveries (write x receiver)", fmt.Sprint(r.Packet.N), "", "")
	up, down := linkUse(x.Star.Links, r.LastDelivery)
	var stalls, waits uint64
	for i, pc := range ports {
		s := x.Star.Hub.Stats(i)
		cs := x.Star.Links[i].From(link.A).Stats().CreditStalls
		rep.Add(fmt.Sprintf("adapter %d: writes sent / received", i), fmt.Sprintf("%d / %d", pc.Writes, pc.Received), "", "")
		rep.Add(fmt.Sprintf("adapter %d: link use to / from the hub, credit stalls, hub wait cycles", i),
			fmt.Sprintf("%.3f / %.3f, %d, %d", up[i], down[i], cs, s.WaitCycles), "", "")
		stalls += cs
		waits += s.WaitCycles
	}
	mean, peak := meanMax(up, down)
	rep.Add("link utilisation, mean / busiest", fmt.Sprintf("%.3f / %.3f", mean, peak), "", "")
	// What limits throughput: every write crosses the one hub bus, as
	// wide as a link (MC-P5 «a bus interconnect»), so the writers share
	// one link's bandwidth in all.
	busy := float64(x.Star.Hub.BusyCycles()) / float64(max(r.LastDelivery, 1))
	busMBps := mbps(float64(x.BusBytes))
	rep.Add("hub bus utilisation (cycles carrying flits, to the last delivery): what limits throughput",
		fmt.Sprintf("%.3f of %.1f MB/s on the wire, for all adapters", busy, busMBps), "a bus",
		"MC-P5 «as the Memory Channel is a bus interconnect»: every write crosses the one hub bus, one packet at a time")
	filtered := x.Shared.Filtered()
	rep.Add("writes dropped by the receivers' page maps (filtered)", fmt.Sprint(filtered), "",
		"the hub brings every write to every adapter; receive filtering is the adapters' job")
	if p.Loopback {
		rep.Add("loop-back", "on for every page: writers get their own writes", "optional per region", "MC-P8")
	}
	sb := x.Shared.Pages.Report()
	var received uint64
	for _, pc := range ports {
		received += pc.Received
	}
	// A saturated run is stopped with writes still on their way: only
	// what arrived can be judged.
	inOrder := len(sb.Mismatches) == 0 && len(sb.Unexpected) == 0 && uint64(sb.Matched) == received &&
		mon.CountPath("MC.Sources") == 0
	rep.Check("writes in the hub's global order at every receiver", inOrder && (x.Saturated || len(sb.Missing) == 0),
		"%d of %d deliveries in the hub's global order per receiver (MC-P9 «will appear in the same order in every receive region»)",
		sb.Matched, received)
	rep.Check("drained", !x.Saturated, "%d measured deliveries outstanding after the drain limit", x.Shared.Open())
	rep.Measure("offered", offered, "link bandwidth")
	rep.Measure("accepted", ordered/bpc, "link bandwidth")
	rep.Measure("latency", r.Packet.Mean, "cycles")
	rep.Measure("latency_us", us(clk, r.Packet.Mean), "µs")
	rep.Measure("latency_p50", float64(r.Packet.P50), "cycles")
	rep.Measure("latency_p99", float64(r.Packet.P99), "cycles")
	rep.Measure("latency_max", float64(r.Packet.Max), "cycles")
	rep.Measure("network_latency", r.Network.Mean, "cycles")
	rep.Measure("network_latency_min", float64(r.Network.Min), "cycles")
	rep.Measure("delivered_mbps", mbps(delivered), "MB/s")
	rep.Measure("deliveries", float64(received), "")
	rep.Measure("ordered_deliveries", float64(sb.Matched), "")
	rep.Measure("credit_stalls", float64(stalls), "")
	rep.Measure("hub_wait_cycles", float64(waits), "cycles")
	rep.Measure("hub_busy", busy, "")
	rep.Measure("filtered", float64(filtered), "")
	rep.Measure("link_utilisation", mean, "")
	rep.Measure("link_utilisation_max", peak, "")
	rep.Measure("saturated", map[bool]float64{true: 1, false: 0}[x.Saturated], "")
	return rep
}
