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

// Validate implements scenario.Params: the ranges of Keys, then dst
// other than src and the counter's alignment.
func (p *Params) Validate() error {
	f := p.Firmware
	return scenario.FirstError(
		scenario.CheckKeys(p),
		scenario.Check(p.Dst == p.Src, "dst", "must be a node other than src, 0..%d (got %d)", p.Nodes-1, p.Dst),
		scenario.Check(f.Counter%4 != 0, "firmware.counter", "must be a 4-byte aligned host address below %#x (got %#x)", remotewritetb.SrcBase, f.Counter),
	)
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
