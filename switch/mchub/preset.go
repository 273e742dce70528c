package mchub

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
)

// LinkClock is the clock of a first-generation Memory Channel link and hub:
// 33.33 MHz. assumed: the paper gives no link clock; the adapters are PCI
// cards («The network interfaces to a industry-standard PCI bus.», MC-P1),
// and a link clocked like their bus keeps the model's clocks few.
func LinkClock() clock.Clock {
	c, err := clock.Ratio(100_000_000, 3)
	if err != nil {
		panic(err) // a constant frequency
	}
	return c
}

// LinkConfig returns a first-generation Memory Channel link: lossless, with
// credit flow control on one VC.
func LinkConfig() link.Config {
	return link.Config{
		Clock: LinkClock(),
		// assumed: 4 bytes per cycle = 133 MB/s. The paper gives only the
		// 29 MB/s a node sustains, «the limiting factor being the 32-bit
		// AlphaServer 2100 PCI bus» (MC-P2); a link as wide and fast as
		// that bus never limits the adapter.
		BytesPerCycle: 4,
		// assumed: 1 cycle (30 ns), a few metres of cable.
		DelayCycles: 1,
		VCs:         1,
		// The hub is lossless and back-pressures its senders (MC-P9's
		// ordering guarantee leaves no room for loss); credits model that.
		FlowControl: link.Credits,
		// assumed: 4 flits of receive buffer per link end. A flit takes 8
		// to 10 cycles to send and its credit is usable 2 cycles after the
		// receiver pops it, so 2 would already cover the credit round trip
		// of a receiver that keeps up; 4 leaves slack for one that does
		// not.
		BufferFlits: 4,
		// assumed: 2 cycles from a freed slot to a usable credit, one wire
		// delay plus a register.
		CreditDelay: 2,
		// assumed: 2 flits, for adapters that queue on the link's own
		// transmitter (the hub drives its links directly).
		TxDepth: 2,
	}
}

// MC1 returns a builder preset for the first-generation Memory Channel hub
// (add WithEnv). Only the port count and the bus have a source; the hub's
// share of the latency is small next to the adapters':
//
//   - a bus: «as the Memory Channel is a bus interconnect» (MC-P5);
//     every write goes to every adapter, which filter by their receive
//     tables (package doc).
//   - 8 ports: «a cluster of eight 4-processor AlphaServer nodes connected
//     by the Memory Channel» (MC-P12).
//   - the link clock (LinkClock).
//   - forwarding delay 8 cycles (240 ns). assumed: the paper gives only
//     the end-to-end figure, «Unicast and multicast process-to-process
//     writes have a latency of 5.2 μ s on our system»
//     (cashmere-2l-memory-channel.txt section 2.1). With these links a 32-byte write crosses link, hub and
//     link in about 32 cycles (1 µs); the rest of the 5.2 μs belongs to the
//     two PCI adapters and the stores and DMA behind them (mcadapter/,
//     later), to be calibrated there.
//   - output queues of 32 flits (1 KB). assumed: not in the paper; four
//     of the largest writes of this format, enough for the hub to keep
//     every output busy while an adapter drains.
//   - 32-byte flits with an 8-byte header on the head flit. assumed: the
//     packet format is not in the paper; 32 bytes is half a 64-byte cache
//     line («A cache line is 64 bytes.», MC-P17), the header one 64-bit
//     address-and-command word. The adapter decides how many bytes of
//     stores one packet collects.
//   - a hub bus of 4 bytes per cycle: a flit of s wire bytes holds the
//     bus ceil(s/4) cycles. assumed: the paper
//     calls the Memory Channel «a bus interconnect» (MC-P5) and gives no
//     hub width; a bus as wide and fast as one link (LinkConfig) carries
//     one adapter's full link rate, and a wider one would let the hub move
//     several links' worth of packets at once, a switch again.
func MC1() Builder {
	return MakeBuilder().WithClock(LinkClock()).WithPorts(8).WithDelay(8).WithQueueDepth(32).
		WithFormat(Format{FlitBytes: 32, HeaderBytes: 8}).WithBusBytesPerCycle(4)
}
