package platform

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
)

// Every field value below carries a source comment on its line or on the
// line above it: a paper quote in guillemets (with its parameters.md ID), a
// derivation (derived:), an assumption with its reason (assumed:) or a
// value host/lcilib calibrated (calibrated:, its comment copied). Public
// datasheet values are `assumed:` with the datasheet named, since no paper
// states them. platform_test.go checks both rules.

// Clocks that are not a whole number of MHz.
var (
	// fsb66 is 66.67 MHz exactly (a 15 ns period): the P6 bus and EDO
	// memory of the PPro platform, «128 MB EDO RAM (66 MHz)» (MY-P5), and
	// the memory bus rtl/bus's PCIHostBridge calibration runs on.
	fsb66, _ = clock.Ratio(200_000_000, 3)
	// fsb133 is 133.33 MHz exactly (7.5 ns): the P3's «1 GB SDRAM (133
	// MHz)» (MY-P5).
	fsb133, _ = clock.Ratio(400_000_000, 3)
	// sableBus is 233 MHz / 7 = 33.29 MHz, the AlphaServer 2100's system
	// bus (see AlphaServer2100).
	sableBus, _ = clock.Ratio(233_000_000, 7)
)

// DEC3000Model300 is the DEC 3000 model 300 (Pelican) workstation the
// Telegraphos I HIB plugs into (telegraphos.txt section 2.1 and 3.2; TG-P1,
// TG-P2). The paper gives the machine and its bus, nothing else. The CPU
// and write-buffer values are the ones the Telegraphos calibration of
// section 3.2 was fitted with; verify/testbench/tgtb builds each node's
// processor, write buffer and TURBOchannel from this preset. The OS costs
// are Digital UNIX's on the AlphaServer's 21064A, in cycles; the interrupt
// is a kernel one (the page-access alarm of 2.2.6 goes «to the operating
// system»), with no signal to user level.
func DEC3000Model300() Host {
	return Host{
		// assumed: the registry key, after «DEC 3000 model 300» (TG-P3).
		Name: "dec3000-300",
		// «TurboChannel I/O bus of DEC Alpha 3000 model 300 (Pelican) workstations» (TG-P2)
		Model: "DEC 3000 model 300 (Pelican), Alpha 21064",
		// «two DEC 3000 model 300 workstations connected with the Telegraphos Network» (TG-P3)
		Source: "telegraphos.txt (TG-P1, TG-P2, TG-P10)",
		CPU: CPU{
			// assumed: 1: the model 300 is a one-processor desktop (DEC 3000
			// AXP model table: "Model 300 Pelican EV4 150 256 KB Desktop").
			Count: 1,
			// assumed: 150 MHz, the model 300's Alpha 21064 (EV4) in the same
			// table.
			Clock: clock.MHz(150),
			// assumed: 4 cycles, a load or store and the loop around it on
			// the dual-issue 21064 (the value the section 3.2 calibration ran
			// with).
			IssueCycles: 4,
			// derived: stores are posted: «Write requests do not stall the
			// processor» (TG-P10).
			PostedStores: true,
			// assumed: CPI 1; the paper counts no instructions, and the
			// access paths carry their own cycles.
			CPICycles: 1, CPIInstrs: 1,
			// assumed: the 21064's 4-entry write buffer.
			WriteBufferEntries: 4,
			// assumed: an uncached store to TURBOchannel space leaves as one
			// longword: 4 entries × 4 B on the 4-byte TURBOchannel are 4
			// one-beat stores (Host.WriteBufferBeats, the depth of the
			// processor's master channel in verify/testbench/tgtb).
			WriteCombineBytes: 4,
			// assumed: the Alpha architecture's LDL_L/STL_C (the ll/sc
			// Cashmere-2L uses on the 21064A, MC-P26).
			LoadLocked: true,
		},
		Caches: []memsys.CacheConfig{{
			// assumed: the 21064 on-chip D-cache: 8 KB, direct mapped,
			// write-through, 32-byte lines, 3-cycle loads (21064 data sheet).
			LineBytes: 32, CapacityBytes: 8 << 10, Ways: 1, HitCycles: 3,
			// «MC has page-level connection granularity, which is 8 Kbytes for
			// our Alpha cluster» (MC-P6): Alpha pages are 8 KB.
			PageBytes: 8 << 10,
			// assumed: 8-byte (quadword) loads and stores, a 4-deep queue
			// (the write buffer's 4 entries).
			PortWidthBytes: 8, PortDepth: 4,
			// assumed: 4, the 21064's 4-entry write buffer (CPU
			// WriteBufferEntries) between the chip and the bus.
			BusWriteEntries: 4,
			// assumed: false: a dirty line another master reads is written
			// back by a bus write of its own (memsys's default); the paper
			// gives no bus protocol.
			ImplicitWriteBack: false,
			// assumed: 1, blocking: the 21064 fills one line at a time (the
			// 21164's miss address file came later); the paper gives none.
			MaxMisses: 1,
		}, {
			// assumed: 32-byte lines and a direct-mapped B-cache (21064 data
			// sheet: the B-cache is direct mapped and write-back).
			LineBytes: 32, Ways: 1,
			// assumed: 256 KB, the model 300's B-cache (DEC 3000 AXP model
			// table: "Model 300 ... 256 KB").
			CapacityBytes: 256 << 10,
			// assumed: 5 cycles (33 ns), a board SRAM access with the tag
			// compare; the 21064's B-cache timing is programmable in CPU
			// cycles and the paper gives none.
			HitCycles: 5,
			// «which is 8 Kbytes for our Alpha cluster» (MC-P6), as above.
			PageBytes: 8 << 10,
			// assumed: the 21064's 128-bit B-cache data path, a 4-deep queue.
			PortWidthBytes: 16, PortDepth: 4,
			// assumed: 4, the 21064's 4-entry write buffer (CPU
			// WriteBufferEntries) between the chip and the bus.
			BusWriteEntries: 4,
			// assumed: false: a dirty line another master reads is written
			// back by a bus write of its own (memsys's default); the paper
			// gives no bus protocol.
			ImplicitWriteBack: false,
			// assumed: 1, blocking: the 21064 fills one line at a time (the
			// 21164's miss address file came later); the paper gives none.
			MaxMisses: 1,
		}},
		Memory: Memory{
			// assumed: 64 MB; the paper gives no size (the Pelican takes eight
			// 8 or 32 MB SIMMs, at most 256 MB).
			SizeBytes: 64 << 20,
			// assumed: the memory runs on the memory bus's clock.
			Clock: clock.MHz(25),
			// assumed: 240 ns, as hib/telegraphos's TelegraphosII assumes for
			// the DEC 3000's host memory ("host memory is about 240 ns").
			LatencyNs: 240,
			// assumed: a bus width per cycle once the page is open.
			BytesPerCycle: 8,
		},
		MemBus: bus.Config{
			// assumed: a name for reports.
			Name: "pelican-membus",
			// assumed: 25 MHz, CPU/6: the 21064's system clock is a
			// sub-multiple of the CPU clock; the paper gives none.
			Clock: clock.MHz(25),
			// assumed: 8 bytes, two 32-bit SIMMs interleaved (the Pelican's
			// memory is two-way interleaved 72-pin SIMMs).
			WidthBytes: 8,
			// assumed: one arbitration and one address cycle, no decode or
			// turnaround wait and no idle cycle (one CPU and one TC interface
			// share the bus).
			ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 0,
			// assumed: a transaction is at most a 32-byte line.
			MaxBurstBytes: 32,
			// assumed: the CPU and the TURBOchannel interface in turn.
			Arbitration: bus.RoundRobin,
		},
		// «TurboChannel I/O bus of DEC Alpha 3000 model 300 (Pelican)
		// workstations» (TG-P2); rtl/bus's preset (12.5 MHz assumed there).
		IOBus: bus.TurboChannel(),
		Bridge: bus.BridgeConfig{
			// assumed: a name for reports.
			Name: "pelican-tc",
			// derived: 0, not posted: the TURBOchannel is released «as soon as
			// the write request is latched by the HIB» (TG-P10), so a write
			// completes when the far side has it; the processor posts its
			// stores in its own write buffer (PostedStores).
			PostedWriteBytes: 0,
			// assumed: one cycle to cross the TURBOchannel interface and one
			// to answer from its buffer; the paper gives no figure.
			CrossCycles: 1, ReadHitCycles: 1,
			// assumed: 0: Telegraphos I makes no DMA reads of host memory
			// (its shared data is in its own memory, TG-P18).
			DelayedReadCycles: 0,
			// assumed: the 21064's 32-byte line, one line of read buffer.
			LineBytes: 32, ReadBufferBytes: 32,
			// assumed: no read-ahead: Telegraphos I keeps its shared data in
			// its own memory (TG-P18) and reads no host memory by DMA.
			PrefetchBytes: 0,
			// assumed: the interface re-arbitrates per line; nothing in the
			// paper says it holds the memory bus.
			HoldMemoryBus: false,
			// assumed: false, the delayed read: Telegraphos I reads no host
			// memory by DMA (TG-P18), so the read protocol is never used.
			IOReadWaitStates: false,
			// assumed: false: the CPU's PIO reads keep the retried read that
			// Telegraphos's fitted figures were measured with (a change would re-fit them).
			PIOReadWaitStates: false,
		},
		OS: cpu.OSCosts{
			// assumed: DEC OSF/1 on the 21064 costs the cycles Digital UNIX
			// 4.0D costs on the AlphaServer's 21064A (same core, same OS
			// family); the Telegraphos paper measures no OS path. See
			// AlphaServer2100 for each derivation.
			Mprotect: 12815,
			// assumed: as AlphaServer2100 (the fault's kernel entry, its
			// signal to the user-level handler, the return). No Telegraphos
			// program takes a fault: host/tglib counts the MMU faults of
			// 2.2.4 and drops the access, no handler runs.
			FaultEntry: 1320, SignalDelivery: 1321, FaultReturn: 1320,
			// assumed: as AlphaServer2100 (a system call).
			TrapEntry: 1320, TrapReturn: 1320,
			// assumed: a kernel interrupt's entry and return cost a system
			// call's (1320 cycles each, 8.8 µs at 150 MHz): PALcode enters
			// the kernel with the same frame for an interrupt, a fault and a
			// system call, the kernel saves the same registers, and all leave
			// by REI. The alarm's handler is the kernel's: «an interrupt is
			// sent to the operating system», which makes «a replication
			// decision» (2.2.6, TG-P15); the paper gives it no cost and no
			// user-level part, so no signal is delivered. AlphaServer2100's
			// 14990 is not this: Cashmere-2L's intra-node interrupt («the cost
			// rises to 142 μ s» from 72, section 3.3.4) reaches a protocol
			// that runs in the application's processes (its fault handler is
			// run by «a process», section 2.3), so it is the kernel's entry
			// plus a signal to user level. Order of magnitude: lmbench
			// (McVoy and Staelin, USENIX 1996; doc/lat_nullsys.tbl,
			// lat_signal.tbl) measured a null system call, entry and return,
			// at 9 to 17 µs on its "DEC Alpha" systems (2 × 8.8 = 17.6 µs
			// here) and a caught signal at 30 to 138 µs.
			InterruptEntry: 1320, InterruptReturn: 1320,
			// assumed: 0: the interrupt is taken at the next edge; the
			// paper's costs are the entry and return above.
			InterruptDelay: 0,
		},
	}
}

