// Package rwscen is the scenario of the firmware tutorial's example
// (docs/firmware-tutorial.md): one remote write of the firmware/remotewrite
// control program on the testbench verify/testbench/remotewritetb.
package rwscen

import (
	"fmt"

	"github.com/nisim/nisim/firmware/remotewrite"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/remotewritetb"
)

// Params are the parameters of the remotewrite scenario.
type Params struct {
	// Nodes is the cluster size; Src and Dst the writer and the node
	// written to; Size the bytes written.
	Nodes    int                `toml:"nodes"`
	Src      int                `toml:"src"`
	Dst      int                `toml:"dst"`
	Size     int                `toml:"size"`
	Firmware remotewrite.Config `toml:"firmware"`
}

// Defaults are a 100-byte write from node 0 to node 1 of two.
func Defaults() *Params {
	return &Params{Nodes: 2, Src: 0, Dst: 1, Size: 100, Firmware: remotewrite.DefaultConfig()}
}

// Validate implements scenario.Params.
func (p *Params) Validate() error {
	f, k := p.Firmware, p.Firmware.Costs
	errs := []error{
		// Structural: the hosts of the 64-node Myrinet grid the
		// testbench builds (remotewritetb.ClusterConfig).
		scenario.Check(p.Nodes < 2 || p.Nodes > 64, "nodes", "must be 2..64 (got %d)", p.Nodes),
		scenario.Check(p.Src < 0 || p.Src >= p.Nodes, "src", "must be a node, 0..%d (got %d)", p.Nodes-1, p.Src),
		scenario.Check(p.Dst < 0 || p.Dst >= p.Nodes || p.Dst == p.Src, "dst", "must be a node other than src, 0..%d (got %d)", p.Nodes-1, p.Dst),
		scenario.Check(p.Size < 1 || p.Size > f.MaxLen, "size", "must be 1..firmware.max_len = %d (got %d)", f.MaxLen, p.Size),
		// The slots live in the card's SRAM (the layout check): bound them
		// first, their size overflowed and let 2^63 through.
		scenario.Check(f.Slots < 1 || f.Slots > 1<<16, "firmware.slots", "must be 1..%d (got %d)", 1<<16, f.Slots),
		// Structural: the payload room lies in the LANai's SRAM, at most
		// 1 MiB (firmware/remotewrite Config.Validate, then its layout
		// check against the card's SRAM); 65536 slots of a descriptor
		// are already more than that SRAM holds.
		scenario.Check(f.MaxLen < 4 || f.MaxLen > 1<<20, "firmware.max_len", "must be 4..%d (got %d)", 1<<20, f.MaxLen),
		scenario.Check(f.Counter < 0 || f.Counter%4 != 0 || f.Counter > remotewritetb.HostMemBytes-4 || f.Counter > remotewritetb.SrcBase-4,
			"firmware.counter", "must be a 4-byte aligned host address below %#x (got %#x)", remotewritetb.SrcBase, f.Counter),
	}
	for _, c := range []struct {
		key string
		v   int
	}{{"dispatch", k.Dispatch}, {"desc", k.Desc}, {"dma_start", k.DMAStart}, {"dma_done", k.DMADone}, {"transmit", k.Transmit},
		{"send_done", k.SendDone}, {"receive", k.Receive}, {"count", k.Count}, {"boot", k.Boot}} {
		errs = append(errs, scenario.Check(c.v < 0, "firmware.costs."+c.key, "must not be negative (got %d)", c.v),
			scenario.CheckCycles("firmware.costs."+c.key, int64(c.v), remotewritetb.DefaultClusterConfig().Platform.NI.Clock, scenario.MaxDelay))
	}
	return scenario.FirstError(errs...)
}

// Scenario is remotewrite: one remote write on the PPro platform.
func Scenario() *scenario.Scenario {
	return &scenario.Scenario{
		Name:    "remotewrite",
		Summary: "firmware tutorial's remote write on LANai 4.1 / PPro",
		System:  "Myrinet/LCI",
		// Typical: measured once with /usr/bin/time on a 2-core machine,
		// 2026-11-27 (documentation only).
		Typical:  "< 0.1 s",
		Defaults: func() scenario.Params { return Defaults() },
		Run:      func(e *env.Env, p scenario.Params) (*scenario.Report, error) { return Run(e, p.(*Params)) },
		Waves:    waveView,
	}
}

// Run runs the write in e and reports its latency and the NIs' work.
func Run(e *env.Env, p *Params) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c := remotewritetb.DefaultClusterConfig()
	c.Nodes, c.Firmware = p.Nodes, p.Firmware
	r, err := remotewritetb.Write(e, c, p.Src, p.Dst, p.Size)
	if r.Cluster == nil {
		return nil, err
	}
	rep := &scenario.Report{Title: fmt.Sprintf("remotewrite: %d bytes from node %d to node %d of %d (PPro platform, LANai 4.1)",
		p.Size, p.Src, p.Dst, p.Nodes), Result: r.Run}
	us := func(t clock.Time) string { return fmt.Sprintf("%.3f µs", float64(t)/float64(clock.Microsecond)) }
	rep.Add("latency: descriptor store to counter in memory", us(r.Latency), "", "")
	rep.Add("counter seen by the destination's poll", us(r.Seen-r.Start), "", "")
	rep.Add("switches crossed", fmt.Sprint(r.Cluster.Net.Hops(p.Src, p.Dst)), "", "")
	for _, n := range []*remotewritetb.Node{r.Cluster.Nodes[p.Src], r.Cluster.Nodes[p.Dst]} {
		s := n.Card.Stats()
		rep.Add(fmt.Sprintf("node %d NI: handlers, processor busy (boot included)", n.ID), fmt.Sprintf("%d, %s", s.Handlers, us(s.Busy)), "", "")
	}
	rep.Measure("latency", float64(r.Latency)/float64(clock.Microsecond), "us")
	detail := fmt.Sprintf("the %d bytes and the counter arrived intact; no checker fired", p.Size)
	if err != nil {
		detail = "the run failed (the errors follow the report)"
	}
	rep.Check("delivered", err == nil, "%s", detail)
	return rep, err
}
