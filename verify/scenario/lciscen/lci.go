// Package lci holds the runnable experiments of the Myrinet/LCI model
// (lanai, firmware/lci, host/lcilib), the microbenchmarks of
// lci-myrinet-cluster-protocols.txt section 5:
//
//   - lci-logp: the LogP parameters and the F&A latency of one platform and
//     variant (Tables III and IV), the ping-pong in the captured run;
//   - lci-latency: end-to-end latency against message size for I-sdma and
//     I-pio, and the size where DMA catches up with PIO (figure 7);
//   - lci-throughput: one-way throughput against message size, with and
//     without the receiver's copy (figures 6 and 8);
//   - lci-broadcast: broadcast latency and throughput on 64 nodes for a
//     tree, a variant and NI- or host-level forwarding (forward=host:
//     I-sdma-hmc, section 5.4) (figure 9);
//   - lci-traffic: randomised unicast, multicast and fetch-and-add traffic
//     with every checker on;
//   - lci-report: every figure of the paper these produce, on both
//     platforms, next to the paper's value with the error;
//   - lci-pps: the parallel-programming systems of section 6 (Panda, MPI,
//     CRL, Orca, Multigame) over LCI, Tables V and VI on PPro I-pio and
//     P3 I-sdma, each layer's one calibrated cost fitted to its PPro
//     latency delta of Table V;
//   - lci-apps: the applications of section 7 as skeletons (host/lciapps),
//     time per step relative to I-sdma per variant, the findings of
//     7.1-7.4.
//
// The calibration is the PPro I-sdma row of Table III only (the
// `calibrated:` parameters: the LANai CPI, the PCI bridge's read latency,
// the library's send and receive cycles); everything else is validation,
// reported with its error and not held to it.
package lciscen

import (
	"fmt"
	"math"
	"slices"
	"strings"

	fw "github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/lcitb"
)

// Scenarios returns the LCI scenarios.
func Scenarios() []*scenario.Scenario {
	const sys = "Myrinet/LCI"
	// Typical run times: the defaults, measured once with /usr/bin/time on a
	// 2-core machine shared with other jobs, 2026-11-27 (documentation only).
	return withWaves([]*scenario.Scenario{
		LogPScenario().In(sys, "0.5 s"),
		LatencyScenario().In(sys, "2 s"),
		ThroughputScenario().In(sys, "4 s"),
		BroadcastScenario().In(sys, "6 s"),
		TrafficScenario().In(sys, "0.6 s"),
		ReportScenario().In(sys, "70 s"),
		PPSScenario().In(sys, "60 s"),
		AppsScenario().In(sys, "40 s"),
	})
}

// Platform names a platform and variant as the parameters give them.
type Platform struct {
	// Platform is ppro or p3 (Table I).
	Platform string `toml:"platform"`
	// Variant is the implementation: sdma (I-sdma, the base
	// implementation), pio (I-pio), nirx (I-nirx: I-sdma with the NI's
	// retransmission protocol, section 5.1.2) or hrx (I-hrx: with the
	// host's, section 5.1.1).
	Variant string `toml:"variant"`
	// MTU is the packet size in bytes: 2048, the base implementation's, or
	// 1024 or 4096 (I-1k, I-4k; section 5.3). The names compose (Table II):
	// variant = "pio" with mtu = 1024 is I-pio-1k.
	MTU int `toml:"mtu"`
}

// mtus are the MTUs of Table II: «The base implementation uses an MTU of 2
// Kbyte; I-1k and I-4k use a 1-Kbyte MTU and a 4-Kbyte MTU» (section 5.3).
var mtus = []int{1024, fw.BaseMTU, 4096}

func (p Platform) validate() error {
	_, err1 := lcilib.PlatformPreset(p.Platform)
	_, _, err2 := fw.ParseImplementation(p.Variant)
	var errs []error
	if err1 != nil {
		errs = append(errs, &scenario.KeyError{Key: "platform", Msg: err1.Error()})
	}
	if err2 != nil {
		errs = append(errs, &scenario.KeyError{Key: "variant", Msg: err2.Error()})
	}
	if !slices.Contains(mtus, p.MTU) {
		errs = append(errs, &scenario.KeyError{Key: "mtu", Msg: fmt.Sprintf("%d bytes is not 1024, 2048 or 4096 (I-1k, the base, I-4k; Table II)", p.MTU)})
	}
	return scenario.FirstError(errs...)
}

// packetLimit is the largest one-packet message of the parameters' MTU
// (the base's when the MTU is not one of Table II's, which validate
// reports).
func (p Platform) packetLimit() int {
	if slices.Contains(mtus, p.MTU) {
		return p.MTU
	}
	return mtu
}