// PPro is the PPro platform of the LCI paper's Table I (MY-P2..P8). Shared
// values agree with host/lcilib.PPro (a spec compares them).
func PPro() Host {
	return Host{
		// assumed: the registry key, host/lcilib's preset name.
		Name: "ppro",
		// «Intel Pentium Pro, 200 MHz» (MY-P2)
		Model: "Intel Pentium Pro 200 MHz (LCI PPro platform)",
		// «Table I. PPro and P3 Platform Details» (MY-P1)
		Source: "lci-myrinet-cluster-protocols.txt Table I (MY-P2..P8)",
		CPU: CPU{
			// assumed: 1: Table I names one processor per node, and LCI lets
			// «at most one user process at a time» use the NI (MY-P44).
			Count: 1,
			// «Intel Pentium Pro, 200 MHz» (MY-P2)
			Clock: clock.MHz(200),
			// assumed: 1, cpu.Builder's default, as host/lcilib's hosts are
			// built: the library's code is in its Costs.
			IssueCycles: 1,
			// assumed: stores are posted (cpu.Builder's default; host/lcilib).
			PostedStores: true,
			// assumed: CPI 1; host/lcilib counts its code in cycles.
			CPICycles: 1, CPIInstrs: 1,
			// assumed: host/lcilib: "The processor's posted-write buffer
			// holds one such line" (one write-combining line).
			WriteBufferEntries: 1,
			// assumed: 32, a line (P6): host/lcilib's WCBytes, the
			// write-combining buffer.
			WriteCombineBytes: 32,
			// assumed: x86 has no load-locked/store-conditional (atomics are
			// LOCK-prefixed read-modify-writes).
			LoadLocked: false,
		},
		Caches: []memsys.CacheConfig{{
			// «8 KB I + 8 KB D» (MY-P3); assumed: 32-byte lines, 2 ways and
			// 3-cycle loads (Pentium Pro data sheet).
			LineBytes: 32, CapacityBytes: 8 << 10, Ways: 2, HitCycles: 3,
			// derived: 4 KB pages: «a page transfer spans at most one 4-Kbyte
			// page» (MY-P41).
			PageBytes: 4 << 10,
			// assumed: 8-byte accesses, a 4-deep queue.
			PortWidthBytes: 8, PortDepth: 4,
			// assumed: 4: a P6-family processor has at most four bus
			// transactions of its own outstanding on the P6 bus and holds the
			// lines it writes in its four L1 fill / write-combining buffers
			// (Pentium Pro and Pentium III data sheets, Intel's
			// write-combining guidelines); the paper gives none.
			BusWriteEntries: 4,
			// assumed: the P6 bus's implicit write-back: a snoop that hits a
			// modified line (HITM) makes the cache drive the line in the
			// reader's data phase and memory take it from there, with no
			// write-back transaction of its own (Pentium Pro family
			// developer's manual, bus protocol); the paper gives none.
			ImplicitWriteBack: true,
			// assumed: 4: the P6 family's L1 data cache is non-blocking with
			// four fill buffers, so four misses can be outstanding (Pentium Pro
			// and Pentium III data sheets, Intel's optimization manuals); the
			// paper gives none.
			MaxMisses: 4,
		}, {
			// assumed: 32 bytes, the P6 family's line (host/lcilib LineBytes).
			LineBytes: 32,
			// «256 KB I+D» (MY-P4)
			CapacityBytes: 256 << 10,
			// assumed: 4 ways (Pentium Pro data sheet: the on-package L2 is
			// 4-way set associative).
			Ways: 4,
			// assumed: 6 cycles, the on-package L2 at the core clock with its
			// tag lookup; the paper gives none.
			HitCycles: 6,
			// derived: 4 KB pages (MY-P41), as above.
			PageBytes: 4 << 10,
			// assumed: the 64-bit L2 data path, a 4-deep queue.
			PortWidthBytes: 8, PortDepth: 4,
			// assumed: 4: a P6-family processor has at most four bus
			// transactions of its own outstanding on the P6 bus and holds the
			// lines it writes in its four L1 fill / write-combining buffers
			// (Pentium Pro and Pentium III data sheets, Intel's
			// write-combining guidelines); the paper gives none.
			BusWriteEntries: 4,
			// assumed: the P6 bus's implicit write-back: a snoop that hits a
			// modified line (HITM) makes the cache drive the line in the
			// reader's data phase and memory take it from there, with no
			// write-back transaction of its own (Pentium Pro family
			// developer's manual, bus protocol); the paper gives none.
			ImplicitWriteBack: true,
			// assumed: 4: the P6 family's L1 data cache is non-blocking with
			// four fill buffers, so four misses can be outstanding (Pentium Pro
			// and Pentium III data sheets, Intel's optimization manuals); the
			// paper gives none.
			MaxMisses: 4,
		}},
		Memory: Memory{
			// «128 MB EDO RAM (66 MHz)» (MY-P5)
			SizeBytes: 128 << 20,
			// «128 MB EDO RAM (66 MHz)» (MY-P5): 66.67 MHz.
			Clock: fsb66,
			// «66 MHz EDO ram with a measured latency of 236 ns» (MY-P6)
			LatencyNs: 236,
			// assumed: a bus width (8 bytes) per cycle once the page is open.
			BytesPerCycle: 8,
		},
		MemBus: bus.Config{
			// assumed: a name for reports.
			Name: "p6-fsb66",
			// derived: the bus runs on the memory's «(66 MHz)» (MY-P5).
			Clock: fsb66,
			// assumed: the P6 bus's 64-bit data path (Pentium Pro data sheet).
			WidthBytes: 8,
			// assumed: one arbitration and one address cycle, no decode,
			// turnaround or idle cycle: the memory bus rtl/bus's
			// PCIHostBridge calibration was fitted on (its specs'
			// memBusConfig), so that calibration holds here.
			ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 0,
			// assumed: a transaction is one 32-byte line (as that bus).
			MaxBurstBytes: 32,
			// assumed: the CPU and the PCI bridge in turn (the P6 bus rotates
			// priority among symmetric agents).
			Arbitration: bus.RoundRobin,
		},
		// «32 bit, 33 MHz PCI 127.2 Mbyte/s» (MY-P7)
		IOBus: bus.PCI32(),
		// calibrated: rtl/bus's PCIHostBridge, whose crossing and
		// delayed-read cycles are fitted so that a first DMA read of host
		// memory waits what host/lcilib's PPro model folds into memory
		// latency (236 ns + 60 cycles, "fitted to the PPro I-sdma gap g =
		// 11.1 µs (Table III)"); ReadHitCycles 2 is host/lcilib's
		// BridgeWriteCycles; its other values are assumed there.
		// DelayedReadCycles is re-fitted to the same figure on the wired
		// host (lciHostBridge).
		Bridge: lciHostBridge(),
		OS: cpu.OSCosts{
			// assumed: 4000 cycles (20 µs on the PPro): host/lcilib's
			// Costs.Signal, the kernel delivering a network interrupt as a
			// Unix signal to the process.
			SignalDelivery: 4000,
			// assumed: 0: host/lcilib folds the interrupt's dispatch and
			// return into Costs.Signal; the paper measures neither.
			InterruptEntry: 0, InterruptReturn: 0,
			// assumed: 0: the interrupt is taken at the next edge
			// (host/lcilib folds the whole delivery into Costs.Signal).
			InterruptDelay: 0,
			// assumed: 0: LCI makes no system call and takes no page fault
			// on its paths (section 3: «No system calls would have to be
			// added to the critical path»).
			TrapEntry: 0, TrapReturn: 0, FaultEntry: 0, FaultReturn: 0, Mprotect: 0,
		},
	}
}

