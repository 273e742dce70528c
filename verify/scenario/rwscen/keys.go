package rwscen

import (
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/remotewritetb"
)

// costKeys are the firmware's handler costs (firmware/remotewrite Costs),
// with the instruction counts their defaults assume.
var costKeys = []struct{ key, origin string }{
	{"dispatch", "assumed: 8 instructions"}, {"desc", "assumed: 16 instructions"},
	{"dma_start", "assumed: 12 instructions"}, {"dma_done", "assumed: 10 instructions"},
	{"transmit", "assumed: 12 instructions"}, {"send_done", "assumed: 6 instructions"},
	{"receive", "assumed: 12 instructions"}, {"count", "assumed: 6 instructions"},
	{"boot", "assumed: 80 instructions"},
}

// Keys implements scenario.Keyed: every key's unit, range and the origin
// of its default; Validate enforces the ranges (scenario.CheckKeys) in
// this order, so a bound may use a key above it (size by max_len).
func (p *Params) Keys() []scenario.KeySpec {
	f := p.Firmware
	ks := []scenario.KeySpec{
		// Structural: the hosts of the 64-node Myrinet grid the
		// testbench builds (remotewritetb.ClusterConfig).
		scenario.Key("nodes", "hosts").Range(2, 64),
		scenario.Key("src", "node").Range(0, float64(max(p.Nodes, 2)-1)),
		scenario.Key("dst", "node (not src)").Range(0, float64(max(p.Nodes, 2)-1)),
		// The slots live in the card's SRAM (the layout check): bound
		// them first, their size overflowed and let 2^63 through.
		scenario.Key("firmware.slots", "descriptor slots").Range(1, 1<<16),
		// Structural: the payload room lies in the LANai's SRAM, at most
		// 1 MiB (firmware/remotewrite Config.Validate, then its layout
		// check against the card's SRAM).
		scenario.Key("firmware.max_len", "bytes").Range(4, 1<<20),
		scenario.Key("size", "bytes").AtLeast(1).UpTo("firmware.max_len", float64(max(f.MaxLen, 1))),
		scenario.Key("firmware.counter", "host address, 4-byte aligned").
			Range(0, float64(min(remotewritetb.HostMemBytes-4, remotewritetb.SrcBase-4))),
	}
	clk := remotewritetb.DefaultClusterConfig().Platform.NI.Clock
	for _, c := range costKeys {
		ks = append(ks, scenario.Key("firmware.costs."+c.key, "LANai cycles").AtLeast(0).Cycles(clk, scenario.MaxDelay).From(c.origin))
	}
	return ks
}
