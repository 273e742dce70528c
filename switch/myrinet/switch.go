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
	"math/bits"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/fifo"
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
		in: make([]*input, b.ports), out: make([]*output, b.ports),
		queued: newPortSet(b.ports), held: newPortSet(b.ports), wanted: newPortSet(b.ports),
		best: make([]int, b.ports), req: make([]int, 0, b.ports)}
	s.Ticking = clock.NewTicking(name, b.env.Engine, b.clk, s)
	reg := b.env.Waves
	// out<p>_owner names the input port that holds output p for its
	// packet ("in<i>", the port number of the input's link), "-" while
	// the output is free.
	for p := range b.ports {
		s.in[p] = &input{to: -1, waiting: -1, blockedFrom: -1, name: fmt.Sprintf("in%d", p)}
		s.out[p] = &output{owner: -1}
		s.best[p] = -1
		s.out[p].sig = reg.String(name, fmt.Sprintf("out%d_owner", p))
		s.out[p].sig.SetString(0, "-")
	}
	b.env.Register(s)
	return s, nil
}

type input struct {
	name    string // "in<i>", the value of an output's owner signal
	dir     *link.Dir
	rx      *fifo.FIFO[link.Flit] // dir.Rx(0)
	to      int                   // output held, -1
	ready   int64                 // cycle forwarding may start (fall-through)
	waiting int                   // requested output while it is busy, -1
	discard bool                  // dropping a misrouted packet until its tail
	// landed counts the flits in rx (landed, not yet taken), so a
	// connected input waiting for its next flit costs no look at the
	// FIFO.
	landed int
	// blocked counts the cycles the head waited for a busy output in
	// finished waits; blockedFrom is the first cycle of the current wait
	// (-1: not waiting), so a waiting head costs no tick.
	blocked     uint64
	blockedFrom int64
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

	// The inputs worth looking at, so a cycle costs the busy ports, not
	// all of them (the arbitration is the same as a scan of every port):
	// queued holds every input whose receive buffer may hold a flit (set
	// when a flit arrives, cleared when connect finds the buffer empty),
	// held every input that holds an output.
	queued, held portSet
	// Scratch for connect: the inputs whose head requests a busy or free
	// output this cycle (ascending), the free outputs requested, and
	// each requested output's round-robin winner so far (-1).
	req    []int
	wanted portSet
	best   []int
}

// portSet is a set of port numbers, one bit each.
type portSet []uint64

func newPortSet(n int) portSet { return make(portSet, (n+63)/64) }

func (ps portSet) add(p int)    { ps[p>>6] |= 1 << (p & 63) }
func (ps portSet) remove(p int) { ps[p>>6] &^= 1 << (p & 63) }

// Ports returns the number of ports.
func (s *Switch) Ports() int { return len(s.in) }

// ConnectInput attaches the link direction arriving at port p. The switch
// takes the direction's OnArrive callback to learn which inputs hold flits
// (as the wormhole router does), so nothing else may set it.
func (s *Switch) ConnectInput(p int, d *link.Dir) {
	in := s.in[p]
	in.dir, in.rx = d, d.Rx(0)
	d.SetReceiver(s)
	d.OnArrive(func(clock.Time, int) {
		in.landed++
		s.queued.add(p)
	})
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
	in := s.in[p]
	b := in.blocked
	if in.blockedFrom >= 0 {
		// Still waiting: every cycle from the first it lost through the
		// current one.
		b += uint64(int64(s.Clock().CycleAt(s.Now())) - in.blockedFrom + 1)
	}
	return Stats{FlitsOut: s.out[p].flits, BlockedCycles: b}
}

// Tick implements clock.Ticker: forward flits on the paths held, then
// connect waiting heads to free outputs.
func (s *Switch) Tick(now clock.Time) bool {
	c := int64(s.Clock().CycleAt(now))
	busy := false
	for w, word := range s.held {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			busy = s.forward(now, c, w<<6|b) || busy
		}
	}
	busy = s.connect(now, c) || busy
	return busy
}

