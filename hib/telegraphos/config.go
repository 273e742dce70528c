package telegraphos

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/link"
)

// Config is a HIB's parameters. Every cycle count is in cycles of the HIB
// clock, which is the TURBOchannel clock the board plugs into.
type Config struct {
	// Version is 1 (Telegraphos I: shared data on the board's own memory,
	// special operations launched by PAL code in special mode) or 2
	// (Telegraphos II: shared data in host memory, contexts, keys and
	// shadow addressing), telegraphos.txt 2.2.1 and 2.2.4.
	Version int
	// Clock is the HIB clock.
	Clock clock.Clock
	// DecodeCycles: the TURBOchannel interface latches an access and the
	// central control decodes its address.
	DecodeCycles int
	// ControlCycles: the central control builds a packet header or
	// parses one (route, kind, counters) before moving its words.
	ControlCycles int
	// AtomicCycles: the atomic-operation unit computes the new value.
	AtomicCycles int
	// MulticastCycles: reading one entry of the multicast list.
	MulticastCycles int
	// MemLatency and MemBytesPerCycle time the shared memory the HIB
	// reaches: the board's own (Version 1) or host memory (Version 2).
	MemLatency, MemBytesPerCycle int
	// CounterCache is the number of entries of the counter cache (16 to
	// 32 proposed, TG-P21); 0 builds the HIB without it, as Telegraphos I,
	// whose reflected writes are applied unconditionally.
	CounterCache int
	// OwnerOrdering sends writes to a replicated page through its owner
	// (2.3.1). Without it every node multicasts its own writes to the
	// other copies directly, which figure 2 shows to be inconsistent.
	OwnerOrdering bool
	// Contexts is the number of Telegraphos contexts (Version 2).
	Contexts int
	// MulticastEntries bounds the multicast lists (16 K entries, TG-P17).
	MulticastEntries int
	// PageCounterBits is the width of a page access counter (16, TG-P16).
	PageCounterBits int
	// Link is the link between the HIB and its switch; its TxDepth is the
	// outgoing link interface's FIFO per message class and its BufferFlits
	// the incoming one, in 4-byte words.
	Link link.Config
}

// TelegraphosI returns the Telegraphos I HIB, the prototype the paper
// measured (section 3.2).
func TelegraphosI() Config {
	return Config{
		// The HIB runs on the TURBOchannel clock of the DEC 3000 model 300
		// it plugs into (TG-P1/P2), 12.5 MHz as rtl/bus.TurboChannel.
		Version: 1, Clock: clock.Hz(12_500_000),
		// assumed: one cycle to latch a TURBOchannel access and decode it
		// (a few hundred gates of FPGA logic, TG-P24).
		DecodeCycles: 1,
		// calibrated: fitted to the remote write of 0.70 µs (section 3.2),
		// the time per write of a long loop of them: the cycles the FPGA
		// central control spends on each packet it builds or takes apart.
		// A long batch of writes runs at the pace of the home HIB, which
		// parses each write (2 cycles), writes it to its memory and builds
		// the acknowledgement (2 cycles): 0.71 µs per write.
		ControlCycles: 2,
		// assumed: one cycle for the atomic unit's adder/comparator, one per
		// multicast list entry (an SRAM read).
		AtomicCycles: 1, MulticastCycles: 1,
		// assumed: a 1995 DRAM access of about 160 ns (2 cycles), a word per
		// cycle (TG-P18: 16 MB of DRAM on the board).
		MemLatency: 2, MemBytesPerCycle: WordBytes,
		// Telegraphos I has no counter cache (2.3.4) but orders updates
		// through the owner.
		CounterCache: 0, OwnerOrdering: true,
		Contexts:         0,
		MulticastEntries: 16 << 10, // «16 K multicast list entries x 32 bits» (TG-P17)
		PageCounterBits:  16,       // «64 K pages x (16+16) bits» (TG-P16)
		Link:             TelegraphosLink(),
	}
}

