package noc

import (
	"fmt"
	"unsafe"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/traffic"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/noctb"
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

// checkSizes bounds the router buffers, the packets and the hotspot list
// of a network (after the lower bounds, the router's own Validate and the
// graph are checked). A buffered flit costs flitBytes + flit_bytes in
// every input buffer of the network; a source holds the packet it injects,
// so the largest packet costs that much at every terminal.
func (p *Params) checkSizes(sizes traffic.Sizes) error {
	perFlit := flitBytes + int64(p.FlitBytes)
	var errs []error
	if p.wormhole() {
		r, in := p.Router, p.routerInputs()
		if r.BufferPolicy == "shared" {
			errs = append(errs, scenario.CheckBudget("router.buf_size", int64(r.BufSize), in*perFlit,
				fmt.Sprintf("flit of %d+%d B in each of %d router inputs", flitBytes, p.FlitBytes, in)))
		} else {
			errs = append(errs, scenario.CheckBudget("router.vc_buf_size", int64(r.VCBufSize), in*int64(r.NumVCs)*perFlit,
				fmt.Sprintf("flit of %d+%d B in each of %d VCs of %d router inputs", flitBytes, p.FlitBytes, r.NumVCs, in)))
		}
	}
	nodes := int64(p.nodes())
	errs = append(errs,
		scenario.CheckBudget("packet_size", int64(sizes.Max()), nodes*perFlit,
			fmt.Sprintf("flit of %d+%d B of a packet at each of %d terminals", flitBytes, p.FlitBytes, nodes)),
		scenario.CheckLimit("hotspots", int64(len(p.Hotspots)), nodes, "one entry per terminal"))
	return scenario.FirstError(errs...)
}

// checkSizes bounds the ATM switch's output queues: a queued cell is a
// link Flit (flitBytes) carrying a 53-byte cell, at each of ports outputs.
func (p *ATMParams) checkSizes() error {
	per := int64(p.Ports) * (flitBytes + noctb.CellBytes)
	return scenario.FirstError(
		scenario.CheckBudget("queue_depth", int64(p.QueueDepth), per,
			fmt.Sprintf("cell of %d+%d B at each of %d outputs", flitBytes, noctb.CellBytes, p.Ports)),
		scenario.CheckLimit("hotspots", int64(len(p.Hotspots)), int64(p.Ports), "one entry per host"))
}

// checkSizes bounds the Memory Channel hub's output queues: a queued flit
// is a link Flit (flitBytes) with the MC1 format's flit payload, at each
// of ports outputs.
func (p *MCParams) checkSizes() error {
	fb := int64(noctb.MCFlitBytes())
	return scenario.CheckBudget("queue_depth", int64(p.QueueDepth), int64(p.Ports)*(flitBytes+fb),
		fmt.Sprintf("flit of %d+%d B at each of %d outputs", flitBytes, fb, p.Ports))
}
