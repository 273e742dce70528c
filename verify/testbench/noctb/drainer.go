package noctb

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/stats"
)

// drainer runs a star's experiment through warm-up, measurement and drain:
// once the measurement window is over and every measured transaction has
// been resolved (delivered, or dropped where the network may drop), the
// endpoints stop generating and the network empties, so the run ends with
// the checkers and the watchdog seeing everything through. If the drain
// limit passes first the network is saturated and the run is stopped
// where it is.
type drainer struct {
	*clock.Ticking
	env       *env.Env
	win       stats.Window
	open      func() int // measured transactions not resolved yet
	stops     []func()
	ended     bool
	saturated bool
	state     string // the stuck-state snapshot at the drain limit
}

func newDrainer(e *env.Env, name string, clk clock.Clock, win stats.Window, open func() int) *drainer {
	d := &drainer{env: e, win: win, open: open}
	d.Ticking = clock.NewTicking(name, e.Engine, clk, d)
	return d
}

// start arms the end-of-measurement timer; call it before the run.
func (d *drainer) start() { d.WakeAt(d.Clock().TimeOf(clock.Cycle(d.win.Warmup + d.win.Measure))) }

// resolved must be called whenever a measured transaction is resolved.
func (d *drainer) resolved(now clock.Time) {
	if !d.ended && uint64(d.Clock().CycleAt(now)) >= d.win.Warmup+d.win.Measure && d.open() == 0 {
		d.end()
	}
}

// Tick implements clock.Ticker: it checks the end of measurement and the
// drain limit.
func (d *drainer) Tick(now clock.Time) bool {
	if d.ended {
		return false
	}
	c := uint64(d.Clock().CycleAt(now))
	measureEnd := d.win.Warmup + d.win.Measure
	switch {
	case c < measureEnd:
		d.WakeAt(d.Clock().TimeOf(clock.Cycle(measureEnd)))
	case d.open() == 0:
		d.end()
	case c >= measureEnd+d.win.DrainLimit:
		d.saturated = true
		d.state = d.env.Monitor.Snapshot(now, "drain limit hit")
		d.env.Stop()
		d.end()
	default:
		d.WakeAt(d.Clock().TimeOf(clock.Cycle(measureEnd + d.win.DrainLimit)))
	}
	return false
}

func (d *drainer) end() {
	d.ended = true
	for _, s := range d.stops {
		s()
	}
}
