package cashtb

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// wireInterrupts turns the poll-flag pages into interrupting pages
// (Config.Interrupts; host/cashmere/interrupt.go): each protocol node's
// poll page is mapped for receive with the adapter's receive interrupt
// (mcadapter.RxEntry.Interrupt, an assumed page attribute), and every
// adapter's receive interrupt is handed to the runtime as a request for
// the protocol node whose poll page it is. The poll page is the one word
// every request writes last (the Memory Channel's order puts the
// request's bin before it), so the interrupt comes with the request in
// memory.
func (b *Bench) wireInterrupts() error {
	cl := b.Cluster
	// owner[i] lists node i's interrupting pages and their protocol
	// nodes, scanned in order (no map on the timing path).
	type pollPage struct{ gpage, node int }
	owner := make([][]pollPage, len(cl.Nodes))
	for r, reg := range b.poll {
		for i, rx := range reg.Rx {
			if rx == 0 {
				continue
			}
			if err := cl.Nodes[i].Adapter.MapRxInterrupt(reg.GlobalPage, rx); err != nil {
				return fmt.Errorf("cashtb: poll region of node %d: %w", r, err)
			}
			owner[i] = append(owner[i], pollPage{reg.GlobalPage, r})
		}
	}
	rt := b.Runtime
	for i, n := range cl.Nodes {
		pages := owner[i]
		n.Adapter.OnReceiveInterrupt(func(now clock.Time, gpage int) {
			for _, pp := range pages {
				if pp.gpage == gpage {
					rt.RequestInterrupt(pp.node, now)
				}
			}
		})
	}
	return nil
}
