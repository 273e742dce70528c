package bus

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
)

// Arbitration is the policy that picks the next master.
type Arbitration uint8

const (
	// RoundRobin grants requesting masters in turn, starting after the
	// last one granted.
	RoundRobin Arbitration = iota
	// FixedPriority always grants the lowest-numbered requesting master.
	FixedPriority
)

// Config is a bus's timing. Every cycle count is in bus clock cycles.
type Config struct {
	// Name of the preset, for reports.
	Name string
	// Clock is the bus clock.
	Clock clock.Clock
	// WidthBytes is the data path width: bytes per data phase.
	WidthBytes int
	// ArbCycles is the time from a request on an idle bus to its grant.
	ArbCycles int
	// HiddenArb lets a master that requests while another transaction
	// runs be granted during it, so its address phase can follow the
	// previous transaction's idle cycles directly.
	HiddenArb bool
	// AddrCycles is the length of the address phase.
	AddrCycles int
	// DecodeCycles is the number of wait cycles between the address phase
	// and the earliest data phase while the target decodes the address.
	DecodeCycles int
	// ReadTurnaround is the minimum number of cycles between the address
	// phase and the first data phase of a read (the multiplexed bus
	// changes driver); the larger of it and DecodeCycles applies.
	ReadTurnaround int
	// IdleCycles is the number of idle cycles after each transaction.
	IdleCycles int
	// MaxBurstBytes bounds one transaction: a longer request is split at
	// MaxBurstBytes-aligned boundaries and the master re-arbitrates for
	// each piece. It must be a multiple of WidthBytes.
	MaxBurstBytes int
	// Arbitration is the grant policy.
	Arbitration Arbitration
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case !c.Clock.Valid():
		return errors.New("bus: no clock")
	case c.WidthBytes < 1 || c.WidthBytes&(c.WidthBytes-1) != 0:
		return fmt.Errorf("bus width %d bytes must be a positive power of two", c.WidthBytes)
	case c.ArbCycles < 0 || c.AddrCycles < 1 || c.DecodeCycles < 0 || c.ReadTurnaround < 0 || c.IdleCycles < 0:
		return fmt.Errorf("bus cycle counts must not be negative and the address phase must be at least 1 cycle (arb %d, addr %d, decode %d, turnaround %d, idle %d)",
			c.ArbCycles, c.AddrCycles, c.DecodeCycles, c.ReadTurnaround, c.IdleCycles)
	case c.MaxBurstBytes < c.WidthBytes || c.MaxBurstBytes%c.WidthBytes != 0:
		return fmt.Errorf("bus max burst %d bytes must be a positive multiple of the width %d", c.MaxBurstBytes, c.WidthBytes)
	case c.Arbitration > FixedPriority:
		return fmt.Errorf("bus: unknown arbitration policy %d", c.Arbitration)
	}
	return nil
}

// PeakBytesPerSecond is the data-phase rate with no overheads:
// WidthBytes x clock frequency.
func (c Config) PeakBytesPerSecond() float64 {
	return float64(c.WidthBytes) * c.Clock.HzFloat()
}

// Presets. The cycle counts of PCI come from the PCI Local Bus
// Specification, revision 2.1 (1995), chapter 3: a one-clock address phase,
// a turnaround clock before read data on the multiplexed AD bus, medium
// DEVSEL decode (the target claims the transaction one clock after the
// address phase), an idle clock between transactions, and hidden
// arbitration (GNT# may move while another master owns the bus).

// pciClock is 33.33 MHz exactly (a 30 ns period), the PCI clock. The LCI
// paper's peak DMA figures are width x 33.33 MHz in units of 2^20 bytes:
// 4 B x 33.33 MHz = 127.2 MiB/s and 8 B x 33.33 MHz = 254.3 MiB/s
// (lci-myrinet-cluster-protocols.txt Table I, «32 bit, 33 MHz PCI 127.2
// Mbyte/s», «64 bit, 33 MHz PCI 254.3 Mbyte/s»).
var pciClock, _ = clock.Ratio(100_000_000, 3)