// packetNote explains packetLimit: "one packet of the 2 KB MTU".
func (p Platform) packetNote() string {
	return fmt.Sprintf("one packet of the %d KB MTU", p.packetLimit()/1024)
}

// config is the cluster configuration of a platform and variant with the
// base implementation's 2 KB MTU.
func config(platform, variant string, nodes int) (lcitb.Config, error) {
	return configMTU(platform, variant, fw.BaseMTU, nodes)
}

// configMTU is the cluster configuration of a platform, variant and MTU
// (lcitb.Config.MTU: the buffer bytes held constant, the window derived).
func configMTU(platform, variant string, mtu, nodes int) (lcitb.Config, error) {
	c := lcitb.DefaultConfig()
	c.MTU = mtu
	pl, err := lcilib.PlatformPreset(platform)
	if err != nil {
		return c, err
	}
	v, rel, err := fw.ParseImplementation(variant)
	if err != nil {
		return c, err
	}
	c.Platform, c.Variant, c.Reliability, c.Nodes = pl, v, rel, nodes
	return c, c.Validate()
}

// hostForward reads the forward key: "host" selects host-level multicast
// forwarding (I-sdma-hmc, section 5.4), "ni" the base implementation's.
func hostForward(forward string) (bool, error) {
	switch forward {
	case "ni":
		return false, nil
	case "host":
		return true, nil
	}
	return false, &scenario.KeyError{Key: "forward", Msg: fmt.Sprintf("%q is not ni or host (NI-level or host-level multicast forwarding, section 5.4)", forward)}
}

func usf(t clock.Time) float64 { return float64(t) / float64(clock.Microsecond) }

// vsPaper formats a model figure next to the paper's with the error.
func vsPaper(model, paper float64, unit string) (string, string) {
	if paper <= 0 {
		return fmt.Sprintf("%.2f %s", model, unit), "-"
	}
	return fmt.Sprintf("%.2f %s (%+.0f%%)", model, unit, pct(model, paper)), fmt.Sprintf("%.1f %s", paper, unit)
}

func pct(model, paper float64) float64 { return 100 * (model - paper) / paper }

// calibTolerance is how close the calibrated row must be (the issue: within
// 10% each).
const calibTolerance = 10

// addLogP reports a LogP row, checking it against the paper when it is the
// calibration row, or the one metric (fitted, an addLogP label) a
// variant's calibrated cost is fitted to (fittedLogP).
func addLogP(rep *scenario.Report, name string, r lcitb.LogP, p logp, calibrated bool, fitted string) {
	figs := []struct {
		metric string
		model  clock.Time
		paper  float64
	}{{"send overhead os", r.Os, p.Os}, {"receive overhead or", r.Or, p.Or}, {"latency L", r.L, p.L},
		{"gap g", r.G, p.G}, {"end-to-end latency (os + L + or)", r.E2E, p.E2E}, {"fetch-and-add latency", r.FA, p.FA}}
	for _, f := range figs {
		if f.paper < 0 {
			continue
		}
		m, pp := vsPaper(usf(f.model), f.paper, "µs")
		src := paper + " " + p.Source
		fit := calibrated || f.metric == fitted
		switch {
		case calibrated:
			src += " (calibration)"
		case fit:
			src += " (calibration: the variant's one fitted cost)"
		default:
			src += " (validation)"
		}
		rep.AddCalibrated(fit, name+": "+f.metric, m, pp, src)
		key := strings.NewReplacer(" ", "_", "(", "", ")", "", "+", "", ":", "").Replace(strings.ToLower(name + "_" + f.metric))
		rep.Measure(key, usf(f.model), "µs")
		if fit {
			e := pct(usf(f.model), f.paper)
			rep.Check(name+" "+f.metric+" within 10%", math.Abs(e) <= calibTolerance, "%.2f µs vs %.1f µs: %+.1f%%", usf(f.model), f.paper, e)
		}
	}
}

// --- lci-logp ---

// LogPParams are lci-logp's parameters.
type LogPParams struct {
	Platform
	// Size is the message size: «16-byte messages» in Tables III and IV.
	Size int `toml:"size"`
	// Warm and Iters are the ping-pong round trips ignored and measured,
	// Stream the one-way stream's messages for the gap.
	Warm   int `toml:"warm"`
	Iters  int `toml:"iters"`
	Stream int `toml:"stream"`
}

// LogPDefaults are the paper's benchmark on the calibration platform.
func LogPDefaults() *LogPParams {
	return &LogPParams{Platform: Platform{"ppro", "sdma", fw.BaseMTU}, Size: 16, Warm: 10, Iters: 50, Stream: 1000}
}

