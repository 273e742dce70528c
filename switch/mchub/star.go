package mchub

import (
	"errors"

	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/star"
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

// Star is a hub and its links (switch/star).
type Star struct {
	// Hub is the hub, named <name>.Hub.
	Hub *Hub
	// Links[i] connects adapter i (side A) to hub port i (side B);
	// Ports[i] is what adapter i uses.
	*star.Star
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
	st, err := star.Build(b.env, h, b.link, name)
	if err != nil {
		return nil, err
	}
	return &Star{Hub: h, Star: st}, nil
}
