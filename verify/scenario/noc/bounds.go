package noc

import (
	"fmt"
	"unsafe"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/scenario"
)

// flitBytes is what one buffered flit costs besides its payload. derived:
// an rtl/link Flit (its fixed fields and slice headers) and the 8-byte
// push time of the FIFO slot it waits in.
var flitBytes = int64(unsafe.Sizeof(link.Flit{})) + int64(unsafe.Sizeof(clock.Time(0)))

// routerInputs returns how many router input ports the wormhole network
// of p has: at most 5 per router of a k x k mesh (four neighbours and the
// terminal), and on a graph one per channel end and one per terminal.
func (p *Params) routerInputs() int64 {
	if p.Topology == "graph" && p.graph != nil {
		return 2*int64(len(p.graph.Channels)) + int64(len(p.graph.Terminals))
	}
	return 5 * int64(p.K) * int64(p.K)
}

// packetSpec is packet_size's KeySpec: a source holds the packet it
// injects, so the largest packet of the distribution costs flitBytes +
// flit_bytes per flit at every terminal (checkPacketBudget enforces it on
// the distribution's largest size).
func (p *Params) packetSpec() scenario.KeySpec {
	perFlit := flitBytes + int64(p.FlitBytes)
	nodes := int64(p.nodes())
	return scenario.Key("packet_size", "flits, or a size:weight,... distribution (bound: its largest size)").
		AtLeast(1).From(booksim).
		Budget(nodes*perFlit, fmt.Sprintf("flit of %d+%d B of a packet at each of %d terminals", flitBytes, p.FlitBytes, nodes))
}

// checkPacketBudget checks the largest packet of sizes against
// packetSpec.
func (p *Params) checkPacketBudget(sizes traffic.Sizes) error {
	return p.packetSpec().CheckInt(int64(sizes.Max()))
}
