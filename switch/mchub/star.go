package mchub

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
)

// StarBuilder builds a hub with one Memory Channel link per port, each
// leading to an adapter (mcadapter/, added later).
type StarBuilder struct {
	env  *env.Env
	hub  Builder
	link link.Config
}

// MakeStarBuilder returns a star of an MC1 hub and LinkConfig links.
func MakeStarBuilder() StarBuilder {
	return StarBuilder{hub: MC1(), link: LinkConfig()}
}

// WithEnv sets the simulation (required); it overrides the hub builder's.
func (b StarBuilder) WithEnv(e *env.Env) StarBuilder { b.env = e; return b }

// WithHub sets the hub parameters.
func (b StarBuilder) WithHub(h Builder) StarBuilder { b.hub = h; return b }

// WithLink sets the parameters of every link.
func (b StarBuilder) WithLink(c link.Config) StarBuilder { b.link = c; return b }

// Star is a hub and its links.
type Star struct {
	// Hub is the hub, named <name>.Hub.
	Hub *Hub
	// Links[i] connects adapter i (side A) to hub port i (side B).
	Links []*link.Link
	// Ports[i] is what adapter i uses.
	Ports []Port
}

// Port is an adapter's view of its link to the hub.
type Port struct {
	// Send is the direction the adapter sends write packets on
	// (CanSend/Send, or Tx); the hub receives from it.
	Send *link.Dir
	// Recv is the direction the hub sends on; the adapter pops flits from
	// Recv.Rx(0).
	Recv *link.Dir
	hub  *Hub
}

// Connect names the adapter ep as the sender of Send and the receiver of
// Recv, keeping the hub on the other side of both.
func (p Port) Connect(ep clock.Waker) {
	p.Send.Connect(ep, p.hub)
	p.Recv.Connect(p.hub, ep)
}

// Build creates the hub name.Hub and the links name.Link<i>.
func (b StarBuilder) Build(name string) (*Star, error) {
	if b.env == nil {
		return nil, errors.New(name + ": mc star: no env")
	}
	h, err := b.hub.WithEnv(b.env).Build(name + ".Hub")
	if err != nil {
		return nil, err
	}
	st := &Star{Hub: h}
	for i := range h.Ports() {
		l, err := link.MakeBuilder().WithEnv(b.env).WithConfig(b.link).Build(fmt.Sprintf("%s.Link%d", name, i))
		if err != nil {
			return nil, err
		}
		toHub, fromHub := l.From(link.A), l.From(link.B)
		if err := h.Attach(i, toHub, fromHub); err != nil {
			return nil, err
		}
		st.Links = append(st.Links, l)
		st.Ports = append(st.Ports, Port{Send: toHub, Recv: fromHub, hub: h})
	}
	return st, nil
}