// Validate implements scenario.Params.
func (p *LogPParams) Validate() error {
	v, _, _ := fw.ParseImplementation(p.Variant)
	return scenario.FirstError(p.validate(), scenario.CheckKeys(p),
		// I-rcpy's receiver polls the message's last word.
		scenario.Check(v == fw.RCPY && (p.Size < 4 || p.Size%4 != 0), "size",
			"I-rcpy copies 4-byte aligned blocks of at least 4 bytes, its receiver polls the last word (got %d)", p.Size),
		// The ping-pong keeps a time per round trip, warm-up included.
		scenario.CheckBudget("iters", int64(p.Warm)+int64(p.Iters), timeEntryBytes, "round trip's time (warm + iters) in a growing slice"),
		checkPayload("stream", p.Stream, p.Size))
}

// LogPScenario is lci-logp.
func LogPScenario() *scenario.Scenario {
	return scenario.Typed("lci-logp", "LogP microbenchmarks on 2 nodes, model vs Tables III/IV",
		LogPDefaults, RunLogP)
}

// RunLogP measures the LogP parameters: the ping-pong in e (captured),
// the stream and the fetch-and-add each in a fresh env.
func RunLogP(e *env.Env, p *LogPParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	c, err := configMTU(p.Platform.Platform, p.Variant, p.MTU, 2)
	if err != nil {
		return nil, err
	}
	b := lcitb.Bench{Size: p.Size, Warm: p.Warm, Iters: p.Iters, Stream: p.Stream}
	r, err := measureLogP(e, c, b)
	if err != nil {
		return nil, err
	}
	rep := &scenario.Report{Title: fmt.Sprintf("lci-logp: %s on the %s platform (%s, %s, %s), nodes 0 and 1, %d-byte messages; the waveform shows the ping-pong",
		c.FirmwareConfig().Name(), c.Platform.Name, c.Platform.CPU(), c.Platform.Host.IOBus.Name, c.Platform.NI.Name, p.Size)}
	name := c.Platform.Name + " " + c.FirmwareConfig().Name()
	pl := paperLogP(c.Platform.Name, c.FirmwareConfig())
	// Tables III and IV are the base implementation's (2 KB MTU) only.
	base := p.Size == 16 && p.MTU == fw.BaseMTU
	if !base {
		pl = logp{-1, -1, -1, -1, -1, -1, ""}
	}
	addLogP(rep, name, r, pl, base && c.Platform.Name == "PPro" && c.FirmwareConfig().Name() == "I-sdma", fittedLogP(c.Platform.Name, c.FirmwareConfig()))
	rep.Check("completed", !r.Run.Stopped && e.Monitor.Count() == 0,
		"every round trip, stream message and F&A completed: %v; checker violations: %d", !r.Run.Stopped, e.Monitor.Count())
	rep.Result = r.Run
	return rep, nil
}

// measureLogP is lcitb.MeasureLogP reporting its three measurements as
// phases of e (the stream and the fetch-and-add run in environments of
// their own, which e's event progress cannot see).
func measureLogP(e *env.Env, c lcitb.Config, b lcitb.Bench) (lcitb.LogP, error) {
	pingPong, stream := lcitb.PingPong, func(c lcitb.Config, b lcitb.Bench) (lcitb.Throughput, error) {
		return lcitb.Stream(nil, c, b, false)
	}
	if c.Variant == fw.RCPY {
		pingPong, stream = lcitb.RcpyPingPong, func(c lcitb.Config, b lcitb.Bench) (lcitb.Throughput, error) {
			return lcitb.RcpyStream(nil, c, b)
		}
	}
	e.Phase(0, 3, "ping-pong")
	r, err := pingPong(e, c, b)
	if err != nil {
		return r, err
	}
	e.Phase(1, 3, "stream")
	t, err := stream(c, b)
	if err != nil {
		return r, err
	}
	r.G = t.Gap
	e.Phase(2, 3, "fetch-and-add")
	if r.FA, err = lcitb.FetchAdd(nil, c, b); err != nil {
		return r, err
	}
	e.Phase(3, 3, "")
	return r, nil
}

// --- lci-latency ---

// LatencyParams are lci-latency's parameters.
type LatencyParams struct {
	// Platform is ppro or p3.
	Platform string `toml:"platform"`
	// From, To and Step are the message sizes in bytes.
	From int `toml:"from"`
	To   int `toml:"to"`
	Step int `toml:"step"`
	// Iters is the round trips per size (after 2 of warm-up).
	Iters int `toml:"iters"`
}