// PCI32 is 32-bit, 33 MHz PCI (the PPro platform of the LCI paper, MY-P7,
// and the AlphaServer 2100 bus of the Memory Channel paper, MC-P2).
func PCI32() Config {
	return Config{
		Name: "pci32", Clock: pciClock, WidthBytes: 4, // «32 bit, 33 MHz PCI»
		ArbCycles: 1, HiddenArb: true, AddrCycles: 1, DecodeCycles: 1,
		ReadTurnaround: 1, IdleCycles: 1,
		// assumed: bridges disconnect bursts at 4 KiB page boundaries.
		MaxBurstBytes: 4096,
	}
}

// PCI64 is 64-bit, 33 MHz PCI (the P3 platform of the LCI paper, MY-P7).
func PCI64() Config {
	c := PCI32()
	c.Name = "pci64"
	c.WidthBytes = 8 // «64 bit, 33 MHz PCI»
	return c
}

// TurboChannel is the 32-bit multiplexed address/data TURBOchannel of the
// DEC 3000 model 300 (Telegraphos, TG-P1/TG-P2). Sources: the OpenVMS AXP
// TURBOchannel support chapter («a synchronous I/O bus with a 32 bit
// multiplexed address and data path», «clock frequencies from 12.5 to 25
// MHz»; on the model 300 «The DMA burst size is limited to 64 longwords»).
// The ATM paper reads a cell word by word in «14 (40 nanosecond) I/O bus read
// cycles» (AT-P5), i.e. one data cycle per word once a read streams.
func TurboChannel() Config {
	return Config{
		Name: "turbochannel",
		// assumed: the model 300's slots run at the low end of the TC
		// range; the Telegraphos paper does not give the frequency.
		Clock:      clock.Hz(12_500_000),
		WidthBytes: 4,
		// assumed: one request/grant cycle on TC's point-to-point request
		// lines, one decode cycle, one idle cycle between transactions.
		ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 1,
		ReadTurnaround: 1, IdleCycles: 1,
		MaxBurstBytes: 64 * 4, // 64 longwords on the DEC 3000/300
	}
}

// TurboChannel25 is the 25 MHz TURBOchannel of the DECstation 5000/200,
// the host of the FORE ATM remote-memory paper (AT-P2, AT-P3: «The
// interface is located on the TurboChannel I/O bus»). The clock is the
// paper's: «the processor requires 14 (40 nanosecond) I/O bus read
// cycles» to read a cell (AT-P5), a 40 ns cycle, the top of the
// TURBOchannel range («clock frequencies from 12.5 to 25 MHz», see
// TurboChannel). The FORE interface's FIFOs answer «with no wait states»
// (AT-P4), which is the target's business (SetTargetWait 0), not the
// bus's.
func TurboChannel25() Config {
	c := TurboChannel()
	c.Name = "turbochannel25"
	c.Clock = clock.Hz(25_000_000) // «14 (40 nanosecond) I/O bus read cycles» (AT-P5)
	// assumed: the phases and the 64-longword DMA burst of the DEC
	// 3000/300 (TurboChannel); the FORE interface does no DMA (AT-P3), so
	// no figure of the paper depends on the burst limit.
	return c
}

// EISA is the 32-bit EISA bus of the SHRIMP nodes (SH-P6; EISA
// Specification 3.12): an 8.33 MHz BCLK, standard cycles of two BCLKs
// (address then data) and burst cycles of one 32-bit transfer per BCLK,
// 33 MB/s.
func EISA() Config {
	return Config{
		Name: "eisa", Clock: clock.Hz(8_333_333), WidthBytes: 4,
		// assumed: one BCLK of arbitration, no extra decode or turnaround
		// wait for a zero-wait-state target, one idle BCLK between cycles.
		ArbCycles: 1, HiddenArb: false, AddrCycles: 1, DecodeCycles: 0,
		ReadTurnaround: 0, IdleCycles: 1,
		// assumed: bursts stop at 1 KiB boundaries.
		MaxBurstBytes: 1024,
	}
}

// Preset returns the named preset: pci32, pci64, turbochannel,
// turbochannel25 or eisa.
func Preset(name string) (Config, error) {
	switch name {
	case "pci32":
		return PCI32(), nil
	case "pci64":
		return PCI64(), nil
	case "turbochannel":
		return TurboChannel(), nil
	case "turbochannel25":
		return TurboChannel25(), nil
	case "eisa":
		return EISA(), nil
	}
	return Config{}, fmt.Errorf("unknown bus preset %q (want pci32, pci64, turbochannel, turbochannel25 or eisa)", name)
}