// P3 is the P3 platform of the LCI paper's Table I (MY-P2..P8). Shared
// values agree with host/lcilib.P3 (a spec compares them).
func P3() Host {
	return Host{
		// assumed: the registry key, host/lcilib's preset name.
		Name: "p3",
		// «Intel Pentium-III, 1 GHz» (MY-P2)
		Model: "Intel Pentium III 1 GHz (LCI P3 platform)",
		// «Table I. PPro and P3 Platform Details» (MY-P1)
		Source: "lci-myrinet-cluster-protocols.txt Table I (MY-P2..P8)",
		CPU: CPU{
			// assumed: 1: Table I names one processor per node, and LCI lets
			// «at most one user process at a time» use the NI (MY-P44).
			Count: 1,
			// «Intel Pentium-III, 1 GHz» (MY-P2)
			Clock: clock.MHz(1000),
			// assumed: 1, cpu.Builder's default, as host/lcilib's hosts are
			// built.
			IssueCycles: 1,
			// assumed: stores are posted (cpu.Builder's default; host/lcilib).
			PostedStores: true,
			// assumed: CPI 1; host/lcilib counts its code in cycles.
			CPICycles: 1, CPIInstrs: 1,
			// assumed: host/lcilib: "The processor's posted-write buffer
			// holds one such line".
			WriteBufferEntries: 1,
			// assumed: 32, a line (P6): host/lcilib's WCBytes.
			WriteCombineBytes: 32,
			// assumed: x86 has no load-locked/store-conditional.
			LoadLocked: false,
		},
		Caches: []memsys.CacheConfig{{
			// «16 KB I + 16 KB D» (MY-P3); assumed: 32-byte lines, 4 ways and
			// 3-cycle loads (Pentium III data sheet).
			LineBytes: 32, CapacityBytes: 16 << 10, Ways: 4, HitCycles: 3,
			// derived: 4 KB pages (MY-P41: «a page transfer spans at most one
			// 4-Kbyte page»).
			PageBytes: 4 << 10,
			// assumed: 8-byte accesses, a 4-deep queue.
			PortWidthBytes: 8, PortDepth: 4,
			// assumed: 4: a P6-family processor has at most four bus
			// transactions of its own outstanding on the P6 bus and holds the
			// lines it writes in its four L1 fill / write-combining buffers
			// (Pentium Pro and Pentium III data sheets, Intel's
			// write-combining guidelines); the paper gives none.
			BusWriteEntries: 4,
			// assumed: the P6 bus's implicit write-back: a snoop that hits a
			// modified line (HITM) makes the cache drive the line in the
			// reader's data phase and memory take it from there, with no
			// write-back transaction of its own (Pentium Pro family
			// developer's manual, bus protocol); the paper gives none.
			ImplicitWriteBack: true,
			// assumed: 4: the P6 family's L1 data cache is non-blocking with
			// four fill buffers, so four misses can be outstanding (Pentium Pro
			// and Pentium III data sheets, Intel's optimization manuals); the
			// paper gives none.
			MaxMisses: 4,
		}, {
			// assumed: 32 bytes, the P6 family's line (host/lcilib LineBytes).
			LineBytes: 32,
			// «256 KB I+D» (MY-P4)
			CapacityBytes: 256 << 10,
			// assumed: 8 ways (Pentium III data sheet: the on-die 256 KB L2
			// is 8-way set associative).
			Ways: 8,
			// assumed: 7 cycles, the on-die L2 at the core clock; the paper
			// gives none.
			HitCycles: 7,
			// derived: 4 KB pages (MY-P41), as above.
			PageBytes: 4 << 10,
			// assumed: the on-die L2's 256-bit path seen as 8-byte accesses,
			// a 4-deep queue.
			PortWidthBytes: 8, PortDepth: 4,
			// assumed: 4: a P6-family processor has at most four bus
			// transactions of its own outstanding on the P6 bus and holds the
			// lines it writes in its four L1 fill / write-combining buffers
			// (Pentium Pro and Pentium III data sheets, Intel's
			// write-combining guidelines); the paper gives none.
			BusWriteEntries: 4,
			// assumed: the P6 bus's implicit write-back: a snoop that hits a
			// modified line (HITM) makes the cache drive the line in the
			// reader's data phase and memory take it from there, with no
			// write-back transaction of its own (Pentium Pro family
			// developer's manual, bus protocol); the paper gives none.
			ImplicitWriteBack: true,
			// assumed: 4: the P6 family's L1 data cache is non-blocking with
			// four fill buffers, so four misses can be outstanding (Pentium Pro
			// and Pentium III data sheets, Intel's optimization manuals); the
			// paper gives none.
			MaxMisses: 4,
		}},
		Memory: Memory{
			// «1 GB SDRAM (133 MHz)» (MY-P5)
			SizeBytes: 1 << 30,
			// «1 GB SDRAM (133 MHz)» (MY-P5): 133.33 MHz.
			Clock: fsb133,
			// «133 MHz SDRAM with a measured latency of 113 ns» (MY-P6)
			LatencyNs: 113,
			// assumed: a bus width (8 bytes) per cycle once the row is open.
			BytesPerCycle: 8,
		},
		MemBus: bus.Config{
			// assumed: a name for reports.
			Name: "p6-fsb133",
			// derived: the bus runs on the memory's «(133 MHz)» (MY-P5).
			Clock: fsb133,
			// assumed: the P6 bus's 64-bit data path (Pentium III data sheet).
			WidthBytes: 8,
			// assumed: the PPro's cycle counts (the same P6 bus protocol).
			ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 0,
			// assumed: a transaction is one 32-byte line.
			MaxBurstBytes: 32,
			// assumed: the CPU and the PCI bridge in turn.
			Arbitration: bus.RoundRobin,
		},
		// «64 bit, 33 MHz PCI 254.3 Mbyte/s» (MY-P7)
		IOBus: bus.PCI64(),
		// calibrated: rtl/bus's PCIHostBridge, fitted on the PPro (see PPro);
		// host/lcilib: "the P3's 33 MHz PCI keeps the same count".
		// DelayedReadCycles is the PPro's re-fitted count (lciHostBridge).
		Bridge: lciHostBridge(),
		OS: cpu.OSCosts{
			// assumed: 4000 cycles: host/lcilib's Costs.Signal, the same in
			// cycles on both platforms (4 µs at 1 GHz).
			SignalDelivery: 4000,
			// assumed: 0: host/lcilib folds the interrupt's dispatch and
			// return into Costs.Signal.
			InterruptEntry: 0, InterruptReturn: 0,
			// assumed: 0: the interrupt is taken at the next edge
			// (host/lcilib folds the whole delivery into Costs.Signal).
			InterruptDelay: 0,
			// assumed: 0: LCI makes no system call and takes no page fault on
			// its paths.
			TrapEntry: 0, TrapReturn: 0, FaultEntry: 0, FaultReturn: 0, Mprotect: 0,
		},
	}
}

