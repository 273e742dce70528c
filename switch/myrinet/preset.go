package myrinet

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
)

// Platform is a Myrinet generation's link and switch timing.
type Platform struct {
	Name string
	// Link is the configuration of every link (STOP/GO, one byte per
	// cycle of the link clock).
	Link link.Config
	// FlitBytes is the unit the model forwards (cut-through happens at
	// this granularity).
	FlitBytes int
	// FallThrough is the switch's fall-through delay in link cycles.
	FallThrough int
	// HostLink is the configuration of the links between the NIs and
	// their switches (Link by default, the zero value).
	HostLink link.Config
}

// HostLinkConfig returns the NI-to-switch link configuration.
func (p Platform) HostLinkConfig() link.Config {
	if p.HostLink.Clock.Valid() {
		return p.HostLink
	}
	return p.Link
}

// FallThroughCycles is calibrated so that, with 4-byte flits and 4-cycle
// cables, a hop takes 16 cycles of the 160 MHz PPro link, 100 ns: «The
// switch delay is approximately 100 ns» (MY-P18). See HopCycles: 4
// (serialise the head flit) + 4 (cable) + 8 = 16.
const FallThroughCycles = 8

// HopCycles is the time a head needs per switch on an idle path: its flit
// is serialised (FlitBytes / BytesPerCycle cycles) and crosses the cable
// (DelayCycles), after which it is visible at the next switch, which
// forwards it after the fall-through.
func (p Platform) HopCycles() int {
	return (p.FlitBytes+p.Link.BytesPerCycle-1)/p.Link.BytesPerCycle + p.Link.DelayCycles + p.FallThrough
}

func stopGo(clk clock.Clock) link.Config {
	return link.Config{
		Clock: clk, BytesPerCycle: 1, FlowControl: link.StopGo, VCs: 1, TxDepth: 1,
		// assumed: 4 cycles (25 ns at 160 MHz) of cable, about 5 m.
		DelayCycles: 4,
		// assumed: a slack buffer of 64 bytes with STOP above 32 and GO
		// below 16; MinSlack(4) = 32 + 2*(4+1) + 8 = 50 <= 64, so it
		// never overflows.
		SlackBytes: 64, StopAt: 32, GoAt: 16,
	}
}

// PPro is the PPro platform's Myrinet: «Myrinet, SAN cabling 1.28 Gbit/s
// full duplex» (MY-P9/P10): 160 MB/s, one byte per cycle at 160 MHz.
func PPro() Platform {
	return Platform{Name: "myrinet-ppro", Link: stopGo(clock.MHz(160)), FlitBytes: 4, FallThrough: FallThroughCycles}
}

// P3 is the P3 platform's Myrinet-2000: «very close to the Myrinet2000
// link bandwidth (250 Mbyte/s)» (MY-P35, the parameter table's reading of
// the link rate): one byte per cycle at 250 MHz. The same fall-through in
// cycles (4-cycle cables are then 16 ns): assumed, the paper gives only
// that «the total network delay is comparable» to the PPro system (MY-P21).
func P3() Platform {
	p := Platform{Name: "myrinet-p3", Link: stopGo(clock.MHz(250)), FlitBytes: 4, FallThrough: FallThroughCycles}
	// derived: «the fiber cabling used between the NIs and switch causes
	// some additional latency due to (de)serialization at fiber/SAN
	// crossings. As a result, the total network delay is comparable to
	// the delay on the PPro system» (MY-P21), which is «at most 1 µs»
	// over 10 hops (MY-P19). Three P3 hops take 3 x 64 ns, so the two
	// NI-switch crossings carry the remaining ~0.8 µs: 100 cycles (400 ns)
	// each on top of the cable. The transceivers buffer what a STOP
	// takes to reach the sender: 512 bytes of slack (MinSlack 250).
	p.HostLink = p.Link
	p.HostLink.DelayCycles += 100
	p.HostLink.SlackBytes = 512
	return p
}
