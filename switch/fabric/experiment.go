package fabric

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/stats"
)

// Experiment runs a network through warm-up, measurement and drain. Once
// every packet created during measurement has been delivered, the
// terminals stop generating and the network empties, so the run ends with
// the conservation checker and the deadlock watchdog seeing everything
// delivered. If the drain limit passes first, the network is saturated:
// the simulation is stopped where it is (Saturated reports it).
type Experiment struct {
	*clock.Ticking
	env       *env.Env
	stats     *stats.Collector
	win       stats.Window
	terminals []*Terminal
	ended     bool
	saturated bool
	state     string
}

// Saturated reports that the drain limit stopped the run.
func (x *Experiment) Saturated() bool { return x.saturated }

// StuckState is the model's state when the drain limit stopped the run
// (check.Monitor.Snapshot: busy units, oldest outstanding packet); "" when
// the run drained.
func (x *Experiment) StuckState() string { return x.state }

// NewExperiment creates the harness on the network clock. Terminals added
// with Add are started by Start and stop generating when the run ends.
func NewExperiment(e *env.Env, clk clock.Clock, nodes int, w stats.Window) *Experiment {
	x := &Experiment{env: e, win: w, stats: stats.New(nodes, w)}
	x.Ticking = clock.NewTicking("Experiment", e.Engine, clk, x)
	return x
}

// Stats returns the collector the terminals report to.
func (x *Experiment) Stats() *stats.Collector { return x.stats }

// Add registers a terminal.
func (x *Experiment) Add(t *Terminal) { x.terminals = append(x.terminals, t) }

// Start starts the terminals and the harness's timers.
func (x *Experiment) Start() {
	for _, t := range x.terminals {
		t.Start()
	}
	x.WakeAt(x.Clock().TimeOf(clock.Cycle(x.win.Warmup + x.win.Measure)))
}

// Delivered must be called for every delivered packet (Shared.OnDeliver)
// and Dropped for every packet discarded on the way (Shared.OnDrop): the
// drain ends when the last measured packet is resolved either way.
func (x *Experiment) Delivered(now clock.Time) { x.resolved(now) }

// Dropped: see Delivered.
func (x *Experiment) Dropped(now clock.Time) { x.resolved(now) }

func (x *Experiment) resolved(now clock.Time) {
	if !x.ended && x.stats.PhaseAt(uint64(x.Clock().CycleAt(now))) == stats.Done {
		x.end()
	}
}

// Tick implements clock.Ticker: checks the end of measurement and the
// drain limit.
func (x *Experiment) Tick(now clock.Time) bool {
	if x.ended {
		return false
	}
	c := uint64(x.Clock().CycleAt(now))
	if x.stats.PhaseAt(c) == stats.Done {
		if x.stats.Outstanding() > 0 {
			x.saturated = true
			x.state = x.env.Monitor.Snapshot(now, "drain limit hit")
			x.env.Stop()
		}
		x.end()
		return false
	}
	if x.win.DrainLimit > 0 {
		x.WakeAt(x.Clock().TimeOf(clock.Cycle(x.win.Warmup + x.win.Measure + x.win.DrainLimit)))
	}
	return false
}

func (x *Experiment) end() {
	x.ended = true
	for _, t := range x.terminals {
		t.StopGenerating()
	}
}