// lciHostBridge is PCIHostBridge as the LCI hosts are wired: host memory
// on the memory bus behind it (verify/testbench/lcitb), with the
// delayed-read logic re-fitted there.
func lciHostBridge() bus.BridgeConfig {
	c := bus.PCIHostBridge()
	// calibrated: 52 PCI cycles, fitted to the PPro I-sdma gap g = 11.1
	// µs (Table III), the figure host/lcilib's folded BridgeReadCycles
	// (60) was fitted to, once the memory, the memory bus and the cache
	// time their own parts (lcitb's memory gets the measured latency less
	// the bus phases and the cache lookup): the model's g is 10.64 µs
	// (-4%); more cycles bring g closer but push the F&A latency (+8.4%
	// at 52) past its 10%. PCIHostBridge's 16 reproduced the folded model
	// cycle for cycle for 256-byte DMA reads only; the LogP benchmark's
	// 16-byte reads took 68 folded cycles for one line, which the bridge
	// fetches in about 30. The P3 keeps the count, as host/lcilib's P3
	// did ("the P3's 33 MHz PCI keeps the same count").
	c.DelayedReadCycles = 52
	return c
}

// AlphaServer2100 is the DEC AlphaServer 2100 4/233 node of the Memory
// Channel cluster Cashmere-2L ran on (cashmere-2l-memory-channel.txt
// sections 2.1 and 3; MC-P1, P2, P6, P13..P19).
func AlphaServer2100() Host {
	return Host{
		// assumed: the registry key.
		Name: "alphaserver2100",
		// «eight DEC AlphaServer 2100 4/233 computers» (MC-P13)
		Model: "DEC AlphaServer 2100 4/233, four Alpha 21064A",
		// «Digital UNIX 4.0D with TruCluster v. 1.5 (Memory Channel) extensions» (MC-P19)
		Source: "cashmere-2l-memory-channel.txt sections 2.1, 3 (MC-P2, MC-P13..P19)",
		CPU: CPU{
			// «four 21064A processors operating at 233 MHz» (MC-P14)
			Count: 4,
			// «four 21064A processors operating at 233 MHz» (MC-P14)
			Clock: clock.MHz(233),
			// assumed: 1 cycle per access; the protocol code is costed in
			// instructions and steps.
			IssueCycles: 1,
			// «Writes into transmit regions bypass all caches (although they are
			// buffered in the Alpha's write buffer)» (MC-P4): stores are posted.
			PostedStores: true,
			// assumed: CPI 1; the paper counts no instructions.
			CPICycles: 1, CPIInstrs: 1,
			// assumed: the 21064A's write buffer: 4 entries of a 32-byte block
			// each, stores to one block merged (21064A data sheet).
			WriteBufferEntries: 4, WriteCombineBytes: 32,
			// «The protocol implements very efficient local locks with ll/sc.»
			LoadLocked: true,
		},
		Caches: []memsys.CacheConfig{{
			// «a 16K instruction cache and 16K data cache» (MC-P15); assumed:
			// 32-byte lines, direct mapped, 3-cycle loads (21064A data sheet).
			LineBytes: 32, CapacityBytes: 16 << 10, Ways: 1, HitCycles: 3,
			// «MC has page-level connection granularity, which is 8 Kbytes for
			// our Alpha cluster» (MC-P6)
			PageBytes: 8 << 10,
			// assumed: 8-byte accesses, a 4-deep queue (the write buffer).
			PortWidthBytes: 8, PortDepth: 4,
			// assumed: 4, the 21064A's 4-entry write buffer (CPU
			// WriteBufferEntries).
			BusWriteEntries: 4,
			// assumed: false: a dirty line another master reads is written
			// back by a bus write of its own (memsys's default); the paper
			// gives no bus protocol.
			ImplicitWriteBack: false,
			// assumed: 1, blocking: the 21064A fills one line at a time (the
			// 21164's miss address file came later); the paper gives none.
			MaxMisses: 1,
		}, {
			// «A cache line is 64 bytes.» (MC-P17)
			LineBytes: 64,
			// «The secondary cache size is 1 Mbyte.» (MC-P16)
			CapacityBytes: 1 << 20,
			// assumed: direct mapped, as every 21064 B-cache (21064A data
			// sheet).
			Ways: 1,
			// assumed: 6 cycles (26 ns), a board SRAM access with the tag
			// compare; the paper gives none.
			HitCycles: 6,
			// «which is 8 Kbytes for our Alpha cluster» (MC-P6)
			PageBytes: 8 << 10,
			// assumed: the 21064A's 128-bit B-cache data path, a 4-deep queue.
			PortWidthBytes: 16, PortDepth: 4,
			// assumed: 4, the 21064A's 4-entry write buffer (CPU
			// WriteBufferEntries).
			BusWriteEntries: 4,
			// assumed: false: a dirty line another master reads is written
			// back by a bus write of its own (memsys's default); the paper
			// gives no bus protocol.
			ImplicitWriteBack: false,
			// assumed: 1, blocking: the 21064A fills one line at a time (the
			// 21164's miss address file came later); the paper gives none.
			MaxMisses: 1,
		}},
		Memory: Memory{
			// «four 21064A processors operating at 233 MHz and with 256MB of
			// shared memory» (MC-P14)
			SizeBytes: 256 << 20,
			// assumed: the memory runs on the system bus's clock.
			Clock: sableBus,
			// assumed: 300 ns, ten system-bus cycles for arbitration, address,
			// the DRAM access and a 64-byte line on a 128-bit bus; the paper
			// gives no memory latency.
			LatencyNs: 300,
			// assumed: a bus width (16 bytes) per cycle.
			BytesPerCycle: 16,
		},
		MemBus: bus.Config{
			// assumed: a name for reports.
			Name: "sable-sysbus",
			// assumed: 233 MHz / 7 = 33.29 MHz: the 21064A's system clock is a
			// sub-multiple of the CPU clock, and most 21064 boards run it near
			// 33 MHz (Alpha HOWTO); the paper gives none.
			Clock: sableBus,
			// assumed: a 128-bit data path, as the AlphaServer 4000/4100
			// system bus ("128-bit Data Bus" in their service manual) that
			// succeeded it.
			WidthBytes: 16,
			// assumed: one arbitration cycle, hidden behind the previous
			// transaction (four CPUs and the bridge share the bus).
			ArbCycles: 1, HiddenArb: true,
			// assumed: one address cycle, one decode cycle (snoop of the
			// other CPUs' caches), no turnaround, one idle cycle.
			AddrCycles: 1, DecodeCycles: 1, ReadTurnaround: 0, IdleCycles: 1,
			// derived: a transaction is one line: «A cache line is 64
			// bytes.» (MC-P17)
			MaxBurstBytes: 64,
			// assumed: the four CPUs and the bridge in turn.
			Arbitration: bus.RoundRobin,
		},
		// «the limiting factor being the 32-bit AlphaServer 2100 PCI bus» (MC-P2)
		IOBus: bus.PCI32(),
		Bridge: bus.BridgeConfig{
			// assumed: the AlphaServer 2100's PCI bridge is called T2 (the
			// AlphaServer 2100 I/O subsystem paper, Digital Technical
			// Journal); a name for reports.
			Name: "t2",
			// assumed: two 64-byte lines of posted writes; that paper lists
			// "data buffer management" and "disconnected transaction"
			// among the T2's techniques but no sizes.
			PostedWriteBytes: 128,
			// assumed: 4 PCI cycles to cross (sync to the system bus and
			// arbitrate), 2 to answer a prefetched read.
			CrossCycles: 4, ReadHitCycles: 2,
			// assumed: 4 PCI cycles of delayed-read logic (the T2's
			// "disconnected transaction": a DMA read is retried until its
			// data is there); no figure in that paper's excerpts.
			DelayedReadCycles: 4,
			// derived: «A cache line is 64 bytes.» (MC-P17)
			LineBytes: 64,
			// assumed: two lines of read buffer, one line read ahead.
			ReadBufferBytes: 128, PrefetchBytes: 64,
			// assumed: the bridge re-arbitrates per line (the system bus is
			// shared by four CPUs).
			HoldMemoryBus: false,
			// derived: false: PCI reads that must wait are delayed
			// transactions (PCI 2.1 section 3.3.3.3), not wait states.
			IOReadWaitStates: false,
			// derived: false: PCI 2.1 delayed transactions (section 3.3.3.3).
			PIOReadWaitStates: false,
		},
		OS: cpu.OSCosts{
			// derived: «Memory protection operations on the AlphaServers cost
			// about 55 μ s» (section 3.1) × 233 MHz = 12815 cycles.
			Mprotect: 12815,
			// derived: «Page faults on already-resident pages cost 72 μ s» =
			// 16776 cycles; assumed: that includes the handler's mprotect
			// (12815), leaving 3961 for entry, signal and return, split
			// evenly.
			FaultEntry: 1320, SignalDelivery: 1321, FaultReturn: 1320,
			// assumed: a system call's entry and exit cost the fault's entry
			// and return (the same PALcode path); the paper measures none.
			TrapEntry: 1320, TrapReturn: 1320,
			// derived: «a shootdown of one processor requires only 72 μ s. If
			// intra-node interrupts are used instead of polling, the cost
			// rises to 142 μ s» (section 3.3.4): an interrupt costs 70 µs more
			// than a poll, 16310 cycles at 233 MHz; assumed: the return costs
			// what a fault's return costs (1320), the entry the rest (14990).
			InterruptEntry: 14990, InterruptReturn: 1320,
			// assumed: 0: the interrupt is taken at the next edge;
			// section 3.3.4's 70 µs is the entry and return above.
			InterruptDelay: 0,
		},
	}
}