// TelegraphosII returns the single-chip Telegraphos II HIB: shared data in
// host memory, contexts, keys and shadow addressing (2.2.4), with the
// counter cache the paper proposes for it (2.3.4).
func TelegraphosII() Config {
	c := TelegraphosI()
	c.Version = 2
	c.CounterCache = 32 // «a cache that holds 16-32 entries» (TG-P21)
	c.Contexts = 16     // assumed: the paper gives no number
	// assumed: host memory is about 240 ns (3 cycles) away through the DEC
	// 3000's I/O controller, a DMA path beside the processor's
	// TURBOchannel accesses (the model does not make the HIB's memory
	// accesses wait for a remote read the processor holds the TURBOchannel
	// for).
	c.MemLatency = 3
	return c
}

// TelegraphosLink returns the link between a HIB and a Telegraphos switch
// (ribbon cables, TG-P4), with two virtual channels: requests and
// responses.
func TelegraphosLink() link.Config {
	return link.Config{
		// assumed: a byte per cycle of 25 MHz (25 MB/s) over the ribbon
		// cables of Telegraphos I (the paper gives no link rate). A 3-word
		// write packet takes 0.48 µs, less than the home HIB needs per
		// write, so the HIB, not the link, sets the pace of a long batch.
		Clock: clock.MHz(25), BytesPerCycle: 1,
		// assumed: half a metre of ribbon cable, well under a cycle.
		DelayCycles: 0,
		VCs:         int(numClasses), FlowControl: link.Credits,
		// «2+2 Kb of synchr. (2-port) FIFO's» (TG-P25/26): 2 Kbit per
		// direction is 64 words, 32 per message class, at the HIB. The
		// switch's input buffers are taken to be as deep.
		BufferFlits: 32, TxDepth: 32,
		// assumed: a credit is back a cycle after its slot is freed.
		CreditDelay: 1,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Version != 1 && c.Version != 2:
		return fmt.Errorf("version %d must be 1 or 2", c.Version)
	case !c.Clock.Valid():
		return errors.New("no HIB clock")
	case c.DecodeCycles < 0 || c.ControlCycles < 0 || c.AtomicCycles < 0 || c.MulticastCycles < 0:
		return fmt.Errorf("cycle counts must not be negative (decode %d, control %d, atomic %d, multicast %d)",
			c.DecodeCycles, c.ControlCycles, c.AtomicCycles, c.MulticastCycles)
	case c.MemLatency < 0 || c.MemBytesPerCycle < 1:
		return fmt.Errorf("shared memory: latency %d must not be negative and %d bytes per cycle at least 1", c.MemLatency, c.MemBytesPerCycle)
	case c.CounterCache < 0:
		return fmt.Errorf("counter cache of %d entries must not be negative", c.CounterCache)
	case c.Version == 2 && (c.Contexts < 1 || c.Contexts > 1<<12):
		return fmt.Errorf("contexts: %d must be in 1..4096 for Telegraphos II", c.Contexts)
	case c.MulticastEntries < 0:
		return fmt.Errorf("multicast entries %d must not be negative", c.MulticastEntries)
	case c.PageCounterBits < 1 || c.PageCounterBits > 32:
		return fmt.Errorf("page counter bits %d must be in 1..32", c.PageCounterBits)
	case c.Link.FlowControl != link.Credits || c.Link.VCs < int(numClasses):
		return fmt.Errorf("link: needs credit flow control and %d VCs (one per message class)", numClasses)
	case c.Link.TxDepth < 1:
		return fmt.Errorf("link: transmit queue depth %d must be at least 1 (the outgoing link interfaces push into it)", c.Link.TxDepth)
	}
	if err := c.Link.Validate(); err != nil {
		return fmt.Errorf("link: %w", err)
	}
	if w := c.Link.BufferFlits; w < 4 {
		return fmt.Errorf("link buffer of %d words cannot hold the longest packet (4 words)", w)
	}
	return nil
}
