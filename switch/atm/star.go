package atm

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
)

// StarBuilder builds a switch with one ATM link per port, each leading to
// an endpoint (a host interface, added later).
type StarBuilder struct {
	env  *env.Env
	sw   Builder
	link link.Config
}

// MakeStarBuilder returns a star of an ASX100 switch and LinkConfig links.
func MakeStarBuilder() StarBuilder {
	return StarBuilder{sw: ASX100(), link: LinkConfig()}
}

// WithEnv sets the simulation (required); it overrides the switch
// builder's.
func (b StarBuilder) WithEnv(e *env.Env) StarBuilder { b.env = e; return b }

// WithSwitch sets the switch parameters.
func (b StarBuilder) WithSwitch(sw Builder) StarBuilder { b.sw = sw; return b }

// WithLink sets the parameters of every link.
func (b StarBuilder) WithLink(c link.Config) StarBuilder { b.link = c; return b }

// Star is a switch and its links.
type Star struct {
	// Switch is the switch, named <name>.Switch.
	Switch *Switch
	// Links[i] connects endpoint i (side A) to switch port i (side B).
	Links []*link.Link
	// Ports[i] is what endpoint i uses.
	Ports []Port
}

// Port is an endpoint's view of its link to the switch.
type Port struct {
	// Send is the direction the endpoint sends cells on (CanSend/Send, or
	// Tx); the switch receives from it.
	Send *link.Dir
	// Recv is the direction the switch sends on; the endpoint pops cells
	// from Recv.Rx(0).
	Recv *link.Dir
	sw   *Switch
}

// Connect names the endpoint ep as the sender of Send and the receiver of
// Recv, keeping the switch on the other side of both.
func (p Port) Connect(ep clock.Waker) {
	p.Send.Connect(ep, p.sw)
	p.Recv.Connect(p.sw, ep)
}

// Build creates the switch name.Switch and the links name.Link<i>.
func (b StarBuilder) Build(name string) (*Star, error) {
	if b.env == nil {
		return nil, errors.New(name + ": atm star: no env")
	}
	sw, err := b.sw.WithEnv(b.env).Build(name + ".Switch")
	if err != nil {
		return nil, err
	}
	st := &Star{Switch: sw}
	for i := range sw.Ports() {
		l, err := link.MakeBuilder().WithEnv(b.env).WithConfig(b.link).Build(fmt.Sprintf("%s.Link%d", name, i))
		if err != nil {
			return nil, err
		}
		toSw, fromSw := l.From(link.A), l.From(link.B)
		if err := sw.Attach(i, toSw, fromSw); err != nil {
			return nil, err
		}
		st.Links = append(st.Links, l)
		st.Ports = append(st.Ports, Port{Send: toSw, Recv: fromSw, sw: sw})
	}
	return st, nil
}