// DEC560ST is a SHRIMP node: a DEC 560ST PC with a 60 MHz Pentium, the
// Xpress memory bus the NI's snooping board sits on and the EISA bus its
// main board sits on (shrimp-design-choices.txt section 2; SH-P6..P10).
func DEC560ST() Host {
	return Host{
		// assumed: the registry key.
		Name: "dec560st",
		// «Three important aspects of the DEC 560ST PCs used to construct the SHRIMP system» (SH-P8)
		Model: "DEC 560ST PC, 60 MHz Pentium, Xpress memory bus, EISA (SHRIMP node)",
		// «it connects to both the Xpress memory bus [28] and the EISA I/O bus [6]» (SH-P6)
		Source: "shrimp-design-choices.txt section 2 (SH-P6..P10, SH-P20..P22)",
		CPU: CPU{
			// assumed: 1: «the 60 MHz Pentium processor» of each of the
			// «sixteen PC nodes» (SH-P1, SH-P8).
			Count: 1,
			// «the 60 MHz Pentium processor has a two-level cache hierarchy that snoops the memory bus» (SH-P8)
			Clock: clock.MHz(60),
			// assumed: 1 cycle per access; the paper counts no instructions.
			IssueCycles: 1,
			// assumed: stores are posted in the Pentium's write buffers.
			PostedStores: true,
			// assumed: CPI 1.
			CPICycles: 1, CPIInstrs: 1,
			// assumed: the Pentium's two write buffers (one per pipe), each a
			// 64-bit store (Pentium data sheet); no write combining.
			WriteBufferEntries: 2, WriteCombineBytes: 8,
			// assumed: x86 has no load-locked/store-conditional.
			LoadLocked: false,
		},
		Caches: []memsys.CacheConfig{{
			// «the 60 MHz Pentium processor has a two-level cache hierarchy»
			// (SH-P8); assumed: its on-chip D-cache of 8 KB, 2 ways, 32-byte
			// lines, 1-cycle loads (Pentium data sheet).
			LineBytes: 32, CapacityBytes: 8 << 10, Ways: 2, HitCycles: 1,
			// derived: 4 KB pages: «Transfers of up to a page (4K bytes)» (SH-P13).
			PageBytes: 4 << 10,
			// assumed: 8-byte accesses, a 2-deep queue (the write buffers).
			PortWidthBytes: 8, PortDepth: 2,
			// assumed: 2, the Pentium's two write buffers (CPU
			// WriteBufferEntries).
			BusWriteEntries: 2,
			// assumed: true: the paper gives no bus protocol; the
			// Pentium's is an inquire cycle: a master's read that hits a
			// modified line is answered with HITM# and the line written
			// back within that read, which carries the written-back data
			// (the memory controller takes it from the bus). memsys's
			// alternative, a write-back transaction after the read, lets
			// the read return memory's stale bytes and the EISA bridge
			// fetch again behind the write-back: about 0.7 µs on every
			// deliberate update of a dirty buffer that no Pentium bus
			// spends. Not charged: the write-back's line beats beyond the
			// read's own (the read takes the time of its own length).
			ImplicitWriteBack: true,
			// assumed: 1, blocking: the Pentium's caches serve one miss at a
			// time; the paper gives none.
			MaxMisses: 1,
		}, {
			// assumed: the board cache of the «two-level cache hierarchy»
			// (SH-P8): 256 KB, direct mapped, 32-byte lines, the usual
			// Pentium board cache of 1993; the paper gives no size.
			LineBytes: 32, CapacityBytes: 256 << 10, Ways: 1,
			// assumed: 3 cycles, the first word of a 3-2-2-2 board-cache burst.
			HitCycles: 3,
			// derived: 4 KB pages (SH-P13), as above.
			PageBytes: 4 << 10,
			// assumed: the 64-bit Pentium data bus, a 2-deep queue.
			PortWidthBytes: 8, PortDepth: 2,
			// assumed: 2, the Pentium's two write buffers (CPU
			// WriteBufferEntries).
			BusWriteEntries: 2,
			// assumed: true: the paper gives no bus protocol; the
			// Pentium's is an inquire cycle: a master's read that hits a
			// modified line is answered with HITM# and the line written
			// back within that read, which carries the written-back data
			// (the memory controller takes it from the bus). memsys's
			// alternative, a write-back transaction after the read, lets
			// the read return memory's stale bytes and the EISA bridge
			// fetch again behind the write-back: about 0.7 µs on every
			// deliberate update of a dirty buffer that no Pentium bus
			// spends. Not charged: the write-back's line beats beyond the
			// read's own (the read takes the time of its own length).
			ImplicitWriteBack: true,
			// assumed: 1, blocking: the Pentium's caches serve one miss at a
			// time; the paper gives none.
			MaxMisses: 1,
		}},
		Memory: Memory{
			// assumed: 32 MB; the paper gives no size.
			SizeBytes: 32 << 20,
			// assumed: the memory runs on the memory bus's clock.
			Clock: clock.MHz(30),
			// assumed: 240 ns, about the PPro platform's measured 236 ns (MY-P6)
			// for the page-mode DRAM of a 1993 PC; the paper gives none.
			LatencyNs: 240,
			// assumed: a bus width (8 bytes) per cycle in a burst.
			BytesPerCycle: 8,
		},
		MemBus: bus.Config{
			// assumed: a name for reports.
			Name: "xpress",
			// assumed: 30 MHz, half the 60 MHz processor clock: the Xpress bus
			// is asynchronous to the processor (its specification, [28], is
			// the «Asynchronous Modular Architecture Memory Bus»); the paper
			// gives no clock.
			Clock: clock.MHz(30),
			// derived: 8 bytes: «The Outgoing FIFO is actually 8 bytes wide in
			// order to keep up with the memory bus burst bandwidth» (SH-P20).
			WidthBytes: 8,
			// assumed: one arbitration cycle, not hidden: «the memory bus does
			// not cycle-share between the CPU and any other main memory
			// master» (SH-P10), so a master is granted only when the bus is
			// free; one address cycle, no decode or turnaround wait, one idle.
			ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 1,
			// assumed: a CPU transaction is at most a 32-byte line; the EISA
			// bridge holds the bus across lines (Bridge.HoldMemoryBus: the
			// bus re-grants it its next line without arbitration,
			// Bus.HoldSplits).
			MaxBurstBytes: 32,
			// assumed: the CPU and the EISA bridge in turn.
			Arbitration: bus.RoundRobin,
		},
		// «it connects to both the Xpress memory bus [28] and the EISA I/O
		// bus [6]» (SH-P6); rtl/bus's EISA preset (EISA Specification 3.12).
		IOBus: bus.EISA(),
		// rtl/bus's XpressEISABridge, whose values carry their sources
		// there: «the memory bus does not cycle-share between the CPU and
		// any other main memory master» (SH-P10), so an I/O burst holds the
		// memory bus; no delayed reads and no read-ahead (assumed there).
		Bridge: bus.XpressEISABridge(),
		OS: cpu.OSCosts{
			// derived: «On our system, the lower bound is roughly 1K bytes»
			// (SH-P22), «the memory write bandwidth multiplied by the time it
			// takes the CPU to recognize the threshold interrupt»: 1024 B /
			// (8 B × 30 MHz = 240 MB/s, MemBus) = 4.27 µs = 256 cycles at 60
			// MHz, the recognition, during which the program (the writer)
			// runs on.
			InterruptDelay: 256,
			// assumed: the dispatch (saving state, finding the device) once
			// the interrupt is recognised: a quarter of the recognition; the
			// paper gives none.
			InterruptEntry: 64,
			// assumed: the return costs a quarter of the entry (no device to
			// identify); the paper gives none.
			InterruptReturn: 64,
			// assumed: the AlphaServer's measured microseconds (Digital UNIX:
			// mprotect 55 µs, a fault's entry, signal and return 17 µs) at
			// 60 MHz: 3300 and 340 + 340 + 340 cycles. They are the only
			// fault and mprotect measurements in the five papers, and a 1993
			// 60 MHz Pentium is no faster in wall time.
			Mprotect: 3300, FaultEntry: 340, SignalDelivery: 340, FaultReturn: 340,
			// assumed: a system call's entry and exit cost a fault's (340
			// cycles each); the paper measures the kernel-level send path only
			// as application slowdown (Table 2).
			TrapEntry: 340, TrapReturn: 340,
		},
	}
}

