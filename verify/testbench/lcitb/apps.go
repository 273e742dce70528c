package lcitb

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lciapps"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/mpi"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// The application skeletons of section 7 (host/lciapps) on an LCI
// cluster: the implementation variants of figures 12 to 16 and the time
// per step relative to I-sdma's.

// The variants of section 7's figures.
const (
	// AppSDMA is I-sdma, the base implementation: every figure's 1.0.
	AppSDMA = "sdma"
	// AppPIO is I-pio (figure 13).
	AppPIO = "pio"
	// AppNIRX and AppHRX are I-nirx and I-hrx (figure 12).
	AppNIRX = "nirx"
	AppHRX  = "hrx"
	// App1K and App4K are I-sdma with a 1 KB or 4 KB MTU, I-1k and I-4k
	// (figure 15).
	App1K = "1k"
	App4K = "4k"
	// AppHMC is I-sdma-hmc, host-level multicast forwarding (figure 16).
	AppHMC = "hmc"
	// AppBinomial is ASP with MPICH's default binomial broadcast over
	// point-to-point messages (section 7.4: «58% worse»).
	AppBinomial = "binomial"
	// AppAsync is SOR «+ async» on I-sdma (figure 14).
	AppAsync = "async"
	// AppRCPY is SOR on I-rcpy (section 7.2, figure 14): the control
	// program runs lci.RCPY and SOR's border rows go by RemoteCopy into
	// the neighbours' ghost rows (host/lciapps sorrcpy.go) instead of
	// MPI_Send; the reduction stays on MPI (whose messages I-rcpy's
	// library sends as I-pio does: host/lcilib stage).
	AppRCPY = "rcpy"
	// AppRcpyAsync is SOR «+ async» on I-rcpy (figure 14).
	AppRcpyAsync = "rcpy-async"
)

// RcpyVariants are SOR's I-rcpy variants (figure 14). They are not in
// VariantsOf (the matrix of figures 12, 13, 15 and 16 runs without them).
var RcpyVariants = []string{AppRCPY, AppRcpyAsync}

// AppVariants are the variants every application runs.
var AppVariants = []string{AppSDMA, AppPIO, AppNIRX, AppHRX, App1K, App4K, AppHMC}

// VariantsOf are app's variants: AppVariants, ASP's binomial broadcast and
// SOR's +async.
func VariantsOf(app string) []string {
	v := slices.Clone(AppVariants)
	switch app {
	case lciapps.ASP:
		v = append(v, AppBinomial)
	case lciapps.SOR:
		v = append(v, AppAsync)
	}
	return v
}

// AppConfig is c (its platform and nodes) set up for variant of app, and
// the application's options.
func AppConfig(c Config, app, variant string) (Config, lciapps.Options, error) {
	o := lciapps.Options{Bcast: mpi.BcastPanda}
	if c.Platform.Name == "P3" {
		o.Platform = 1
	}
	c.Variant, c.Reliability, c.MTU, c.HostForward, c.Interrupts = lci.SDMA, lci.NoRetransmit, 0, false, false
	switch variant {
	case AppSDMA:
	case AppPIO:
		c.Variant = lci.PIO
	case AppNIRX:
		c.Reliability = lci.NIRetransmit
	case AppHRX:
		// A process computing for milliseconds stops polling while
		// others send to it: I-hrx's acknowledgments then need the
		// polling watchdog's signal (as RunTraffic).
		c.Reliability, c.Interrupts = lci.HostRetransmit, true
	case App1K:
		c.MTU = 1024
	case App4K:
		c.MTU = 4096
	case AppHMC:
		c.HostForward = true
	case AppBinomial, AppAsync, AppRCPY, AppRcpyAsync:
		if !slices.Contains(VariantsOf(app), variant) && !slices.Contains(RcpyVariants, variant) || slices.Contains(RcpyVariants, variant) && app != lciapps.SOR {
			return c, o, fmt.Errorf("variant %q is %s's only", variant, map[string]string{AppBinomial: "ASP", AppAsync: "SOR", AppRCPY: "SOR", AppRcpyAsync: "SOR"}[variant])
		}
		if variant == AppBinomial {
			o.Bcast = mpi.BcastBinomial
		}
		if slices.Contains(RcpyVariants, variant) {
			c.Variant, o.RCPY = lci.RCPY, true
		}
		o.Async = variant == AppAsync || variant == AppRcpyAsync
	default:
		return c, o, fmt.Errorf("unknown variant %q (have %v, binomial for ASP, async, rcpy and rcpy-async for SOR)", variant, AppVariants)
	}
	o.MTU = c.FirmwareConfig().MTU
	return c, o, c.Validate()
}

