package demo

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/demotb"
)

// Keys implements scenario.Keyed: every key's unit, range and the origin
// of its default (the comments of Params). Validate enforces these ranges
// (scenario.CheckKeys) in this order, each width before the depth whose
// memory bound it enters; the rules on several keys (a burst within the
// FIFO, a store within the bus, the transfers within the SRAM region)
// follow in Validate. The memory bounds count what one entry costs in the
// model (see fifoSlotBytes and the others) against scenario.MemoryBudget.
func (p *Params) Keys() []scenario.KeySpec {
	r, _ := p.resolve() // an invalid clock leaves its delays unbounded here; Validate refuses it first
	n, l := p.NI, p.Link
	delay := func(key, unit string, clk clock.Clock, lo float64) scenario.KeySpec {
		return scenario.Key(key, unit).AtLeast(lo).Cycles(clk, scenario.MaxDelay)
	}
	ram := func(key string) scenario.KeySpec {
		return scenario.Key(key, "bytes").Limit(sramRegion, "the NI SRAM region the demo moves")
	}
	return []scenario.KeySpec{
		scenario.Key("host.clock", "frequency").From("«Intel Pentium Pro, 200 MHz» (MY-P2)"),
		delay("host.issue_cycles", "processor cycles per uncached access", r.host, 1).From("assumed: 4"),
		scenario.Key("host.write_buffer", "posted stores").AtLeast(1).Budget(4*reqBytes,
			fmt.Sprintf("request of %d B in each of 2 masters' request and response FIFOs", reqBytes)).From("assumed: 4"),
		scenario.Key("host.mem_clock", "frequency").From("«128 MB EDO RAM (66 MHz)» (MY-P5)"),
		scenario.Key("host.mem_latency_ns", "ns").AtLeast(0).Limit(float64(scenario.MaxDelay/clock.Nanosecond), "1 s, the longest delay").
			From("«a measured latency of 236 ns» (MY-P6)"),
		// A memory cannot move more than all of itself in one cycle.
		scenario.Key("host.mem_bytes_per_cycle", "bytes").AtLeast(1).Limit(demotb.HostMemSize, "the host memory, 16 MiB").
			From("assumed: a 64-bit EDO data path"),
		scenario.Key("bus.preset", "I/O bus").OneOf("pci32", "pci64", "turbochannel", "turbochannel25", "eisa").
			From("«32 bit, 33 MHz PCI» (MY-P7)"),
		scenario.Key("bus.max_burst", "bytes (0: the preset's)").Limit(demotb.HostMemSize, "the host memory, 16 MiB"),
		scenario.Key("ni.clock", "frequency").From("«LANai 4.1, 33 MHz» (MY-P11)"),
		delay("ni.sram_latency", "NI cycles", r.ni, 0).From("assumed: single-cycle SRAM"),
		scenario.Key("ni.sram_bytes_per_cycle", "bytes").AtLeast(1).Limit(demotb.SRAMSize, "the NI SRAM, 1 MiB").
			From("assumed: 32-bit SRAM"),
		delay("ni.dma_setup", "NI cycles per descriptor", r.ni, 0).From("assumed"),
		// A burst longer than the whole transfer region carries nothing more.
		ram("ni.dma_burst").AtLeast(1).Also("at most fifo_depth x fifo_width").From("assumed"),
		scenario.Key("ni.dma_buffer", "bytes").Budget(3, "byte of staging buffer in each of 3 DMA engines").
			Also("at least dma_burst").From("assumed"),
		scenario.Key("ni.dma_queue", "descriptors").AtLeast(2).Budget(3*descBytes,
			fmt.Sprintf("descriptor of %d B in each of 3 DMA engines", descBytes)).From("assumed"),
		scenario.Key("ni.fifo_width", "bytes").Range(1, 512).From("assumed"),
		scenario.Key("ni.fifo_depth", "entries").AtLeast(1).Budget(2*(fifoSlotBytes+int64(max(n.FifoWidth, 0))),
			fmt.Sprintf("entry of %d+%d B in each of 2 FIFOs", fifoSlotBytes, n.FifoWidth)).From("assumed"),
		scenario.Key("link.clock", "frequency").From("1 byte at 160 MHz: «1.28 Gbit/s» (MY-P9/P10)"),
		// A link FIFO is bytes_per_cycle wide, at most 4096 bits.
		scenario.Key("link.bytes_per_cycle", "bytes").AtLeast(1).Limit(512, "a FIFO is at most 4096 bits").From("MY-P9/P10"),
		delay("link.delay_cycles", "link cycles", r.link, 0).From("assumed: 100 ns, one «switch delay» (MY-P18)"),
		ram("link.flit_bytes").AtLeast(1),
		scenario.Key("link.buffer_flits", "flits per VC").AtLeast(1).Budget(2*(linkFlitOverhead+int64(max(l.FlitBytes, 0))),
			fmt.Sprintf("flit of %d+%d B in each direction of the link", linkFlitOverhead, l.FlitBytes)).From("assumed"),
		delay("link.credit_delay", "link cycles", r.link, 1).From("assumed"),
		ram("link.packet_bytes").Also("at least flit_bytes"),
		scenario.Key("link.corrupt_prob", "probability of a bit error per flit").Range(0, 1),
		ram("workload.pio_bytes").AtLeast(0).Also("a multiple of store_bytes; pio_bytes + dma_bytes within the region"),
		scenario.Key("workload.store_bytes", "bytes, a power of two").AtLeast(1).Also(fmt.Sprintf("at most the bus width (%d)", r.bus.WidthBytes)),
		ram("workload.dma_bytes").AtLeast(1),
	}
}
