// Package myrinet models a Myrinet switch: a source-routed cut-through
// crossbar. Every packet carries its route as leading bytes, one per switch
// (Flit.Route on the head flit); a switch reads the first byte to choose
// its output, strips it, and forwards the packet flit by flit as it
// arrives, after a fall-through delay («The switch delay is approximately
// 100 ns», lci-myrinet-cluster-protocols.txt section 3, MY-P18). A packet
// that finds its output busy waits at the input and holds everything
// behind it; once it has the output it keeps it until its tail has passed
// («Network packets are cut-through-routed through switches and full-duplex
// links with hardware flow control», MY-P16). Links use STOP/GO flow
// control with slack buffers (rtl/link), and every link checks a CRC per
// packet: a corrupted packet keeps its Bad mark to the destination, which
// counts it instead of delivering it.
package myrinet

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// Builder configures a Switch.
type Builder struct {
	env         *env.Env
	clk         clock.Clock
	ports       int
	fallThrough int
}

// MakeBuilder returns a builder for an 8-port switch (Myrinet SAN, MY-P17)
// with an 8-cycle fall-through (see FallThroughCycles).
func MakeBuilder() Builder { return Builder{ports: 8, fallThrough: FallThroughCycles} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithClock sets the switch clock, the link clock (required).
func (b Builder) WithClock(c clock.Clock) Builder { b.clk = c; return b }

// WithPorts sets the number of ports.
func (b Builder) WithPorts(n int) Builder { b.ports = n; return b }

// WithFallThrough sets the cycles from a head becoming visible at an input
// to its first forwarding, once its output is free.
func (b Builder) WithFallThrough(n int) Builder { b.fallThrough = n; return b }

// Build creates the switch.
func (b Builder) Build(name string) (*Switch, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case !b.clk.Valid():
		return nil, errors.New(name + ": no clock")
	case b.ports < 2 || b.ports > 255:
		return nil, fmt.Errorf("%s: ports %d must be in 2..255", name, b.ports)
	case b.fallThrough < 0:
		return nil, fmt.Errorf("%s: fall-through %d cycles must not be negative", name, b.fallThrough)
	}
	s := &Switch{env: b.env, fall: b.fallThrough,
		in: make([]*input, b.ports), out: make([]*output, b.ports)}
	s.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, s)
	reg := b.env.Waves
	// out<p>_owner names the input port that holds output p for its
	// packet ("in<i>", the port number of the input's link), "-" while
	// the output is free.
	for p := range b.ports {
		s.in[p] = &input{to: -1, waiting: -1, name: fmt.Sprintf("in%d", p)}
		s.out[p] = &output{owner: -1}
		s.out[p].sig = reg.String(name, fmt.Sprintf("out%d_owner", p))
		s.out[p].sig.SetString(0, "-")
	}
	b.env.Register(s)
	return s, nil
}

type input struct {
	name    string // "in<i>", the value of an output's owner signal
	dir     *link.Dir
	to      int   // output held, -1
	ready   int64 // cycle forwarding may start (fall-through)
	waiting int   // requested output while it is busy, -1
	discard bool  // dropping a misrouted packet until its tail
	blocked uint64
}

type output struct {
	dir   *link.Dir
	owner int // input holding it, -1
	rr    int // next input to favour
	flits uint64
	sig   *waves.Signal
}

// Switch is a clocked source-routed cut-through crossbar.
type Switch struct {
	*clock.Ticking
	env  *env.Env
	fall int
	in   []*input
	out  []*output
}

// Ports returns the number of ports.
func (s *Switch) Ports() int { return len(s.in) }

// ConnectInput attaches the link direction arriving at port p.
func (s *Switch) ConnectInput(p int, d *link.Dir) {
	s.in[p].dir = d
	d.SetReceiver(s)
}

// ConnectOutput attaches the link direction leaving port p.
func (s *Switch) ConnectOutput(p int, d *link.Dir) {
	s.out[p].dir = d
	d.SetSender(s)
}

// Stats are a port's counters.
type Stats struct {
	// FlitsOut is the flits sent on the port; BlockedCycles the cycles a
	// head waited at the port's input for a busy output.
	FlitsOut, BlockedCycles uint64
}

// PortStats returns port p's counters.
func (s *Switch) PortStats(p int) Stats {
	return Stats{FlitsOut: s.out[p].flits, BlockedCycles: s.in[p].blocked}
}

