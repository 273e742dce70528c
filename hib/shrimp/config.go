// Package shrimp models the SHRIMP network interface (shrimp-design-choices.txt
// section 2.1 and 4.5; parameters SH-P*): a memory-bus board that snoops
// every main-memory write (automatic update, AU) and an EISA board with the
// Outgoing Page Table, the packetiser and combiner, the Outgoing FIFO, the
// user-level DMA engine (deliberate update, DU), the Intel network interface
// chip on the Paragon backplane, the Incoming Page Table and the incoming
// DMA. It is hardware only: it imports rtl/*, verify/{trace,check} and
// waves, never the host software (host/vmmc drives it).
package shrimp

import (
	"fmt"
	"math/bits"

	"github.com/nisim/nisim/rtl/clock"
)

// Config is every hardware parameter of one SHRIMP network interface
// (issue 14 design section 2). Each field's source is in SHRIMP's body.
type Config struct {
	// PageBytes is the page size of the OPT and IPT and the DU limit.
	PageBytes int
	// MemoryBytes is the host memory the OPT and IPT cover: one entry per
	// page (Entries).
	MemoryBytes uint64
	// CoreClock clocks the snoop, OPT, packetiser, Outgoing FIFO, arbiter
	// and NIC port; EISAClock the EISA target, DU engine and incoming DMA;
	// LinkClock the NIC's TX/RX FIFOs and the link.
	CoreClock, EISAClock, LinkClock clock.Clock
	// AU enables automatic update (snooped writes become packets); SnoopDMA
	// also forwards writes by the memory bus's DMA master; Combine enables
	// combining (the OPT entry's bit still decides per page).
	AU, SnoopDMA, Combine bool
	// OPTCycles is the OPT lookup time in core cycles.
	OPTCycles int
	// CombineCycles is the combining timer in core cycles: an open combined
	// packet is flushed this long after its last store.
	CombineCycles int
	// SubpageBytes is the default combining sub-page boundary (a page's OPT
	// entry may set its own); PageBytes turns it off.
	SubpageBytes int
	// FIFOBytes is the Outgoing FIFO's capacity, FIFOWidthBytes its word
	// width, FIFOThreshold the occupancy (bytes) above which it interrupts.
	FIFOBytes, FIFOWidthBytes, FIFOThreshold int
	// DUMaxBytes is the largest DU transfer; DUQueue the depth of the DU
	// request queue (0: none); DUSetupCycles the DU engine's setup in EISA
	// cycles; DMABurstBytes the largest EISA burst of the DU and incoming
	// DMA; StatusWaitCycles the EISA wait states of the UDMA status read.
	DUMaxBytes, DUQueue, DUSetupCycles, DMABurstBytes, StatusWaitCycles int
	// HeaderBytes and RouteBytes are the packet header and route on the
	// wire; MaxPacketBytes the most data one packet carries; NICPortBytes
	// the NIC port's width per core cycle; NICTxBytes and NICRxBytes the
	// NIC's FIFOs; NICDelayCycles its pipelined delay per side in link
	// cycles (a word may leave NICDelayCycles after it entered).
	HeaderBytes, RouteBytes, MaxPacketBytes, NICPortBytes, NICTxBytes, NICRxBytes, NICDelayCycles int
	// InSetupCycles is the incoming DMA's per-packet setup in EISA cycles;
	// DMAStageBytes its staging (a burst starts only when fully staged, R3);
	// NotifyQueue the notification records the NI holds.
	InSetupCycles, DMAStageBytes, NotifyQueue int
}

