package fabric

import (
	"math"
	"math/rand/v2"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/waves"
)

// endpoint is the core that the traffic endpoints of the star networks
// share (ATMEndpoint on a switch/atm star, MCEndpoint on a switch/mchub
// star): a port of the star, a Bernoulli source in link cycles with
// geometric inter-arrival times (the same process as one trial per cycle,
// without an event per cycle), generation that a stopper can end, the
// queue / sent / received waveform signals and the tick order send,
// receive, generate. What a unit of traffic is (a cell, a write), how it
// is sent and what the receiver checks is the network's, in its
// endpointLogic.
type endpoint struct {
	*clock.Ticking
	env   *env.Env
	id    int
	port  star.Port
	rng   *rand.Rand
	inj   traffic.Bernoulli
	gen   bool // false: the endpoint only receives
	logic endpointLogic

	nextGen uint64 // cycle of the next Bernoulli success
	stopGen bool

	sigQueue, sigSent, sigRecv *waves.Signal
}

// endpointLogic is what a network's endpoint adds to the core.
type endpointLogic interface {
	// send puts the next unit (or the next flit of it) on the link.
	send(now clock.Time, c uint64)
	// receive takes what arrived.
	receive(now clock.Time, c uint64)
	// create makes the unit generated at cycle at and queues it.
	create(at uint64)
	// queued is the source queue's length.
	queued() int
	// wakeSender asks for the tick at which send can go on, when it has
	// work.
	wakeSender(now clock.Time)
}

// init finishes the core once the endpoint's own fields are set: the
// clocked component name on clk, the first generation cycle, the port's
// connection, the waveform signals queued (the source queue's length),
// <unit>_sent and <unit>_received (counters of the units, "cells" or
// "writes"), and the watchdog registration, in that order.
func (ep *endpoint) init(name string, clk clock.Clock, logic endpointLogic, unit string) {
	ep.logic = logic
	ep.Ticking = clock.NewTicking(name, ep.env.Engine, clk, ep)
	ep.nextGen = ep.gap(0)
	ep.port.Connect(ep)
	reg := ep.env.Waves
	ep.sigQueue = reg.Integer(name, "queued", 32)
	ep.sigSent = reg.Integer(name, unit+"_sent", 32)
	ep.sigRecv = reg.Integer(name, unit+"_received", 32)
}

// ID returns the endpoint's port number.
func (ep *endpoint) ID() int { return ep.id }

// Start begins generating; call it before the simulation runs.
func (ep *endpoint) Start() {
	if ep.nextGen == math.MaxUint64 {
		return
	}
	ep.WakeAt(ep.Clock().TimeOf(clock.Cycle(ep.nextGen)))
}

// StopGenerating ends generation; what was generated is still sent.
func (ep *endpoint) StopGenerating() { ep.stopGen = true }

// gap returns the cycle of the next Bernoulli success after cycle c.
func (ep *endpoint) gap(c uint64) uint64 {
	if !ep.gen {
		return math.MaxUint64
	}
	return ep.inj.Next(c, ep.rng)
}

// Tick implements clock.Ticker: send (output), receive (input), generate.
func (ep *endpoint) Tick(now clock.Time) bool {
	c := uint64(ep.Clock().CycleAt(now))
	l := ep.logic
	l.send(now, c)
	l.receive(now, c)
	n := l.queued()
	for !ep.stopGen && ep.nextGen <= c {
		l.create(ep.nextGen)
		ep.nextGen = ep.gap(ep.nextGen + 1)
	}
	if q := l.queued(); q != n {
		ep.sigQueue.Set(now, uint64(q))
	}
	l.wakeSender(now)
	if !ep.stopGen && ep.nextGen != math.MaxUint64 {
		ep.WakeAt(ep.Clock().TimeOf(clock.Cycle(ep.nextGen)))
	}
	return false
}