// Tick implements clock.Ticker: forward flits on the paths held, then
// connect waiting heads to free outputs.
func (s *Switch) Tick(now clock.Time) bool {
	c := int64(s.Clock().CycleAt(now))
	busy := false
	for i, in := range s.in {
		if in.to >= 0 {
			busy = s.forward(now, c, i) || busy
		}
	}
	busy = s.connect(now, c) || busy
	return busy
}

// forward moves the next flit of input i's packet to its output.
func (s *Switch) forward(now clock.Time, c int64, i int) bool {
	in := s.in[i]
	if c < in.ready {
		return true
	}
	f, ok := in.dir.Rx(0).PeekAt(now, 0)
	if !ok {
		return false // the next flit wakes us when it lands
	}
	o := s.out[in.to]
	if !o.dir.Idle(now) {
		s.WakeAt(o.dir.BusyUntil()) // the previous flit is still going out
		return false
	}
	if !o.dir.CanSend(now, 0) {
		return false // STOP: GO wakes us
	}
	in.dir.Rx(0).Pop(now)
	if f.Head {
		f.Route = f.Route[1:]
		if pk, ok := f.Meta.(interface{ AddHop() }); ok {
			pk.AddHop()
		}
	}
	o.dir.Send(now, f)
	o.flits++
	if f.Tail {
		o.owner = -1
		o.sig.SetString(now, "-")
		in.to = -1
	}
	return true
}

// connect gives free outputs to the heads waiting for them, round-robin
// among the inputs that want the same output.
func (s *Switch) connect(now clock.Time, c int64) bool {
	busy, waiting := false, false
	for i, in := range s.in {
		if in.to >= 0 || in.dir == nil {
			continue
		}
		f, ok := in.dir.Rx(0).PeekAt(now, 0)
		if !ok {
			in.waiting = -1
			continue
		}
		if in.discard || !f.Head || len(f.Route) == 0 || int(f.Route[0]) >= len(s.out) || s.out[f.Route[0]].dir == nil {
			s.discard(now, i, f)
			busy = true
			continue
		}
		in.waiting = int(f.Route[0])
		waiting = true
	}
	if !waiting {
		return busy
	}
	for p, o := range s.out {
		if o.owner >= 0 {
			continue
		}
		n := len(s.in)
		for k := range n {
			i := (o.rr + k) % n
			in := s.in[i]
			if in.to < 0 && in.waiting == p {
				o.owner, o.rr = i, (i+1)%n
				in.to, in.waiting, in.ready = p, -1, c+int64(s.fall)
				o.sig.SetString(now, in.name)
				busy = true
				if s.env.Trace.Enabled() {
					f, _ := in.dir.Rx(0).PeekAt(now, 0)
					s.env.Trace.Emit(now, s.Clock().CycleAt(now), s.Name(), "myri.route",
						trace.Uint("pkt", f.Packet), trace.Int("in", int64(i)), trace.Int("out", int64(p)))
				}
				break
			}
		}
	}
	for _, in := range s.in {
		if in.waiting >= 0 {
			in.blocked++
			busy = true
		}
	}
	return busy
}

// discard consumes a packet that cannot be routed (no route byte left, a
// port that does not exist or is not connected), reporting it once.
func (s *Switch) discard(now clock.Time, i int, f link.Flit) {
	in := s.in[i]
	if _, ok := in.dir.Rx(0).Pop(now); !ok {
		// This cycle's pop went to the previous packet's tail (forward):
		// the flit is discarded, and reported, next cycle, once. (It was
		// reported here and again then.)
		return
	}
	if !in.discard {
		s.env.Report(now, s.Name(), "myri.route", "input %d: packet %d has no valid route byte (%v)", i, f.Packet, f.Route)
	}
	in.discard = !f.Tail
}

// Idle implements check.Unit.
func (s *Switch) Idle() bool {
	for _, in := range s.in {
		if in.to >= 0 || in.waiting >= 0 {
			return false
		}
	}
	return true
}

// State implements check.Unit.
func (s *Switch) State() string {
	st := ""
	for i, in := range s.in {
		if in.to >= 0 {
			st += fmt.Sprintf("in%d->out%d ", i, in.to)
		} else if in.waiting >= 0 {
			st += fmt.Sprintf("in%d waits for out%d (held by in%d) ", i, in.waiting, s.out[in.waiting].owner)
		}
	}
	return st
}