// SHRIMP returns the prototype's network interface (shrimp-design-choices.txt
// sections 2.1, 4.5; issue 14 design section 2).
func SHRIMP() Config {
	return Config{
		// «Transfers of up to a page (4K bytes) are specified with two
		// user-level memory references to proxy memory» (SH-P13).
		PageBytes: 4096,
		// derived: the DEC 560ST's 32 MB (platform.DEC560ST, SH-P8): the OPT
		// «maintains a one-to-one mapping between physical memory page
		// numbers and OPT entries» (SH-P14), 32 MB / 4 KB = 8192 entries.
		MemoryBytes: 32 << 20,
		// assumed: 30 MHz = the Xpress clock, so the snoop takes one beat per
		// bus cycle; the paper gives no NI clock.
		CoreClock: clock.MHz(30),
		// derived: rtl/bus's EISA preset, 8.33 MHz (EISA Specification 3.12):
		// the EISA board's target and DMA run on the bus they serve.
		EISAClock: clock.Hz(8_333_333),
		// derived: topology.Paragon's 100 MHz, 2-B flits = 200 MB/s, «a
		// maximum link bandwidth of 200 Mbytes/second» (SH-P3).
		LinkClock: clock.MHz(100),
		// «creates a packet for every individual store, and launches it
		// immediately» (SH-P16): AU is the prototype's mechanism.
		AU: true,
		// assumed: DMA writes (incoming data) are not forwarded: forwarding
		// would re-send data when a page is both imported-to and bound; the
		// paper says «The memory-bus board simply snoops all main-memory
		// writes» (SH-P7) without naming DMA. A knob.
		SnoopDMA: false,
		// «a specified sub-page boundary is crossed, or a timer expires»
		// (SH-P17): combining exists; the OPT entry's bit decides per page.
		Combine: true,
		// assumed: one core cycle, an SRAM read.
		OPTCycles: 1,
		// assumed: 32 core cycles (1.07 µs) = 8 × the 133-ns gap between a
		// copy loop's write-through stores; the paper gives no value.
		CombineCycles: 32,
		// assumed: the paper gives no sub-page size; 4096 = off.
		SubpageBytes: 4096,
		// «we decided to use 4K-byte-deep, 1-byte-wide FIFO chips» (SH-P19),
		// «The Outgoing FIFO is actually 8 bytes wide» (SH-P20): 4096 × 8 B
		// = 32 KB, «so its total capacity is 32K bytes».
		FIFOBytes: 32 << 10, FIFOWidthBytes: 8,
		// assumed: half the FIFO; «generates an interrupt when the amount of
		// data in the FIFO exceeds a programmable threshold» (SH-P21).
		FIFOThreshold: 16 << 10,
		// «Transfers of up to a page (4K bytes)» (SH-P13).
		DUMaxBytes: 4096,
		// assumed: the production NI has no queue; «we implemented a 2-deep
		// queue on the SHRIMP network interface» (SH-P24) is the experiment's
		// value (du_queue 2).
		DUQueue: 0,
		// calibrated: 1 EISA cycle, fitted to «SHRIMP has a deliberate
		// update latency of 6 µs» (section 4.1; a 4-byte send assumed):
		// shrimp-report gives 6.34 µs (+5.7%) at 0 and at 1 (the setup is
		// hidden behind the UDMA status read, which holds the EISA), 6.46 µs
		// at 2 and 6.60 µs at 3; 1 is the largest value at the floor. (The
		// design's estimate was 2; at 2 the latency was 7.66 µs before the
		// EISA bridge held DMA reads in wait states and the Pentium's
		// inquire cycle wrote a dirty source line back within the read:
		// rtl/bus IOReadWaitStates, host/platform DEC560ST
		// ImplicitWriteBack, docs/shrimp-validation.md.)
		DUSetupCycles: 1,
		// derived: the EISA preset's MaxBurstBytes (1024, itself assumed).
		DMABurstBytes: 1024,
		// assumed: one wait state, a register read.
		StatusWaitCycles: 1,
		// assumed: 8 B: destination physical address, length, source node,
		// kind and notify bit; the paper gives no format.
		HeaderBytes: 8,
		// assumed: one Paragon route flit (2 B).
		RouteBytes: 2,
		// derived: a DU transfer (SH-P13) and a page-bounded combined packet
		// (SH-P17) carry at most a page.
		MaxPacketBytes: 4096,
		// assumed: the Outgoing FIFO's width (SH-P20), a word per core cycle;
		// «incoming packets have top priority for access to the NIC» (SH-P23).
		NICPortBytes: 8,
		// assumed: the paper says the NIC has FIFOs («FIFOs in the network
		// interface chip», L322) but gives no size: 512 B each.
		NICTxBytes: 512, NICRxBytes: 512,
		// calibrated: AU one-word latency 3.71 µs (L170, issue 14 design
		// section 3.1): shrimp-report's 10 rounds give 3.724 µs (+0.4%) at
		// 96 and 95, 3.772 µs (+1.7%) at 98 (the design's estimate (3.71 −
		// 1.75 µs) / 2 per side before the fit).
		NICDelayCycles: 96,
		// assumed: one EISA cycle per incoming packet.
		InSetupCycles: 1,
		// derived: 2 × DMABurstBytes, as smptb's engine: a burst starts only
		// when fully staged (issue 14 design R3).
		DMAStageBytes: 2048,
		// assumed: 64 notification records; the paper gives no queue.
		NotifyQueue: 64,
	}
}