// LatencyDefaults sweep 16 to 2048 bytes.
func LatencyDefaults() *LatencyParams {
	return &LatencyParams{Platform: "ppro", From: 16, To: 2048, Step: 64, Iters: 4}
}

// Validate implements scenario.Params.
func (p *LatencyParams) Validate() error {
	_, perr := lcilib.PlatformPreset(p.Platform)
	var pe error
	if perr != nil {
		pe = &scenario.KeyError{Key: "platform", Msg: perr.Error()}
	}
	return scenario.FirstError(pe, scenario.CheckKeys(p))
}

// LatencyScenario is lci-latency.
func LatencyScenario() *scenario.Scenario {
	return scenario.Typed("lci-latency", "latency vs message size, PIO/DMA cross-over (figure 7)",
		LatencyDefaults, RunLatency)
}

// Crossover is a latency sweep's result.
type Crossover struct {
	Sizes     []int
	SDMA, PIO []clock.Time
	// At is the first size at which I-sdma's end-to-end latency is not
	// above I-pio's (0: none in the sweep).
	At int
}

// MeasureCrossover sweeps the sizes on platform (the first I-sdma run in
// e, nil: fresh).
func MeasureCrossover(e *env.Env, platform string, sizes []int, iters int) (Crossover, env.Result, error) {
	x := Crossover{Sizes: sizes}
	var first env.Result
	for i, n := range sizes {
		for k, v := range []string{"sdma", "pio"} {
			// Every ping-pong but the first runs in an env of its own.
			e.Phase(2*i+k, 2*len(sizes), fmt.Sprintf("%s %d bytes", v, n))
			c, err := config(platform, v, 2)
			if err != nil {
				return x, first, err
			}
			var run *env.Env
			if i == 0 && v == "sdma" {
				run = e
			}
			r, err := lcitb.PingPong(run, c, lcitb.Bench{Size: n, Warm: 2, Iters: iters, Stream: 8})
			if err != nil {
				return x, first, fmt.Errorf("%s %d bytes: %w", v, n, err)
			}
			if i == 0 && v == "sdma" {
				first = r.Run
			}
			if v == "sdma" {
				x.SDMA = append(x.SDMA, r.E2E)
			} else {
				x.PIO = append(x.PIO, r.E2E)
			}
		}
	}
	e.Phase(2*len(sizes), 2*len(sizes), "")
	for i, n := range sizes {
		if x.SDMA[i] <= x.PIO[i] {
			x.At = n
			break
		}
	}
	return x, first, nil
}

// RunLatency runs the sweep.
func RunLatency(e *env.Env, p *LatencyParams) (*scenario.Report, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var sizes []int
	for n := p.From; n <= p.To; n += p.Step {
		sizes = append(sizes, n)
	}
	x, res, err := MeasureCrossover(e, p.Platform, sizes, p.Iters)
	if err != nil {
		return nil, err
	}
	pl, _ := lcilib.PlatformPreset(p.Platform)
	rep := &scenario.Report{Title: fmt.Sprintf("lci-latency: end-to-end latency (half a ping-pong) on the %s platform, I-sdma and I-pio, %d to %d bytes", pl.Name, p.From, p.To)}
	for i, n := range sizes {
		rep.Add(fmt.Sprintf("%5d bytes: I-sdma / I-pio", n), fmt.Sprintf("%.2f / %.2f µs", usf(x.SDMA[i]), usf(x.PIO[i])), "", "")
		rep.Measure(fmt.Sprintf("sdma_%d_us", n), usf(x.SDMA[i]), "µs")
		rep.Measure(fmt.Sprintf("pio_%d_us", n), usf(x.PIO[i]), "µs")
	}
	addCrossover(rep, pl.Name, x)
	rep.Result = res
	return rep, nil
}

func addCrossover(rep *scenario.Report, platform string, x Crossover) {
	model := "none up to " + fmt.Sprint(x.Sizes[len(x.Sizes)-1]) + " bytes"
	if x.At > 0 {
		model = fmt.Sprintf("%d bytes (%+.0f%%)", x.At, pct(float64(x.At), float64(paperCrossover(platform))))
	}
	rep.Add(platform+": PIO/DMA cross-over (end-to-end latency)", model, fmt.Sprintf("~%d bytes", paperCrossover(platform)),
		paper+" 5.2.4 «The cross-over point is at a message size of around 800 bytes on the P3 platform, and at around 1200 bytes on the PPro platform» (validation)")
	rep.Measure(strings.ToLower(platform)+"_crossover_bytes", float64(x.At), "bytes")
}
