package atm

import (
	"errors"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/star"
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

// Star is a switch and its links (switch/star).
type Star struct {
	// Switch is the switch, named <name>.Switch.
	Switch *Switch
	// Links[i] connects endpoint i (side A) to switch port i (side B);
	// Ports[i] is what endpoint i uses.
	*star.Star
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
	st, err := star.Build(b.env, sw, b.link, name)
	if err != nil {
		return nil, err
	}
	return &Star{Switch: sw, Star: st}, nil
}
