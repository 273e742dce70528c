package noc

import (
	"fmt"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/noctb"
)

// ATMParams are the parameters of the atm-star scenario: hosts on a FORE
// ASX-100 cell switch (switch/atm), each sending cells on one permanent VC
// per destination.
type ATMParams struct {
	// Ports, Latency (switch cycles) and QueueDepth (cells per output
	// queue) are the switch's; the defaults are the ASX100 preset.
	Ports      int `toml:"ports"`
	Latency    int `toml:"latency"`
	QueueDepth int `toml:"queue_depth"`
	// Traffic is uniform, hotspot, bitcomp or neighbor (switch/traffic);
	// hotspot sends HotFraction of every other host's cells to the
	// Hotspots.
	Traffic     string  `toml:"traffic"`
	Hotspots    []int   `toml:"hotspots"`
	HotFraction float64 `toml:"hot_fraction"`
	// InjectionRate is each host's offered load as a fraction of its
	// link's cell rate (1: a cell every 53 byte times).
	InjectionRate float64 `toml:"injection_rate"`
	// SamplePeriod link cycles per period; WarmupPeriods of warm-up and
	// MeasurePeriods of measurement; the drain may last DrainLimit cycles.
	SamplePeriod   int `toml:"sample_period"`
	WarmupPeriods  int `toml:"warmup_periods"`
	MeasurePeriods int `toml:"measure_periods"`
	DrainLimit     int `toml:"drain_limit"`
}

// ATMDefaults is the FORE ASX-100 preset with 4 hosts and uniform traffic
// at 0.4 of the link rate. With traffic = "hotspot" the other three hosts
// send every cell to host 0: 3 x 0.4 = 1.2 times what its output can carry,
// so its queue fills and the switch drops cells.
func ATMDefaults() *ATMParams {
	sw := noctb.DefaultATMConfig()
	return &ATMParams{Ports: sw.Ports, Latency: sw.Latency, QueueDepth: sw.QueueDepth,
		// assumed: 0.4, a moderate load; the paper gives no traffic mix.
		Traffic: "uniform", Hotspots: []int{0}, HotFraction: 1, InjectionRate: 0.4,
		// 10000 cycles = 571 µs a period: 2 of warm-up, 10 measured
		// (about 900 cells per host); a full 256-cell queue drains in
		// 13568 cycles, well inside the drain limit.
		SamplePeriod: 10000, WarmupPeriods: 2, MeasurePeriods: 10, DrainLimit: 50000}
}

func (p *ATMParams) window() window {
	return window{p.SamplePeriod, p.WarmupPeriods, p.MeasurePeriods, p.DrainLimit}
}

func (p *ATMParams) pattern() (traffic.Pattern, error) {
	pat, err := traffic.New(p.Traffic, p.Ports, traffic.Options{K: p.Ports, Hotspots: p.Hotspots, HotFraction: p.HotFraction})
	if err != nil {
		return nil, &scenario.KeyError{Key: "traffic", Msg: err.Error()}
	}
	return pat, nil
}

// Validate implements scenario.Params: the ranges of Keys, then the
// traffic pattern and the run's length.
func (p *ATMParams) Validate() error {
	if err := scenario.FirstError(
		scenario.Check(p.Traffic == "transpose", "traffic", "transpose needs a mesh; a star takes uniform, hotspot, bitcomp or neighbor"),
		scenario.CheckKeys(p),
	); err != nil {
		return err
	}
	if _, err := p.pattern(); err != nil {
		return err
	}
	return p.window().validate(noctb.ATMClock())
}

// ATMScenario is the atm-star scenario.
func ATMScenario() *scenario.Scenario {
	return &scenario.Scenario{Name: "atm-star",
		Summary:  "4 hosts on a FORE ASX-100 cell switch (traffic=hotspot: drops)",
		Defaults: func() scenario.Params { return ATMDefaults() },
		Run:      func(e *env.Env, p scenario.Params) (*scenario.Report, error) { return RunATM(e, p.(*ATMParams)) }}
}

// RunATM builds the star of p in e (noctb.RunATM), runs the experiment
// and reports.
func RunATM(e *env.Env, p *ATMParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pat, _ := p.pattern()
	c := noctb.DefaultATMConfig()
	c.Ports, c.Latency, c.QueueDepth = p.Ports, p.Latency, p.QueueDepth
	c.Pattern, c.InjectionRate, c.Window = pat, p.InjectionRate, p.window().stats()
	x, runErr := noctb.RunATM(e, c)
	if x == nil {
		return nil, runErr
	}
	rep := p.report(x)
	sent, recv, dropped := x.Shared.Cells.Counts()
	conserved(rep, "no loss or duplication", e.Monitor, !x.Saturated, sent, recv, dropped, "cells", "ATM.Cells", "ATM.Order")
	measured(rep, x.Stats.Packet.N, "cells")
	rep.Stuck = x.Stuck
	rep.Result = x.Result
	return rep, runErr
}

