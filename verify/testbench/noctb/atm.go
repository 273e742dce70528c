package noctb

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/atm"
	"github.com/nisim/nisim/switch/fabric"
	"github.com/nisim/nisim/switch/stats"
	"github.com/nisim/nisim/switch/traffic"
)

// ATMConfig is a FORE ASX-100 cell switch (switch/atm) with a host per
// port, each sending cells on one permanent VC per destination.
type ATMConfig struct {
	// Ports, Latency (switch cycles) and QueueDepth (cells per output
	// queue) are the switch's.
	Ports      int
	Latency    int
	QueueDepth int
	// Pattern picks each cell's destination; InjectionRate is each host's
	// offered load as a fraction of its link's cell rate (1: a cell every
	// 53 byte times).
	Pattern       traffic.Pattern
	InjectionRate float64
	// Window is the warm-up, measurement and drain, in link cycles.
	Window stats.Window
}

// DefaultATMConfig is the switch of the ASX100 preset (4 ports of 140 Mb/s,
// AT-P8; the latency calibrated to AT-P9's 7 µs; 256-cell output queues,
// assumed: see switch/atm.ASX100); the traffic and window are the caller's.
func DefaultATMConfig() ATMConfig {
	sw := atm.ASX100()
	return ATMConfig{Ports: sw.Ports(), Latency: sw.Latency(), QueueDepth: sw.QueueDepth()}
}

// ATMClock is the clock of the ATM star: its links' (one byte time of a
// 140 Mb/s link a cycle), on which the ASX100 switch runs too.
func ATMClock() clock.Clock { return atm.LinkClock() }

// ATMRun is what RunATM built and measured.
type ATMRun struct {
	// Star is the switch and its links (Links[i] from host i, side A, to
	// switch port i).
	Star *atm.Star
	// Shared holds the endpoints' checkers and per-port counts.
	Shared *fabric.ATMShared
	// Clock and Link are the star's clock and links.
	Clock clock.Clock
	Link  link.Config
	// CellCycles is a cell's serialisation on a link, in cycles.
	CellCycles int
	// Stats are the measurement window's statistics; End the run's last
	// cycle; Result the simulation's end.
	Stats  stats.Result
	End    uint64
	Result env.Result
	// Saturated says the drain limit stopped the run with measured cells
	// unresolved; Stuck is the stuck state then.
	Saturated bool
	Stuck     string
}

// Corrupted returns the cells that arrived with a failed CRC, over all
// ports.
func (x *ATMRun) Corrupted() uint64 {
	var n uint64
	for _, pc := range x.Shared.Ports() {
		n += pc.Corrupted
	}
	return n
}

// RunATM builds the star of c in e (the switch with its permanent VCs, a
// link and a traffic endpoint per port) and runs it through warm-up,
// measurement and drain: once the window is over and every measured cell
// has been delivered or dropped, the endpoints stop generating and the
// switch empties. The checkers, always on ("ATM.Cells", "ATM.Order"): every
// cell is delivered exactly once or dropped and counted by the switch, and
// each VC's cells arrive in order (switch/fabric.ATMShared). A build error
// returns a nil run; otherwise the error is the run's.
func RunATM(e *env.Env, c ATMConfig) (*ATMRun, error) {
	sw := atm.ASX100().WithPorts(c.Ports).WithLatency(c.Latency).WithQueueDepth(c.QueueDepth)
	lc := atm.LinkConfig()
	st, err := atm.MakeStarBuilder().WithEnv(e).WithSwitch(sw).WithLink(lc).Build("ATM")
	if err != nil {
		return nil, err
	}
	if err := fabric.SetupATMVCs(st.Switch); err != nil {
		return nil, err
	}
	clk := lc.Clock
	col := stats.New(c.Ports, c.Window)
	sh := fabric.NewATMShared(e, "ATM", c.Ports, col)
	sh.Attach(st.Switch)
	x := &ATMRun{Star: st, Shared: sh, Clock: clk, Link: lc,
		CellCycles: (atm.CellBytes + lc.BytesPerCycle - 1) / lc.BytesPerCycle}
	drain := newDrainer(e, "ATM.Experiment", clk, c.Window, sh.Open)
	sh.OnResolve = func(now clock.Time, cell *fabric.ATMCell, _ bool) {
		if cell.Measured {
			drain.resolved(now)
		}
	}
	var eps []*fabric.ATMEndpoint
	for i := range c.Ports {
		ep, err := fabric.MakeATMEndpointBuilder().WithEnv(e).WithStar(st, i).WithTraffic(c.Pattern, c.InjectionRate).
			WithShared(sh).Build(fmt.Sprintf("ATM.Host%d", i))
		if err != nil {
			return nil, err
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
		sh.Finish(res.End) // every cell delivered or dropped
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

// CellBytes is the size of an ATM cell (switch/atm), for bounds on the
// switch's output queues.
const CellBytes = atm.CellBytes