// AppResult is one application run.
type AppResult struct {
	App, Variant string
	// StepTime is the mean time per step over the measured window: from
	// the end of the last warm-up step to the end of the last step, the
	// slowest node's each.
	StepTime clock.Time
	// Steps are the window's steps, each the slowest node's end minus
	// the previous step's.
	Steps []clock.Time
	// PacketRate is the data packets the nodes' PPSs received per second
	// of the window per node (lciapps.World.Packets; acknowledgments and
	// send completions are not counted).
	PacketRate float64
	// CRLChecked and CRLViolations are CRL's coherence checker's counts
	// (Barnes, Radix).
	CRLChecked, CRLViolations int
	// JobsPushed and JobsReceived are Puzzle's jobs.
	JobsPushed, JobsReceived uint64
	Run                      env.Result
}

// RunApp runs app's skeleton in variant on c (its platform and nodes) in e
// (a fresh one if nil): warm + measured steps, every checker on; the run
// must end with every node done and nothing in flight.
func RunApp(e *env.Env, c Config, app, variant string, warm, measured int) (r AppResult, err error) {
	return RunAppCol(e, c, app, variant, 0, warm, measured)
}

// RunAppCol is RunApp with SOR's column size (figure 14's axis; 0 is the
// paper's 1536, the only one other applications take); an I-rcpy run
// ends with the NTLB checker (lci.ntlb) on every node.
func RunAppCol(e *env.Env, c Config, app, variant string, colSize, warm, measured int) (r AppResult, err error) {
	defer named(&err, "lci app "+app+" "+variant)
	if warm < 0 || measured < 1 {
		return r, fmt.Errorf("%d warm-up and %d measured steps: need warm >= 0, measured >= 1", warm, measured)
	}
	c, o, err := AppConfig(c, app, variant)
	if err != nil {
		return r, err
	}
	o.Steps, o.ColSize = warm+measured, colSize
	if e == nil {
		e = env.New(env.Options{})
	}
	var w *lciapps.World
	var serr error
	run := func(e *env.Env, c Config, setup func(cl *Cluster)) (env.Result, error) {
		_, res, err := runIn(e, c, setup)
		return res, err
	}
	if o.RCPY {
		run = rcpyRun
	}
	res, err := run(e, c, func(cl *Cluster) {
		var hosts []*lcilib.Host
		for _, n := range cl.Nodes {
			hosts = append(hosts, n.Host)
		}
		w, serr = lciapps.New(e, app, hosts, o)
		if serr != nil {
			return
		}
		for k, n := range cl.Nodes {
			n.Host.Run(w.Program(k))
		}
	})
	if serr != nil {
		return r, serr
	}
	r = AppResult{App: app, Variant: variant, Run: res}
	if err != nil {
		return r, err
	}
	if ch := w.CRLChecker(); ch != nil {
		r.CRLChecked, r.CRLViolations = ch.Checked, ch.Violations
	}
	r.JobsPushed, r.JobsReceived = w.Jobs()
	end := func(i int) clock.Time {
		var t clock.Time
		for k := range w.Ends {
			if i >= 0 {
				t = max(t, w.Ends[k][i])
			}
		}
		return t
	}
	for k := range w.Ends {
		if len(w.Ends[k]) != o.Steps {
			return r, fmt.Errorf("node %d finished %d of %d steps", k, len(w.Ends[k]), o.Steps)
		}
	}
	for i := warm; i < o.Steps; i++ {
		r.Steps = append(r.Steps, end(i)-end(i-1))
	}
	window := end(o.Steps-1) - end(warm-1)
	r.StepTime = window / clock.Time(measured)
	var pk uint64
	for k := range w.Packets {
		pk += w.Packets[k][o.Steps-1]
		if warm > 0 {
			pk -= w.Packets[k][warm-1]
		}
	}
	if window > 0 {
		r.PacketRate = float64(pk) / float64(len(w.Packets)) / (float64(window) / float64(clock.Second))
	}
	return r, nil
}