func (p *ATMParams) report(x *noctb.ATMRun) *scenario.Report {
	r, clk := x.Stats, x.Clock
	cellCycles := float64(x.CellCycles)
	load := fmt.Sprintf("%s traffic", p.Traffic)
	if p.Traffic == "hotspot" {
		load = fmt.Sprintf("hotspot traffic (hot_fraction %g to host %s)", p.HotFraction, intList(p.Hotspots))
	}
	rep := &scenario.Report{Title: fmt.Sprintf("atm-star: %d hosts on an ATM cell switch (latency %d cycles, %d-cell output queues), 140 Mb/s links, %s at %g of the link rate",
		p.Ports, p.Latency, p.QueueDepth, load, p.InjectionRate)}
	rep.Add("cell latency, mean (creation to arrival)", durations(clk, r.Packet.Mean), "", "")
	rep.Add("cell latency p50 / p99 / max", fmt.Sprintf("%d / %d / %d cycles", r.Packet.P50, r.Packet.P99, r.Packet.Max), "", "")
	rep.Add("network latency, min / mean (onto the link to arrival)",
		fmt.Sprintf("%d / %.1f cycles", r.Network.Min, r.Network.Mean), "", "")
	// A direct cable delivers a cell sent at c at c + cell time + wire
	// delay; what the smallest network latency adds to that is the
	// switch's share of an uncontended trip.
	direct := cellCycles + float64(x.Link.DelayCycles)
	switchShare := float64(r.Network.Min) - direct
	if r.Network.N > 0 {
		rep.Add("switch's share of a cell's trip (smallest network latency minus a direct cable's)",
			durations(clk, switchShare), "about 7 µs", "AT-P9 «a latency of about 7 μs for each cell going through the switch»")
	}
	rep.Add("offered / accepted per host (fraction of the link's cell rate)",
		fmt.Sprintf("%.4f / %.4f", r.Offered*cellCycles, r.Accepted*cellCycles), "", "")
	measured := r.Packet.N + r.Lost
	rep.Add("measured cells: created / delivered / dropped",
		fmt.Sprintf("%d / %d / %d", measured, r.Packet.N, x.Shared.MeasuredDropped()), "", "")
	up, down := linkUse(x.Star.Links, r.LastDelivery)
	var sent, delivered, dropped, swDropped uint64
	balanced := true
	pcs := x.Shared.Ports()
	for i, pc := range pcs {
		s := x.Star.Switch.Stats(i)
		q := x.Star.Switch.Queue(i).Stats()
		rep.Add(fmt.Sprintf("host %d: sent / received / lost at its output queue", i),
			fmt.Sprintf("%d / %d / %d (queue peak %d of %d)", pc.Sent, pc.Received, s.Dropped, q.MaxOccupancy, p.QueueDepth), "", "")
		rep.Add(fmt.Sprintf("host %d: link utilisation to / from the switch", i), fmt.Sprintf("%.3f / %.3f", up[i], down[i]), "", "")
		sent += pc.Sent
		delivered += pc.DeliveredFrom
		dropped += pc.DroppedFrom
		swDropped += s.Dropped + s.NoRoute + s.BadHeader
		lost := x.Star.Links[i].From(link.A).Stats().Overflows + x.Star.Links[i].From(link.B).Stats().Overflows
		// Per source: everything sent was delivered or dropped; per
		// output: everything sent to the host arrived (intact or
		// corrupted) or was lost at its queue, by the switch's own count
		// (or overflowed its link's receive buffer). With the VCs of
		// SetupVCs no cell lacks a route.
		if pc.Sent != pc.DeliveredFrom+pc.DroppedFrom || pc.SentTo != pc.Received+pc.Corrupted+s.Dropped+lost {
			balanced = false
		}
	}
	mean, peak := meanMax(up, down)
	rep.Add("link utilisation, mean / busiest", fmt.Sprintf("%.3f / %.3f", mean, peak), "", "")
	rep.Check("sent = delivered + dropped, per port", balanced && dropped == swDropped+x.Corrupted(),
		"%d sent = %d delivered + %d dropped (%d by the switch)", sent, delivered, dropped, swDropped)
	rep.Check("drained", !x.Saturated && r.Lost == x.Shared.MeasuredDropped(),
		"%d measured cells neither delivered nor dropped after the drain", r.Lost-x.Shared.MeasuredDropped())
	rep.Measure("offered", r.Offered*cellCycles, "link rate")
	rep.Measure("accepted", r.Accepted*cellCycles, "link rate")
	rep.Measure("latency", r.Packet.Mean, "cycles")
	rep.Measure("latency_us", us(clk, r.Packet.Mean), "µs")
	rep.Measure("latency_p50", float64(r.Packet.P50), "cycles")
	rep.Measure("latency_p99", float64(r.Packet.P99), "cycles")
	rep.Measure("latency_max", float64(r.Packet.Max), "cycles")
	rep.Measure("network_latency", r.Network.Mean, "cycles")
	rep.Measure("network_latency_min", float64(r.Network.Min), "cycles")
	rep.Measure("switch_latency_us", us(clk, switchShare), "µs")
	rep.Measure("sent", float64(sent), "cells")
	rep.Measure("delivered", float64(delivered), "cells")
	rep.Measure("dropped", float64(dropped), "cells")
	rep.Measure("measured_dropped", float64(x.Shared.MeasuredDropped()), "cells")
	for i := range pcs {
		rep.Measure(fmt.Sprintf("dropped_port%d", i), float64(x.Star.Switch.Stats(i).Dropped), "cells")
	}
	rep.Measure("link_utilisation", mean, "")
	rep.Measure("link_utilisation_max", peak, "")
	rep.Measure("saturated", map[bool]float64{true: 1, false: 0}[x.Saturated], "")
	return rep
}