// DECstation5000 is the DECstation 5000/200 of the FORE ATM remote-memory
// prototype, with its 25 MHz TURBOchannel (atm-remote-memory-access.txt
// sections 2.1..2.2; AT-P2..P5, AT-P12, AT-P13, AT-P18).
func DECstation5000() Host {
	return Host{
		// assumed: the registry key.
		Name: "decstation5000-200",
		// «The DECstations contain 25 MHz MIPS R3000 processors rated at 19.5 SPECint.» (AT-P2)
		Model: "DECstation 5000/200, 25 MHz MIPS R3000, 25 MHz TURBOchannel",
		// «integrated into an otherwise standard DEC Ultrix 4.2A kernel» (AT-P12)
		Source: "atm-remote-memory-access.txt sections 2.1, 2.2 (AT-P2..P5, AT-P12, AT-P13, AT-P18)",
		CPU: CPU{
			// assumed: 1: the 5000/200 is a one-processor workstation.
			Count: 1,
			// «The DECstations contain 25 MHz MIPS R3000 processors» (AT-P2)
			Clock: clock.MHz(25),
			// assumed: 1 cycle per access: the R3000 issues one instruction a
			// cycle.
			IssueCycles: 1,
			// assumed: stores are posted in the write buffer of the
			// write-through cache.
			PostedStores: true,
			// assumed: CPI 1, so Table 1's instruction counts are
			// cycles.
			CPICycles: 1, CPIInstrs: 1,
			// assumed: a four-stage write buffer of one word each, as the
			// DECstation 3100's R2020 (Digital Technical Journal: "four-stage
			// write buffer" there); the paper gives none.
			WriteBufferEntries: 4, WriteCombineBytes: 4,
			// assumed: MIPS I has no load-linked/store-conditional (the
			// paper's compare-and-swap is an emulated instruction).
			LoadLocked: false,
		},
		Caches: []memsys.CacheConfig{{
			// assumed: one level, the R3000's external 64 KB direct-mapped
			// write-through D-cache with 4-byte lines, a 1-cycle hit (as the
			// DECstation 3100's, whose caches are documented with a "4-byte
			// line size"); the paper gives none.
			LineBytes: 4, CapacityBytes: 64 << 10, Ways: 1, HitCycles: 1,
			// assumed: the R3000's 4 KB pages.
			PageBytes: 4 << 10,
			// assumed: word accesses, a 4-deep queue (the write buffer).
			PortWidthBytes: 4, PortDepth: 4,
			// assumed: 4, the four-stage write buffer (CPU
			// WriteBufferEntries).
			BusWriteEntries: 4,
			// assumed: false: a dirty line another master reads is written
			// back by a bus write of its own (memsys's default); the paper
			// gives no bus protocol.
			ImplicitWriteBack: false,
			// assumed: 1, blocking: the R3000 stalls on every cache miss; the
			// paper gives none.
			MaxMisses: 1,
		}},
		Memory: Memory{
			// assumed: 32 MB; the paper gives no size.
			SizeBytes: 32 << 20,
			// assumed: the memory runs on the memory bus's clock.
			Clock: clock.MHz(25),
			// «assuming 200 ns access time» (AT-P18)
			LatencyNs: 200,
			// assumed: a 32-bit word per cycle.
			BytesPerCycle: 4,
		},
		MemBus: bus.Config{
			// assumed: a name for reports.
			Name: "3max-membus",
			// derived: 25 MHz, the I/O bus's «14 (40 nanosecond) I/O bus read
			// cycles» (AT-P5); assumed: memory shares that clock.
			Clock: clock.MHz(25),
			// assumed: 32-bit memory words (each with ECC check bits).
			WidthBytes: 4,
			// assumed: one arbitration and one address cycle, no waits or idle
			// cycles.
			ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 0,
			// assumed: refills of up to 16 words.
			MaxBurstBytes: 64,
			// assumed: the CPU and the TURBOchannel in turn.
			Arbitration: bus.RoundRobin,
		},
		// derived: 25 MHz: «14 (40 nanosecond) I/O bus read cycles» (AT-P5);
		// rtl/bus's TurboChannel25 preset, whose phases and burst are
		// assumed there as the DEC 3000/300's TURBOchannel.
		IOBus: bus.TurboChannel25(),
		Bridge: bus.BridgeConfig{
			// assumed: a name for reports.
			Name: "3max-tc",
			// assumed: 0: the processor's write buffer posts its stores; the
			// FORE FIFOs' «Processor accesses to these FIFOs are performed a
			// word at a time and run with no wait states» (AT-P4).
			PostedWriteBytes: 0,
			// derived: 0: a cell of 14 words reads in «14 (40 nanosecond) I/O
			// bus read cycles» (AT-P5), which leaves no time for a crossing.
			CrossCycles: 0, ReadHitCycles: 0,
			// derived: 0: the interface «does not have DMA capabilities»
			// (AT-P3), so no DMA read is ever delayed.
			DelayedReadCycles: 0,
			// assumed: the D-cache's one-word line. derived: 64 bytes of read
			// path, a whole 56-byte cell: a cell reads in «14 (40 nanosecond)
			// I/O bus read cycles» (AT-P5), one word a cycle, so the path
			// never holds a word back for want of room (4 bytes made each
			// word wait for its predecessor's credit: 2.16 µs a cell load,
			// 1.64 µs with 64, 1.12 µs once host/memsys forwarded an
			// uncached read's words as they arrive, 255622c).
			LineBytes: 4, ReadBufferBytes: 64,
			// assumed: no read-ahead: the FORE interface «does not have DMA
			// capabilities» (AT-P3), and PIO reads are never prefetched.
			PrefetchBytes: 0,
			// assumed: false; with no DMA nothing holds the memory bus.
			HoldMemoryBus: false,
			// assumed: false, the delayed read: the TCA-100 has no DMA
			// (AT-P3), so no I/O master reads memory through this bridge.
			IOReadWaitStates: false,
			// derived: true: the R3000 stalls on an uncached load until the
			// TURBOchannel returns its data (no retry on either bus); the TCA-100 has
			// no DMA (AT-P3), so nothing on the TC needs the memory bus meanwhile.
			PIOReadWaitStates: true,
		},
		OS: cpu.OSCosts{
			// derived: 0: Table 1's crossing («the cost of crossing protection
			// boundaries is only 25 instructions», section 2.3) is host/rma's
			// counted code steps (13 on entry, 12 on exit), whose loads and
			// stores go through the cache (nearly 50 %, AT-P14).
			TrapEntry: 0, TrapReturn: 0,
			// derived: 0: Table 1's «MIPS Interrupt Dispatcher (on Destination)» (73) is
			// host/rma's counted code step, its return included (assumed).
			InterruptEntry: 0, InterruptReturn: 0,
			// assumed: 0: the interrupt is taken at the next edge: Table 1 counts
			// the dispatcher's instructions, above.
			InterruptDelay: 0,
			// assumed: 0: the ATM stack takes no page faults and calls no
			// mprotect on any measured path.
			FaultEntry: 0, SignalDelivery: 0, FaultReturn: 0, Mprotect: 0,
		},
	}
}