// MaxDelayCycles bounds the pure delays (NICDelayCycles, DUSetupCycles,
// InSetupCycles, CombineCycles, StatusWaitCycles, OPTCycles). assumed: 10^6
// cycles, far beyond any NI (the whole AU latency is ≈ 370 link cycles); it
// keeps a mistyped value from wrapping the clock arithmetic.
const MaxDelayCycles = 1_000_000

// MaxMemoryBytes bounds MemoryBytes. assumed: 4 GB, the 32-bit physical
// address space of the Pentium (and the header's address field).
const MaxMemoryBytes = 1 << 32

// MaxNodes bounds the node number carried in the header. assumed: 256 (an
// 8-bit field; SHRIMP has 16, a Paragon cabinet 64, SH-P4).
const MaxNodes = 256

// Entries returns the number of OPT and IPT entries: one per page of memory
// (SH-P14).
func (c Config) Entries() int { return int(c.MemoryBytes / uint64(c.PageBytes)) }

// FIFOWords returns the Outgoing FIFO's depth in words.
func (c Config) FIFOWords() int { return c.FIFOBytes / c.FIFOWidthBytes }

// PacketWords returns the Outgoing FIFO words a packet of n data bytes
// takes: one header word and ⌈n / FIFOWidthBytes⌉ data words (derived: the
// 8-B width, SH-P20; assumed: the header is one word).
func (c Config) PacketWords(n int) int {
	return 1 + (n+c.FIFOWidthBytes-1)/c.FIFOWidthBytes
}

func pow2(v int) bool { return v > 0 && bits.OnesCount(uint(v)) == 1 }