// forward moves the next flit of input i's packet to its output.
func (s *Switch) forward(now clock.Time, c int64, i int) bool {
	in := s.in[i]
	if c < in.ready {
		// Falling through: nothing to do until the cycle forwarding may
		// start (the switch sleeps unless another port wakes it).
		s.WakeAt(s.Clock().TimeOf(clock.Cycle(in.ready)))
		return false
	}
	if in.landed == 0 {
		return false // the next flit wakes us when it lands
	}
	fp := in.rx.Front(now) // in place, not copied out
	if fp == nil {
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
	f := *fp
	if in.rx.Drop(now) {
		in.landed--
	}
	if f.Head {
		f.StripRoute()
		if pk, ok := f.Meta().(interface{ AddHop() }); ok {
			pk.AddHop()
		}
	}
	o.dir.Send(now, &f)
	o.flits++
	if f.Tail {
		o.owner = -1
		o.sig.SetString(now, "-")
		in.to = -1
		s.held.remove(i)
	}
	return true
}

// connect gives free outputs to the heads waiting for them, round-robin
// among the inputs that want the same output. It looks only at the inputs
// that may have a flit (queued) and reads their heads in place.
func (s *Switch) connect(now clock.Time, c int64) bool {
	busy := false
	s.req = s.req[:0]
	for w, word := range s.queued {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			i := w<<6 | b
			in := s.in[i]
			if in.to >= 0 {
				continue
			}
			f := in.rx.Front(now)
			if f == nil {
				if in.rx.Len() == 0 {
					s.queued.remove(i)
				}
				in.waiting = -1
				continue
			}
			r := f.Route()
			if in.discard || !f.Head || len(r) == 0 || int(r[0]) >= len(s.out) || s.out[r[0]].dir == nil {
				s.discard(now, i, *f)
				busy = true
				continue
			}
			in.waiting = int(r[0])
			s.req = append(s.req, i)
		}
	}
	if len(s.req) == 0 {
		return busy
	}
	// Each input requests one output, so each free output's winner is the
	// requester first at or after its rr in port order: the one at the
	// least distance (i - rr) mod n.
	n := len(s.in)
	for _, i := range s.req {
		p := s.in[i].waiting
		o := s.out[p]
		if o.owner >= 0 {
			continue
		}
		if j := s.best[p]; j < 0 || (i-o.rr+n)%n < (j-o.rr+n)%n {
			s.best[p] = i
		}
		s.wanted.add(p)
	}
	for w, word := range s.wanted {
		s.wanted[w] = 0
		for word != 0 {
			b := bits.TrailingZeros64(word)
			word &^= 1 << b
			p := w<<6 | b
			i := s.best[p]
			s.best[p] = -1
			o, in := s.out[p], s.in[i]
			o.owner, o.rr = i, (i+1)%n
			in.to, in.waiting, in.ready = p, -1, c+int64(s.fall)
			if in.blockedFrom >= 0 {
				in.blocked += uint64(c - in.blockedFrom)
				in.blockedFrom = -1
			}
			s.held.add(i)
			o.sig.SetString(now, in.name)
			busy = true
			if s.env.Trace.Enabled() {
				f := in.rx.Front(now)
				s.env.Trace.Emit(now, s.Clock().CycleAt(now), s.Name(), "myri.route",
					trace.Uint("pkt", f.Packet()), trace.Int("in", int64(i)), trace.Int("out", int64(p)))
			}
		}
	}
	// A head that lost waits asleep: its output is freed only by a tail
	// this switch forwards, in a tick whose connect sees it. Its blocked
	// cycles run from the first cycle it lost to the cycle it wins.
	for _, i := range s.req {
		if in := s.in[i]; in.waiting >= 0 && in.blockedFrom < 0 {
			in.blockedFrom = c
		}
	}
	return busy
}

// discard consumes a packet that cannot be routed (no route byte left, a
// port that does not exist or is not connected), reporting it once.
func (s *Switch) discard(now clock.Time, i int, f link.Flit) {
	in := s.in[i]
	if !in.rx.Drop(now) {
		// This cycle's pop went to the previous packet's tail (forward):
		// the flit is discarded, and reported, next cycle, once. (It was
		// reported here and again then.)
		return
	}
	in.landed--
	if !in.discard {
		s.env.Report(now, s.Name(), "myri.route", "input %d: packet %d has no valid route byte (%v)", i, f.Packet(), f.Route())
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
