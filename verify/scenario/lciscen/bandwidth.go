package lciscen

import (
	"fmt"
	"strings"
	"unsafe"

	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/lcitb"
)

// --- lci-throughput ---

// ThroughputParams are lci-throughput's parameters.
type ThroughputParams struct {
	Platform
	// Sizes are the message sizes in bytes (fragmented at the MTU).
	Sizes []int `toml:"sizes"`
	// Messages is the stream's length per size.
	Messages int `toml:"messages"`
	// Copy makes the receiver copy every packet out of the receive queue
	// (figure 8 and the «with copy» curves of figure 6).
	Copy bool `toml:"copy"`
}

// ThroughputDefaults sweep 64 bytes to 64 KB on the PPro with I-sdma.
func ThroughputDefaults() *ThroughputParams {
	return &ThroughputParams{Platform: Platform{"ppro", "sdma", fw.BaseMTU}, Sizes: []int{64, 256, 1024, 2048, 4096, 16384, 65536}, Messages: 24}
}

// Validate implements scenario.Params.
func (p *ThroughputParams) Validate() error {
	largest := 0
	for _, n := range p.Sizes {
		largest = max(largest, n)
	}
	return scenario.FirstError(p.validate(),
		scenario.Check(len(p.Sizes) == 0, "sizes", "need at least one size"),
		scenario.CheckKeys(p),
		checkPayload("messages", p.Messages, largest))
}

// sizeReportBytes is what each listed size keeps for the whole run (each
// size's stream is built and dropped in turn): derived: a scenario.Row
// and a scenario.Metric (their string headers and value) plus about 96
// bytes of formatted text (the "%7d bytes" metric, the MB/s and µs figure,
// the "mbps_N" name).
var sizeReportBytes = int64(unsafe.Sizeof(scenario.Row{})+unsafe.Sizeof(scenario.Metric{})) + 96

// ThroughputScenario is lci-throughput.
func ThroughputScenario() *scenario.Scenario {
	return scenario.Typed("lci-throughput", "one-way throughput vs message size on 2 nodes (figures 6, 8)",
		ThroughputDefaults, RunThroughput)
}

// RunThroughput runs the sweep.
func RunThroughput(e *env.Env, p *ThroughputParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, err := configMTU(p.Platform.Platform, p.Variant, p.MTU, 2)
	if err != nil {
		return nil, err
	}
	copyNote := "without"
	if p.Copy {
		copyNote = "with"
	}
	rep := &scenario.Report{Title: fmt.Sprintf("lci-throughput: %s on the %s platform, node 0 streaming %d messages per size to node 1, %s the receiver's copy",
		c.FirmwareConfig().Name(), c.Platform.Name, p.Messages, copyNote)}
	for i, n := range p.Sizes {
		e.Phase(i, len(p.Sizes), fmt.Sprintf("%d bytes", n))
		run := e
		if i > 0 {
			run = nil
		}
		t, err := lcitb.Stream(run, c, lcitb.Bench{Size: n, Warm: 0, Iters: 2, Stream: p.Messages}, p.Copy)
		if err != nil {
			return nil, fmt.Errorf("%d bytes: %w", n, err)
		}
		if i == 0 {
			rep.Result = t.Run
		}
		rep.Add(fmt.Sprintf("%7d bytes", n), fmt.Sprintf("%.1f MB/s (%.2f µs per message)", t.MBps, usf(t.Gap)), "", "")
		rep.Measure(fmt.Sprintf("mbps_%d", n), t.MBps, "MB/s")
	}
	e.Phase(len(p.Sizes), len(p.Sizes), "")
	addThroughputNotes(rep, c)
	return rep, nil
}

// addThroughputNotes states what the paper says about the curves (it gives
// them only as figures).
func addThroughputNotes(rep *scenario.Report, c lcitb.Config) {
	switch {
	case c.Platform.Name == "P3" && c.Variant == fw.PIO:
		rep.Add("paper: I-pio on the P3 is bounded by PIO", "see the sizes above", "~120 MB/s",
			paper+" 5.2.4 «The PIO-write bandwidth on the P3 platform is limited to about 120 Mbyte/s» (MY-P33)")
	case c.Platform.Name == "PPro":
		rep.Add("paper: with the copy, large messages on the PPro", "see the sizes above", "< 52 MB/s",
			paper+" 5.3 «this memory copy causes the effective throughput to drop below 52 Mbyte/s for messages exceeding the L2 cache size»")
	}
}

// --- lci-broadcast ---

// BroadcastParams are lci-broadcast's parameters.
type BroadcastParams struct {
	Platform
	// Tree is binary or binomial.
	Tree string `toml:"tree"`
	// Forward is ni (NI-level multicast forwarding, the base
	// implementation) or host (I-sdma-hmc, I-pio-hmc; section 5.4).
	Forward string `toml:"forward"`
	// Nodes in the broadcast group (the paper: 64).
	Nodes int `toml:"nodes"`
	// Iters is the broadcasts of 16 bytes timed (after 2 of warm-up).
	Iters int `toml:"iters"`
	// StreamSize and StreamMessages are the throughput test's messages;
	// the receivers copy them («The throughput tests are with receiver
	// copy»).
	StreamSize     int `toml:"stream_size"`
	StreamMessages int `toml:"stream_messages"`
}

