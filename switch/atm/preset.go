package atm

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
)

// LinkClock is the clock of a 140 Mb/s ATM link moving one byte per cycle:
// 140 Mb/s / 8 bits = 17.5 MHz. «connect our DECstation 5000s to a 140
// Mb/s ATM network» (AT-P1); a 53-byte cell then takes 53 cycles = 3.03 µs
// (AT-P11).
func LinkClock() clock.Clock {
	c, err := clock.Ratio(35_000_000, 2)
	if err != nil {
		panic(err) // a constant frequency
	}
	return c
}

// LinkConfig returns a 140 Mb/s ATM link without flow control: a cell that
// finds the receive buffer full is dropped and counted.
func LinkConfig() link.Config {
	return link.Config{
		// «We use a FORE ASX-100 switch with 4 ports, each running at 140
		// Mb/s.» (AT-P8): one byte per cycle of 17.5 MHz.
		Clock:         LinkClock(),
		BytesPerCycle: 1,
		// assumed: 0. A few metres of cable delay a cell by tens of
		// nanoseconds, less than one 57 ns byte time.
		DelayCycles: 0,
		VCs:         1,
		// ATM links have no link-level flow control; «ATM networks» may
		// lose cells (rtl/link NoFlowControl).
		FlowControl: link.NoFlowControl,
		// assumed: 4 cells. The receive register of a link end; the switch
		// and the interfaces take one cell per cycle and cells arrive at
		// most one per 53 cycles, so it fills only when a receiver stops.
		BufferFlits: 4,
		// assumed: 2 cells, for senders that queue cells on the link's own
		// transmitter (the switch drives its links directly).
		TxDepth: 2,
	}
}

// ASX100 returns a builder preset for the FORE ASX-100 (add WithEnv):
//
//   - 4 ports of 140 Mb/s, «We use a FORE ASX-100 switch with 4 ports,
//     each running at 140 Mb/s.» (AT-P8); the switch runs on the link
//     clock (LinkClock), one byte time per cycle.
//   - latency 69 cycles (3.94 µs). calibrated: «We measured a latency of
//     about 7 $\mu$ s for each cell going through the switch.» (AT-P9). We
//     read it as the time the switch adds to a cell's trip compared with a
//     direct cable (the paper's other figures are for «two hosts connected
//     directly without a switch»). Store-and-forward, the switch adds the
//     latency, one cycle for the output queue register and a second
//     53-cycle serialisation: 69 + 1 + 53 = 123 cycles = 7.03 µs.
//   - output queues of 256 cells. assumed: the paper gives no switch
//     buffer size; 256 cells (13.6 KB, 775 µs of line time) is of the order
//     of the FORE interface's own receive FIFO, «deep enough to store
//     nearly 300 cells» (AT-P6), so a burst a host can absorb also fits in
//     a switch output queue, and only sustained overload of one output
//     loses cells.
func ASX100() Builder {
	return MakeBuilder().WithClock(LinkClock()).WithPorts(4).WithLatency(69).WithQueueDepth(256)
}
