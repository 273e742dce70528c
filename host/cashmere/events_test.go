package cashmere_test

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cashmere"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Protocol events", func() {
	It("name each kind's values in a fixed order: processor, node, page, then the kind's own", func() {
		for _, x := range []struct {
			ev   cashmere.Event
			want []cashmere.Attr
		}{
			// A diff of 4 words from process 1 (node 1) to home node 0.
			{cashmere.Event{Kind: cashmere.EvDiff, Proc: 1, Node: 1, Page: 0, Peer: 0, Arg: 4},
				[]cashmere.Attr{{"proc", 1}, {"node", 1}, {"page", 0}, {"home", 0}, {"words", 4}}},
			// A request to break exclusive mode at node 2.
			{cashmere.Event{Kind: cashmere.EvFetchRequest, Proc: 3, Node: 1, Page: 7, Peer: 2, Arg: 1},
				[]cashmere.Attr{{"proc", 3}, {"node", 1}, {"page", 7}, {"to", 2}, {"break", 1}}},
			// A lock event has no page; the protocol's own lock is -1.
			{cashmere.Event{Kind: cashmere.EvLockEntry, Proc: 0, Node: 0, Page: -1, Peer: 1, Arg: -1},
				[]cashmere.Attr{{"proc", 0}, {"node", 0}, {"value", 1}, {"lock", -1}}},
			// A twin has neither Peer nor Arg.
			{cashmere.Event{Kind: cashmere.EvTwin, Proc: 2, Node: 1, Page: 3, Peer: -1, Arg: -1},
				[]cashmere.Attr{{"proc", 2}, {"node", 1}, {"page", 3}}},
			{cashmere.Event{Kind: cashmere.EvBarrierExit, Proc: 5, Node: 2, Page: -1, Peer: -1, Arg: 9},
				[]cashmere.Attr{{"proc", 5}, {"node", 2}, {"episode", 9}}},
		} {
			Expect(cmp.Diff(x.want, x.ev.Attrs())).To(BeEmpty(), string(x.ev.Kind))
		}
	})
})