// BroadcastDefaults are 64 nodes, binary trees, I-sdma on the PPro.
func BroadcastDefaults() *BroadcastParams {
	return &BroadcastParams{Platform: Platform{"ppro", "sdma", fw.BaseMTU}, Tree: "binary", Forward: "ni", Nodes: 64, Iters: 4, StreamSize: 4096, StreamMessages: 12}
}

// Validate implements scenario.Params.
func (p *BroadcastParams) Validate() error {
	_, ferr := hostForward(p.Forward)
	return scenario.FirstError(p.validate(), ferr, scenario.CheckKeys(p),
		checkPayload("stream_messages", p.StreamMessages, p.StreamSize))
}

// BroadcastScenario is lci-broadcast.
func BroadcastScenario() *scenario.Scenario {
	return scenario.Typed("lci-broadcast", "broadcast on up to 64 nodes, NI forwarding trees (section 5.4)",
		BroadcastDefaults, RunBroadcast)
}

// RunBroadcast measures the latency (in e) and the throughput.
func RunBroadcast(e *env.Env, p *BroadcastParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, err := configMTU(p.Platform.Platform, p.Variant, p.MTU, p.Nodes)
	if err != nil {
		return nil, err
	}
	c.Tree, _ = fw.ParseTree(p.Tree)
	c.HostForward, _ = hostForward(p.Forward)
	rep := &scenario.Report{Title: fmt.Sprintf("lci-broadcast: %s, %s trees, %d nodes of the %s platform; the waveform shows the latency runs",
		c.FirmwareConfig().Name(), c.Tree, p.Nodes, c.Platform.Name)}
	lat, tp, res, err := measureBroadcast(e, c, p.Iters, p.StreamSize, p.StreamMessages)
	if err != nil {
		return nil, err
	}
	addBroadcast(rep, c, p.Nodes, lat, tp, p.StreamSize)
	rep.Result = res
	return rep, nil
}

func measureBroadcast(e *env.Env, c lcitb.Config, iters, size, msgs int) (lat float64, tp lcitb.Throughput, res env.Result, err error) {
	b := lcitb.Bench{Size: 16, Warm: 2, Iters: iters, Stream: 8}
	// lcitb's measurements name themselves ("broadcast latency: ...").
	e.Phase(0, 2, "broadcast latency")
	l, r, err := lcitb.Broadcast(e, c, b)
	if err != nil {
		return 0, tp, r, err
	}
	e.Phase(1, 2, "broadcast throughput")
	tp, err = lcitb.BroadcastStream(nil, c, lcitb.Bench{Size: size, Warm: 0, Iters: 2, Stream: msgs}, true)
	if err != nil {
		return 0, tp, r, err
	}
	e.Phase(2, 2, "")
	return usf(l), tp, r, nil
}

func addBroadcast(rep *scenario.Report, c lcitb.Config, nodes int, lat float64, tp lcitb.Throughput, size int) {
	name := fmt.Sprintf("%s %s %s tree", c.Platform.Name, c.FirmwareConfig().Name(), c.Tree)
	pl, pt := paperBroadcastLatency(c.Platform.Name, c.Variant, c.Tree, c.HostForward), paperBroadcastThroughput(c.Platform.Name, c.Variant, c.Tree, c.HostForward)
	// Figure 9's figures are the base implementation's, I-pio's and
	// I-sdma-hmc's (2 KB MTU).
	if nodes != 64 || c.FirmwareConfig().MTU != fw.BaseMTU || c.Reliability != fw.NoRetransmit {
		pl, pt = 0, 0
	}
	m, p := vsPaper(lat, pl, "µs")
	src := "no figure in the text (binomial trees: «consistently lower» latency)"
	if c.HostForward && c.Tree == fw.Binary {
		src = "no figure in the text for I-pio-hmc (the paper measured I-sdma-hmc)"
	}
	if pl > 0 {
		src = paper + " 5.4, 16-byte broadcast on 64 nodes (validation)"
	}
	rep.Add(name+": broadcast latency to the last receiver, 16 bytes", m, p, src)
	m, p = vsPaper(tp.MBps, pt, "MB/s")
	src = "no figure in the text for the PPro"
	if c.HostForward && c.Platform.Name == "P3" {
		src = "no figure in the text for host forwarding on binary trees (figure 9 only)"
	}
	if pt > 0 {
		src = paper + " 5.4, «almost 100», 75 and «around 37 Mbyte/s» (validation)"
	}
	rep.Add(fmt.Sprintf("%s: broadcast throughput, %d-byte messages, receivers copy", name, size), m, p, src)
	key := strings.ToLower(fmt.Sprintf("%s_%s_%s", c.Platform.Name, c.FirmwareConfig().Name(), c.Tree))
	rep.Measure(key+"_bcast_latency_us", lat, "µs")
	rep.Measure(key+"_bcast_mbps", tp.MBps, "MB/s")
}
