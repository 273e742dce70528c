package mcadapter

import (
	"fmt"
	"math/bits"
)

// Config is every hardware parameter of one Memory Channel adapter
// (issue 13 design section 2). Each field's source is in MC1's body.
type Config struct {
	// PageBytes is the connection (mapping) granularity.
	PageBytes int
	// TxPages is the number of transmit-window pages; the window is
	// TxPages x PageBytes bytes.
	TxPages int
	// GlobalPages is the number of pages of the global MC address space
	// (the receive page table has one entry per global page).
	GlobalPages int
	// HostBytes is the host memory size receive frames lie in.
	HostBytes uint64
	// MaxPacketBytes is the most data one packet carries: a longer PCI
	// burst is cut every MaxPacketBytes (and at page ends).
	MaxPacketBytes int
	// TxBeatCycles is the PCI cycles the TX FIFO write port takes per
	// accepted data beat (1 = no wait state).
	TxBeatCycles int
	// TxFIFOBytes is the transmit FIFO's capacity in data bytes; a burst
	// that does not fit is refused at its address phase (PCI target
	// retry).
	TxFIFOBytes int
	// PipelineCycles is the adapter's pure delay on each side, in PCI
	// cycles: a packet may leave the TX FIFO for the link PipelineCycles
	// after its last byte entered it, and a received packet may start its
	// DMA PipelineCycles after its tail arrived. It occupies nothing.
	PipelineCycles int
	// RxFIFOBytes is the receive FIFO's capacity in data bytes.
	RxFIFOBytes int
	// RxFIFOPackets is the receive FIFO's capacity in packets
	// (descriptors).
	RxFIFOPackets int
	// DMASetupCycles is the receive DMA's cost per packet before its first
	// PCI write, in PCI cycles.
	DMASetupCycles int
	// DMABurstBytes is the largest PCI write burst of the receive DMA.
	DMABurstBytes int
	// CSRBytes is the size of the CSR window on PCI.
	CSRBytes uint64
}

// MC1 returns the first-generation adapter of the paper's cluster
// (cashmere-2l-memory-channel.txt section 2.1; parameters MC-P*).
func MC1() Config {
	return Config{
		// MC-P6: «MC has page-level connection granularity, which is 8
		// Kbytes for our Alpha cluster.»
		PageBytes: DefaultPageBytes,
		// derived: 128 MB / 8 KB = 16384 (MC-P7 «a total of a 128 Mbyte MC
		// address space», MC-P20 «the 128MB of MC space»; DefaultTxPages
		// says why not 64K).
		TxPages: DefaultTxPages,
		// derived: the same 128 MB / 8 KB = 16384.
		GlobalPages: DefaultGlobalPages,
		// MC-P14: «four 21064A processors operating at 233 MHz and with
		// 256MB of shared memory».
		HostBytes: DefaultHostBytes,
		// derived: the 21064A write buffer merges stores into one 32-byte
		// block (platform.AlphaServer2100().CPU.WriteCombineBytes), so a
		// CPU burst is at most 32 bytes; longer bursts from other masters
		// are cut to the same size.
		MaxPacketBytes: 32,
		// calibrated: 29 MB/s per link, «the limiting factor being the
		// 32-bit AlphaServer 2100 PCI bus» (section 2.1, MC-P2). Set by
		// the fit (issue 13 design section 3.2): 4 PCI cycles per 4-byte
		// beat, 3 wait states, inside PCI 2.1's 8-clock subsequent-latency
		// rule. mc-report measures 30.5 MB/s (+5.1%); 3 gives 39.5 MB/s
		// (+36%), 5 gives 24.8 MB/s (-14%).
		TxBeatCycles: 4,
		// assumed: 512 B (16 packets of 32 B). At least bandwidth x
		// pipeline delay (29 MB/s x 1.6 µs = 46 B) with room for the write
		// buffers of four CPUs (4 x 4 x 32 B = 512 B).
		TxFIFOBytes: 512,
		// calibrated: 5.2 µs, «Unicast and multicast process-to-process
		// writes have a latency of 5.2 μs on our system» (section 2.1). Set
		// by the fit (issue 13 design section 3.1), after TxBeatCycles:
		// the same delay on the transmit and the receive side. mc-report
		// measures 5.19 µs (-0.1%); 0 gives 2.11 µs, 51 gives 5.13 µs
		// (-1.3%), 53 gives 5.25 µs (+1.0%); the bandwidth does not move.
		PipelineCycles: 52,
		// assumed: 2 KB, at least the hub rate x receive pipeline (100 MB/s
		// x 1.6 µs = 160 B) with a margin of 8 for PCI contention.
		RxFIFOBytes: 2048,
		// assumed: 32 descriptors, 2 KB of 64-byte packets.
		RxFIFOPackets: 32,
		// assumed: 4 PCI cycles, rtl/dma's default; the paper gives no
		// adapter DMA timing (smptb's stand-in DMA uses the same).
		DMASetupCycles: 4,
		// derived: a host cache line, «A cache line is 64 bytes.» (MC-P17),
		// the bridge's LineBytes.
		DMABurstBytes: 64,
		// derived: a 4-byte CSR per page in each table (2 x 16384 x 4 B =
		// 128 KB) plus 128 KB of status and counter registers (assumed).
		CSRBytes: 256 << 10,
	}
}

