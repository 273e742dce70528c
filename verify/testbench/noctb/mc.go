package noctb

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
)

// MCPageBytes is a Memory Channel page, the unit a receive mapping covers
// (MC-P6: 8 KB, switch/mchub.PageSize).
const MCPageBytes = mchub.PageSize

// MCConfig is a first-generation Memory Channel hub (switch/mchub) with an
// adapter per port, writing to shared pages.
type MCConfig struct {
	// Ports, Delay (hub cycles) and QueueDepth (flits per output queue)
	// are the hub's.
	Ports      int
	Delay      int
	QueueDepth int
	// Broadcast maps every page at every adapter; otherwise each page is
	// mapped at one adapter drawn from the run seed (stream "MC.Pages").
	// Pages is how many pages there are; Loopback turns loop-back on for
	// all of them (MC-P8).
	Broadcast bool
	Pages     int
	Loopback  bool
	// InjectionRate is each adapter's offered load as a fraction of its
	// link's bandwidth, in data bytes; Sizes the write lengths in bytes.
	InjectionRate float64
	Sizes         traffic.Sizes
	// Window is the warm-up, measurement and drain, in link cycles.
	Window stats.Window
}

// DefaultMCConfig is the hub of the MC1 preset (8 ports, MC-P12; the
// forwarding delay and queues assumed: see switch/mchub.MC1); the pages,
// traffic and window are the caller's.
func DefaultMCConfig() MCConfig {
	h := mchub.MC1()
	return MCConfig{Ports: h.Ports(), Delay: h.Delay(), QueueDepth: h.QueueDepth()}
}

// MCClock is the clock of the Memory Channel star: its links', on which
// the MC1 hub runs too.
func MCClock() clock.Clock { return mchub.LinkClock() }

// MCWriteFlits returns the flits a write of n data bytes takes in the MC1
// packet format (a header on the head flit).
func MCWriteFlits(n int) int { return mchub.MC1().Format().Flits(n) }

// MCAdapterError is RunMC's error when an adapter cannot be built for the
// page map (a single mapping can leave an adapter no page to write to).
type MCAdapterError struct{ Err error }

// Error is the adapter builder's message.
func (e *MCAdapterError) Error() string { return e.Err.Error() }

// Unwrap returns the adapter builder's error.
func (e *MCAdapterError) Unwrap() error { return e.Err }

// MCRun is what RunMC built and measured.
type MCRun struct {
	// Star is the hub and its links (Links[i] from adapter i, side A, to
	// hub port i).
	Star *mchub.Star
	// Shared holds the adapters' checkers, page map and counts.
	Shared *fabric.MCShared
	// Clock and Link are the star's clock and links; BusBytes the hub
	// bus width in bytes per cycle.
	Clock    clock.Clock
	Link     link.Config
	BusBytes int
	// Window is the run's; Stats the measurement window's statistics;
	// End the run's last cycle; Result the simulation's end.
	Window stats.Window
	Stats  stats.Result
	End    uint64
	Result env.Result
	// Saturated says the drain limit stopped the run with measured
	// deliveries outstanding; Stuck is the stuck state then.
	Saturated bool
	Stuck     string
}

// RunMC builds the star of c in e (the hub, a link and an adapter endpoint
// per port, the page map) and runs it through warm-up, measurement and
// drain: once the window is over and every measured write has reached
// every receiver, the adapters stop generating and the hub empties. The
// checkers, always on (switch/fabric.MCShared): every write reaches every
// mapped receiver exactly once after the adapters' receive filters
// ("MC.Deliveries"), every receiver sees its writes in the hub's global
// order (the Pages scoreboard, MC-P9) and each source's writes in the order
// sent ("MC.Sources"). The hub is the MC1 bus: every write goes to every
// adapter, and each adapter filters by the page map. A build error
// returns a nil run (an *MCAdapterError when the page map leaves an adapter
// nothing to write to); otherwise the error is the run's.
func RunMC(e *env.Env, c MCConfig) (*MCRun, error) {
	hb := mchub.MC1().WithPorts(c.Ports).WithDelay(c.Delay).WithQueueDepth(c.QueueDepth)
	lc := mchub.LinkConfig()
	st, err := mchub.MakeStarBuilder().WithEnv(e).WithHub(hb).WithLink(lc).Build("MC")
	if err != nil {
		return nil, err
	}
	var pages []fabric.MCPageMap
	if c.Broadcast {
		pages = fabric.MCBroadcastPages(c.Pages, c.Ports, c.Loopback)
	} else {
		pages = fabric.MCSinglePages(c.Pages, c.Ports, e.Rand("MC.Pages"), c.Loopback)
	}
	clk := lc.Clock
	col := stats.New(c.Ports, c.Window)
	sh, err := fabric.NewMCShared(e, "MC", c.Ports, pages, col)
	if err != nil {
		return nil, err
	}
	if err := sh.Attach(st.Hub); err != nil {
		return nil, err
	}
	x := &MCRun{Star: st, Shared: sh, Clock: clk, Link: lc, BusBytes: hb.BusBytesPerCycle(), Window: c.Window}
	drain := newDrainer(e, "MC.Experiment", clk, c.Window, sh.Open)
	sh.OnDeliver = func(now clock.Time, _ *mchub.Write, _ int) { drain.resolved(now) }
	var eps []*fabric.MCEndpoint
	for i := range c.Ports {
		ep, err := fabric.MakeMCEndpointBuilder().WithEnv(e).WithStar(st, i).WithTraffic(c.InjectionRate, c.Sizes).
			WithShared(sh).Build(fmt.Sprintf("MC.Adapter%d", i))
		if err != nil {
			return nil, &MCAdapterError{Err: err}
		}
		eps = append(eps, ep)
		drain.stops = append(drain.stops, ep.StopGenerating)
	}
	for _, ep := range eps {
		ep.Start()
	}
	drain.start()
	res, runErr := e.Run()
	if !drain.saturated {
		sh.Finish(res.End) // every write at every receiver, in the hub's order
		if runErr == nil {
			runErr = e.Monitor.Err()
		}
	}
	x.Stats = col.Result()
	x.End = uint64(clk.CycleAt(res.End))
	x.Result = res
	x.Saturated, x.Stuck = drain.saturated, drain.state
	return x, runErr
}

// MCFlitBytes is the payload of one flit of the MC1 hub's format (what a
// queued flit holds besides the link's own Flit), for bounds on queue
// depths.
func MCFlitBytes() int { return mchub.MC1().Format().FlitBytes }
