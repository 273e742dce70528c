package lanai

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// Config is a LANai card's hardware. Firmware costs are not here: they are
// the control program's (firmware/...), as instruction estimates that the
// testbench turns into processor cycles at the card's CPI100.
type Config struct {
	Name string
	// Clock is the LANai processor clock; the SRAM and the host DMA
	// engine run on it too.
	Clock clock.Clock
	// CPI100 is the processor's cycles per instruction, in hundredths, on
	// compiled control-program code running out of SRAM: the pipeline's
	// stalls and the SRAM accesses per instruction, averaged. The card
	// does not execute instructions itself; a testbench scales a
	// program's instruction estimates by it (firmware/lci Costs.AtCPI).
	CPI100 int
	// SRAMBytes is the size of NI memory.
	SRAMBytes uint64
	// SRAMBytesPerCycle is what the SRAM moves per processor cycle, shared
	// by the processor, the PCI slave and the three DMA engines;
	// SRAMLatency the cycles from accepting an access to its first data.
	SRAMBytesPerCycle int
	SRAMLatency       int
	// HostDMASetup is the cycles the host DMA engine spends on each
	// transfer before its first bus request; HostDMABurst its largest
	// burst; HostDMAQueue the transfers it holds (1: the engine is
	// programmed through its registers one transfer at a time).
	HostDMASetup int
	HostDMABurst int
	HostDMAQueue int
	// PCISlaveWait is the initial wait states of the card's PCI slave (the
	// host's PIO into SRAM).
	PCISlaveWait int
	// NetBurst is the SRAM burst of the send and receive DMA engines;
	// SendQueue the packets the send engine holds.
	NetBurst  int
	SendQueue int
}

// LANai4 is the PPro platform's NI: «LANai 4.1, 33 MHz 1 MB SRAM»
// (MY-P11/P12).
func LANai4() Config {
	return Config{
		Name:      "lanai4.1",
		Clock:     clock.MHz(33),
		SRAMBytes: 1 << 20,
		// calibrated: CPI 1.25, fitted to the PPro I-sdma latency L =
		// 10.7 µs (Table III) with firmware/lci's instruction estimates.
		CPI100: 125,
		// assumed: the LANai's SRAM serves two 32-bit accesses per
		// processor cycle (264 MB/s at 33 MHz), so it can feed the link
		// (160 MB/s) and the PCI DMA (127.2 MB/s peak) but not both at
		// full rate plus the processor; the paper says only that on the
		// PPro platform «not all NI-level protocol handling and message
		// transfers are hidden behind DMA transfers».
		SRAMBytesPerCycle: 8,
		SRAMLatency:       1,
		// assumed: 4 cycles to take a transfer from the DMA registers.
		HostDMASetup: 4,
		// assumed: the engine bursts up to 256 bytes on PCI.
		HostDMABurst: 256,
		// «One DMA engine transfers data between host memory and NI
		// memory» (MY-P13): one transfer at a time, programmed through
		// its registers; the control program queues the rest.
		HostDMAQueue: 1,
		// derived: 2 wait states make a write-combined 32-byte PIO line
		// take 9 cycles of 64-bit PCI (address, decode, 2 waits, 4 data,
		// idle): 118 MB/s, the P3 figure «The PIO-write bandwidth on the P3
		// platform is limited to about 120 Mbyte/s» (MY-P33). The same
		// slave on the LANai 4 (assumed).
		PCISlaveWait: 2,
		// assumed: the network engines read and write SRAM in 64-byte
		// bursts and take one packet at a time.
		NetBurst:  64,
		SendQueue: 1,
	}
}

// LANai9 is the P3 platform's NI: «LANai 9.2, 133 MHz 2 MB SRAM»
// (MY-P11/P12). Same structure and cycle counts; the clock, the memory
// size and the CPI differ. At 133 MHz the SRAM moves 1064 MB/s: «the NI's
// local memory bandwidth is much higher than the unidirectional network
// bandwidth» (section 5.2.4).
//
// The CPI: the paper's NI-bound figures improved about 2.4 times from the
// 33 MHz LANai 4 to the 133 MHz LANai 9, not the 4 times of the clocks (F&A
// «consistently about 2.5 times better», the I-pio gap 6.7 to 2.8 µs,
// Tables III and IV), so the LANai 9 runs the same code at more cycles per
// instruction. Myricom's card notes point the same way: the LANai 9 card
// has «~1.7x higher instruction rate from compiled code» than the LANai
// 7.2 card it replaced (myri.com/myrinet/PCI64/m2l-pci64b.html) at about
// twice its clock, and its SRAM runs at the processor's clock («the
// allowed clock rate of the RISC and local memory: 133MHz»,
// m3m-pmc64b.html), so a slower memory clock is not the cause.
func LANai9() Config {
	c := LANai4()
	c.Name, c.Clock, c.SRAMBytes = "lanai9.2", clock.MHz(133), 2<<20
	// calibrated: CPI 2.25, fitted to the P3 I-pio gap g = 2.8 µs
	// (Table IV: 2.82 µs), the NI's per-packet work on the P3. (At the
	// LANai 4's 1.25 the gap was 1.53 µs, -45%.)
	c.CPI100 = 225
	return c
}

// Preset returns the named configuration: lanai4 or lanai9.
func Preset(name string) (Config, error) {
	switch name {
	case "lanai4", "lanai4.1":
		return LANai4(), nil
	case "lanai9", "lanai9.2":
		return LANai9(), nil
	}
	return Config{}, fmt.Errorf("unknown LANai preset %q (have lanai4, lanai9)", name)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case !c.Clock.Valid():
		return fmt.Errorf("lanai %s: no clock", c.Name)
	case c.CPI100 < 1:
		return fmt.Errorf("lanai %s: CPI100 %d must be at least 1 (hundredths of a cycle per instruction)", c.Name, c.CPI100)
	case c.SRAMBytes < 4096 || c.SRAMBytes >= 1<<32:
		return fmt.Errorf("lanai %s: SRAM of %d bytes must be at least 4 KiB and under 4 GiB", c.Name, c.SRAMBytes)
	case c.SRAMBytesPerCycle < 1 || c.SRAMLatency < 0:
		return fmt.Errorf("lanai %s: SRAM %d bytes/cycle, latency %d: need at least 1 byte/cycle and latency >= 0", c.Name, c.SRAMBytesPerCycle, c.SRAMLatency)
	case c.HostDMASetup < 0 || c.HostDMABurst < 4 || c.HostDMAQueue < 1:
		return fmt.Errorf("lanai %s: host DMA setup %d, burst %d, queue %d: need setup >= 0, burst >= 4, queue >= 1", c.Name, c.HostDMASetup, c.HostDMABurst, c.HostDMAQueue)
	case c.PCISlaveWait < 0:
		return fmt.Errorf("lanai %s: %d PCI slave wait states", c.Name, c.PCISlaveWait)
	case c.NetBurst < 4 || c.SendQueue < 1:
		return fmt.Errorf("lanai %s: network burst %d, send queue %d: need burst >= 4, queue >= 1", c.Name, c.NetBurst, c.SendQueue)
	}
	return nil
}