// MaxDelayCycles bounds the pure delays PipelineCycles and DMASetupCycles.
// assumed: 10^6 PCI cycles (30 ms), far beyond any adapter (the whole 5.2 µs
// write is 173 cycles); it keeps a mistyped value from wrapping the clock
// arithmetic.
const MaxDelayCycles = 1_000_000

// WindowBytes returns the size of the transmit window.
func (c Config) WindowBytes() uint64 { return uint64(c.TxPages) * uint64(c.PageBytes) }

// Validate checks every parameter; an error names the field.
func (c Config) Validate() error {
	switch {
	case c.PageBytes < MinPageBytes || c.PageBytes > MaxPageBytes || bits.OnesCount(uint(c.PageBytes)) != 1:
		return fmt.Errorf("mcadapter: PageBytes %d must be a power of two in %d..%d", c.PageBytes, MinPageBytes, MaxPageBytes)
	case c.TxPages < 1 || c.TxPages > MaxTxPages:
		return fmt.Errorf("mcadapter: TxPages %d must be in 1..%d", c.TxPages, MaxTxPages)
	}
	pos := func(name string, v int) error {
		if v < 1 {
			return fmt.Errorf("mcadapter: %s %d must be at least 1", name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"GlobalPages", c.GlobalPages}, {"MaxPacketBytes", c.MaxPacketBytes}, {"TxBeatCycles", c.TxBeatCycles},
		{"TxFIFOBytes", c.TxFIFOBytes}, {"RxFIFOBytes", c.RxFIFOBytes}, {"RxFIFOPackets", c.RxFIFOPackets},
		{"DMABurstBytes", c.DMABurstBytes},
	} {
		if err := pos(f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case c.GlobalPages > MaxTxPages:
		return fmt.Errorf("mcadapter: GlobalPages %d must be at most %d", c.GlobalPages, MaxTxPages)
	case c.MaxPacketBytes%4 != 0 || c.MaxPacketBytes > c.PageBytes:
		return fmt.Errorf("mcadapter: MaxPacketBytes %d must be a multiple of 4 (a 32-bit word, MC-P18) and at most PageBytes %d", c.MaxPacketBytes, c.PageBytes)
	case c.TxBeatCycles > 8:
		return fmt.Errorf("mcadapter: TxBeatCycles %d must be at most 8 (PCI 2.1 subsequent latency)", c.TxBeatCycles)
	case c.TxFIFOBytes < c.MaxPacketBytes:
		return fmt.Errorf("mcadapter: TxFIFOBytes %d must hold one packet of MaxPacketBytes %d", c.TxFIFOBytes, c.MaxPacketBytes)
	case c.RxFIFOBytes < c.MaxPacketBytes:
		return fmt.Errorf("mcadapter: RxFIFOBytes %d must hold one packet of MaxPacketBytes %d", c.RxFIFOBytes, c.MaxPacketBytes)
	case c.PipelineCycles < 0 || c.PipelineCycles > MaxDelayCycles:
		return fmt.Errorf("mcadapter: PipelineCycles %d must be in 0..%d", c.PipelineCycles, MaxDelayCycles)
	case c.DMASetupCycles < 0 || c.DMASetupCycles > MaxDelayCycles:
		return fmt.Errorf("mcadapter: DMASetupCycles %d must be in 0..%d", c.DMASetupCycles, MaxDelayCycles)
	case c.HostBytes == 0 || c.HostBytes%uint64(c.PageBytes) != 0:
		return fmt.Errorf("mcadapter: HostBytes %d must be a positive multiple of PageBytes %d", c.HostBytes, c.PageBytes)
	case c.CSRBytes < uint64(8*c.TxPages+8*c.GlobalPages):
		return fmt.Errorf("mcadapter: CSRBytes %d must hold both tables (4 B per entry) and as much again of registers", c.CSRBytes)
	}
	return nil
}
