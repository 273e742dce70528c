package svm

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// Event is one protocol event, for goldens (Hooks.Event).
type Event struct {
	Time clock.Time
	Kind string
	// Node is the node it happened on; Page the page (-1 none); Peer the
	// other node (-1 none); Arg the kind's number (a fault's write bit, an
	// interval, a count).
	Node, Page, Peer, Arg int
}

// Event kinds.
const (
	EvFault      = "fault"
	EvFetch      = "fetch"
	EvFetched    = "fetched"
	EvServe      = "serve"
	EvTwin       = "twin"
	EvApply      = "apply"
	EvInterval   = "interval"
	EvInvalidate = "invalidate"
	EvGrant      = "grant"
	EvLock       = "lock"
)

func (pr *Process) event(p *cpu.Proc, kind string, pg, peer, arg int) {
	if h := pr.rt.hooks.Event; h != nil {
		h(Event{Time: p.Now(), Kind: kind, Node: pr.id, Page: pg, Peer: peer, Arg: arg})
	}
}
