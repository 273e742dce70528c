// Package star wires a star network: one central switch or hub with a
// link per port, each leading to an endpoint (a host interface, an
// adapter, a traffic endpoint). The FORE ASX-100 of the ATM paper is one
// (AT-P8 «a FORE ASX-100 switch with 4 ports, each running at 140 Mb/s»)
// and so is the Memory Channel hub (MC-P4 «forwarded to destination MC
// adapters through a hub»); switch/atm and switch/mchub build their
// networks here, and a board that attaches to either uses Port.
package star

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
)

// Center is the hardware in the middle of a star: numbered ports, each
// attached to one link (Attach wires the center's side of both
// directions), and a Waker the endpoints name as their peer.
type Center interface {
	clock.Waker
	// Name is the center's hierarchical name.
	Name() string
	// Ports is the number of ports.
	Ports() int
	// Attach connects port p: in is the direction whose receiver is the
	// center, out the direction the center sends on.
	Attach(p int, in, out *link.Dir) error
}

// Star is the links of a star and each endpoint's view of its port; the
// switch and hub packages embed it next to their center.
type Star struct {
	// Links[i] connects endpoint i (side A) to the center's port i (side B).
	Links []*link.Link
	// Ports[i] is what endpoint i uses.
	Ports []Port
}

// Port is an endpoint's view of its link to the center.
type Port struct {
	// Send is the direction the endpoint sends on (CanSend/Send, or Tx);
	// the center receives from it.
	Send *link.Dir
	// Recv is the direction the center sends on; the endpoint pops flits
	// from Recv.Rx(vc).
	Recv   *link.Dir
	center clock.Waker
}

// Connect names the endpoint ep as the sender of Send and the receiver of
// Recv, keeping the center on the other side of both.
func (p Port) Connect(ep clock.Waker) {
	p.Send.Connect(ep, p.center)
	p.Recv.Connect(p.center, ep)
}

// Build creates one link per port of center, named name.Link<i> with the
// parameters lc, in port order, and attaches link i to port i (side A the
// endpoint's, side B the center's).
func Build(e *env.Env, center Center, lc link.Config, name string) (*Star, error) {
	if e == nil {
		return nil, errors.New(name + ": star: no env")
	}
	if center == nil {
		return nil, errors.New(name + ": star: no center")
	}
	st := &Star{}
	for i := range center.Ports() {
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(lc).Build(fmt.Sprintf("%s.Link%d", name, i))
		if err != nil {
			return nil, err
		}
		toCenter, fromCenter := l.From(link.A), l.From(link.B)
		if err := center.Attach(i, toCenter, fromCenter); err != nil {
			return nil, fmt.Errorf("%s: star: port %d: %w", name, i, err)
		}
		st.Links = append(st.Links, l)
		st.Ports = append(st.Ports, Port{Send: toCenter, Recv: fromCenter, center: center})
	}
	return st, nil
}