// Validate checks every parameter; an error names the field.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		clk  clock.Clock
	}{{"CoreClock", c.CoreClock}, {"EISAClock", c.EISAClock}, {"LinkClock", c.LinkClock}} {
		if !f.clk.Valid() {
			return fmt.Errorf("shrimp: %s is not set", f.name)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"CombineCycles", c.CombineCycles}, {"DUSetupCycles", c.DUSetupCycles},
		{"StatusWaitCycles", c.StatusWaitCycles}, {"NICDelayCycles", c.NICDelayCycles}, {"InSetupCycles", c.InSetupCycles},
	} {
		if f.v < 0 || f.v > MaxDelayCycles {
			return fmt.Errorf("shrimp: %s %d must be in 0..%d", f.name, f.v, MaxDelayCycles)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"FIFOWidthBytes", c.FIFOWidthBytes}, {"DUMaxBytes", c.DUMaxBytes}, {"DMABurstBytes", c.DMABurstBytes},
		{"HeaderBytes", c.HeaderBytes}, {"RouteBytes", c.RouteBytes}, {"MaxPacketBytes", c.MaxPacketBytes},
		{"NICPortBytes", c.NICPortBytes}, {"NICTxBytes", c.NICTxBytes}, {"NICRxBytes", c.NICRxBytes},
		{"DMAStageBytes", c.DMAStageBytes}, {"NotifyQueue", c.NotifyQueue}, {"SubpageBytes", c.SubpageBytes},
	} {
		if f.v < 1 || f.v > 1<<20 {
			return fmt.Errorf("shrimp: %s %d must be in 1..%d", f.name, f.v, 1<<20)
		}
	}
	switch {
	case c.OPTCycles < 1 || c.OPTCycles > MaxDelayCycles:
		return fmt.Errorf("shrimp: OPTCycles %d must be in 1..%d (the lookup is a register stage)", c.OPTCycles, MaxDelayCycles)
	case !pow2(c.PageBytes) || c.PageBytes < 256 || c.PageBytes > 1<<16:
		return fmt.Errorf("shrimp: PageBytes %d must be a power of two in 256..65536", c.PageBytes)
	case c.MemoryBytes == 0 || c.MemoryBytes > MaxMemoryBytes || c.MemoryBytes%uint64(c.PageBytes) != 0:
		return fmt.Errorf("shrimp: MemoryBytes %d must be a positive multiple of PageBytes %d, at most %d", c.MemoryBytes, c.PageBytes, uint64(MaxMemoryBytes))
	case !pow2(c.SubpageBytes) || c.SubpageBytes > c.PageBytes:
		return fmt.Errorf("shrimp: SubpageBytes %d must be a power of two at most PageBytes %d", c.SubpageBytes, c.PageBytes)
	case !pow2(c.FIFOWidthBytes) || c.FIFOWidthBytes > 64:
		return fmt.Errorf("shrimp: FIFOWidthBytes %d must be a power of two in 1..64", c.FIFOWidthBytes)
	case c.HeaderBytes > c.FIFOWidthBytes:
		return fmt.Errorf("shrimp: HeaderBytes %d must fit one FIFO word of FIFOWidthBytes %d", c.HeaderBytes, c.FIFOWidthBytes)
	case c.HeaderBytes < 8:
		return fmt.Errorf("shrimp: HeaderBytes %d must be at least 8 (address, length, source, kind, notify)", c.HeaderBytes)
	case c.MaxPacketBytes > c.PageBytes || c.MaxPacketBytes%c.FIFOWidthBytes != 0:
		return fmt.Errorf("shrimp: MaxPacketBytes %d must be a multiple of FIFOWidthBytes %d, at most PageBytes %d", c.MaxPacketBytes, c.FIFOWidthBytes, c.PageBytes)
	case c.FIFOBytes < c.FIFOWidthBytes*c.PacketWords(c.MaxPacketBytes) || c.FIFOBytes%c.FIFOWidthBytes != 0 || c.FIFOBytes > 1<<24:
		return fmt.Errorf("shrimp: FIFOBytes %d must be a multiple of FIFOWidthBytes %d holding one packet of MaxPacketBytes %d, at most %d", c.FIFOBytes, c.FIFOWidthBytes, c.MaxPacketBytes, 1<<24)
	case c.FIFOThreshold < 0 || c.FIFOThreshold >= c.FIFOBytes:
		// A threshold at the FIFO's size could never be crossed (the
		// interrupt rises when the occupancy exceeds it), so the FIFO
		// refuses it as a high-water mark.
		return fmt.Errorf("shrimp: FIFOThreshold %d must be in 0..FIFOBytes-1 (%d)", c.FIFOThreshold, c.FIFOBytes-1)
	case c.DUMaxBytes > c.PageBytes:
		return fmt.Errorf("shrimp: DUMaxBytes %d must be at most PageBytes %d (SH-P13)", c.DUMaxBytes, c.PageBytes)
	case c.DUQueue < 0 || c.DUQueue > 64:
		return fmt.Errorf("shrimp: DUQueue %d must be in 0..64", c.DUQueue)
	case c.DMAStageBytes < c.DMABurstBytes:
		return fmt.Errorf("shrimp: DMAStageBytes %d must hold one burst of DMABurstBytes %d", c.DMAStageBytes, c.DMABurstBytes)
	case c.RouteBytes%2 != 0 || c.RouteBytes > 64:
		return fmt.Errorf("shrimp: RouteBytes %d must be whole 2-B flits, at most 64", c.RouteBytes)
	case c.NICPortBytes%c.FIFOWidthBytes != 0:
		return fmt.Errorf("shrimp: NICPortBytes %d must be a multiple of FIFOWidthBytes %d", c.NICPortBytes, c.FIFOWidthBytes)
	case c.NICTxBytes < c.FIFOWidthBytes || c.NICRxBytes < c.FIFOWidthBytes:
		return fmt.Errorf("shrimp: NICTxBytes %d and NICRxBytes %d must hold a word of FIFOWidthBytes %d", c.NICTxBytes, c.NICRxBytes, c.FIFOWidthBytes)
	}
	return nil
}

// AddressMap places the NI's EISA target windows (issue 14 design section
// 1.2; assumed: free 32-bit EISA space above the 32 MB of memory).
type AddressMap struct {
	// MemProxy is the base of the memory proxy: MemProxy + phys names the
	// local physical address phys (the UDMA LOAD, L277 «proxy memory»).
	MemProxy uint64
	// DevProxy is the base of the device proxy: DevProxy + optIndex ×
	// PageBytes + off names offset off of the imported page with that OPT
	// entry (the UDMA STORE, L95).
	DevProxy uint64
	// CSR is the base of the control and status registers (csr.go).
	CSR uint64
}

// DefaultAddressMap returns the design's map (issue 14 design section 1.2):
// memory proxy 0x4000_0000, device proxy 0x4200_0000, CSRs 0x4400_0000.
func DefaultAddressMap() AddressMap {
	return AddressMap{MemProxy: 0x4000_0000, DevProxy: 0x4200_0000, CSR: 0x4400_0000}
}
