package lci

import (
	"fmt"
)

// Config is the control program's configuration: what the host library
// and the platform decide at initialisation.
type Config struct {
	Variant Variant
	// Reliability is who recovers lost and corrupted packets: nobody
	// (the base implementation's flow control), the NI (I-nirx) or the
	// host (I-hrx), section 5.1.
	Reliability Reliability
	// AckDelayCycles and RetransmitCycles are the retransmitting
	// variants' timers, in NI cycles (the platform converts): the
	// receiver's delayed-acknowledgment timer per sender («each receiver
	// maintains in addition an acknowledgment timer per sender S ... If
	// the timer expires, the receiver sends an explicit delayed
	// acknowledgment», section 5.1.1) and the sender's retransmission
	// timeout («If the sender's timer expires before an acknowledgment is
	// received, it retransmits all unacknowledged packets whose
	// timestamps have become too old»). The paper gives neither value;
	// see RxAckDelay and RxRetransmit for the assumed ones.
	AckDelayCycles, RetransmitCycles int
	// MTU is the packet buffer size: «The base implementation uses an MTU
	// of 2 Kbyte» (MY-P27).
	MTU int
	// ClusterSize is the number of NIs the receive buffers are reserved
	// for (64 on both platforms, MY-P1), whatever number of nodes a run
	// uses: the window follows from it.
	ClusterSize int
	// RecvBufs is the number of NI receive buffers: «the PPro platform
	// has space for 256 buffers of 2 Kbyte; on the P3 platform the number
	// of buffers is doubled» (MY-P22).
	RecvBufs int
	// SpareBufs are receive buffers not reserved for any sender: they
	// take acknowledgments and F&A replies. assumed: 4, which with 256
	// buffers and 63 senders leaves W = 4 (MY-P23's estimate).
	SpareBufs int
	// SendBufs is the number of NI send buffers the host allocates from;
	// SendQSlots the send descriptor ring; HostSlots the host receive
	// slots (and the Recv Completions ring). assumed: 16, 64, 64.
	SendBufs, SendQSlots, HostSlots int
	// Tree is the multicast forwarding tree (MY-P37/P38).
	Tree Tree
	// WatchdogCycles is the polling watchdog's timeout in NI cycles:
	// «The default timeout value is 70 µs on the PPro platform and 30 µs
	// on the P3 platform» (MY-P26); the platform converts.
	WatchdogCycles int
	// Interrupts enables network interrupts (the polling watchdog).
	Interrupts bool
	// SyncFetch makes the host send queue module busy-wait for the DMA
	// that fetches a packet's data (when the engine was free) instead of
	// returning to the main loop: «When the NI's control program finds a
	// send descriptor in module Host Send Queue Mgt, it first transfers
	// the user data to the corresponding Send Buffer using DMA. It then
	// checks if its send window allows it to transmit the packet»
	// (section 4.1), and «on the PPro platform not all NI-level protocol
	// handling and message transfers are hidden behind DMA transfers»
	// (section 5.2.4).
	SyncFetch bool
	// HostForward selects host-level multicast forwarding, I-sdma-hmc
	// (I-pio-hmc with PIO; section 5.4): «When a host must forward a
	// packet to a set of children, I-sdma-hmc issues a data transfer to
	// NI memory only once and transmits the same NI buffer multiple
	// times.» A multicast packet that arrives is only delivered to the
	// host (no Multicast-module descriptors); the host library forwards
	// it with one send buffer and one descriptor per child (DescHostFwd).
	// The root's own multicast is sent as in the base implementation.
	// Default false: the base implementation's NI-level forwarding.
	HostForward bool
	// AnonBase and AnonPages are I-rcpy's reserved anonymous pages in
	// host memory (bus addresses, PageBytes each from AnonBase): «it
	// transfers the data to a so-called anonymous page, which is picked
	// from a set of pages reserved in host memory» (section 5.2.3). The
	// host library reserves them (host/lcilib RcpyAnonBase, RcpyAnonPages);
	// 0 in the other variants.
	AnonBase  uint32
	AnonPages int
	// Costs are the handlers' cycle counts.
	Costs Costs
}

// DefaultConfig is I-sdma with the PPro platform's buffers and watchdog
// (70 µs of the LANai 4.1's 33 MHz); host/lcilib sets the buffers and the
// watchdog from its platform.
func DefaultConfig() Config {
	return Config{Variant: SDMA, MTU: BaseMTU, ClusterSize: 64, RecvBufs: 256, SpareBufs: 4,
		SendBufs: 16, SendQSlots: 64, HostSlots: 64, Tree: Binary, WatchdogCycles: 70 * 33, SyncFetch: true, Costs: DefaultCosts(),
		AckDelayCycles: RxAckDelay(70 * 33), RetransmitCycles: RxRetransmit(70 * 33)}
}

// RxAckDelay is the retransmitting variants' delayed-acknowledgment
// timeout for a platform whose polling watchdog is watchdog cycles.
// assumed: the watchdog's own timeout (70 µs on the PPro, 30 µs on the
// P3, MY-P26), the paper's only NI timeout: it bounds how long a
// one-way sender's buffers stay unacknowledged when no return traffic and
// no half window come, as the watchdog bounds how long a packet waits
// for a poll.
func RxAckDelay(watchdog int) int { return watchdog }

// RxRetransmit is the retransmission timeout for a platform whose polling
// watchdog is watchdog cycles. assumed: ten delayed-acknowledgment
// timeouts (700 µs on the PPro, 300 µs on the P3). An acknowledgment is
// due one delayed-ack timeout after a packet arrives at the latest, but
// a busy receiving NI takes its packets late: while a fetch it waits for
// (SyncFetch) sits behind deliveries in its DMA queue it handles nothing
// else, and in an 8-node PPro run of 2 KB packets its acknowledgments came
// up to about 300 µs after the packets were sent. With four timeouts (280
// µs) that run resent 315 packets it had lost none of; with ten, none.
func RxRetransmit(watchdog int) int { return 10 * RxAckDelay(watchdog) }

// BaseMTU is the base implementation's MTU, the packet buffer size the
// buffer counts (RecvBufs, SpareBufs, SendBufs, HostSlots) of a platform
// are given for: «The base implementation uses an MTU of 2 Kbyte» (MY-P27).
const BaseMTU = 2048

// WithMTU returns c with an MTU of mtu and its buffer counts, given for
// c.MTU, rescaled so that the bytes each buffer pool takes stay what they
// were: «if the NI buffer space requirements are to remain constant»
// (section 7.3), «a larger MTU implies fewer send and receive buffers»
// (section 7.5). Each count becomes count x c.MTU / mtu (rounded down, at
// least 1); the window follows (Window). I-1k and I-4k are WithMTU(1024)
// and WithMTU(4096) of the platform's 2 KB configuration (Table II).
//
// derived: the windows of the 64-node cluster (63 senders), with the
// spare buffers' 8 KB (4 of 2 KB, SpareBufs) held constant too:
//
//	PPro (256 x 2 KB = 512 KB):  2k: (256-4)/63 = 4;  1k: (512-8)/63 = 8;
//	                             4k: (128-2)/63 = 2
//	P3 (512 x 2 KB = 1 MB):      2k: (512-4)/63 = 8;  1k: (1024-8)/63 = 16;
//	                             4k: (256-2)/63 = 4
//
// so W = 8/16 (I-1k) and 2/4 (I-4k) on PPro/P3, twice and half the base's
// 4/8. Holding the spare count at 4 instead would give (128-4)/63 = 1 on
// the PPro at 4 KB, below the protocol's minimum of 2 (Validate).
//
// The NI send buffers (SendBufs, 16 x 2 KB = 32 KB) scale by the same rule
// (section 7.5's «fewer send and receive buffers»). The host receive slots
// (HostSlots, with the Recv Completions ring) do too: assumed: their
// bytes, not their count, are what the library restricts, «LCI is usually
// able to keep all received packets in its L2 cache by restricting the
// receive queue size» (section 5.3). The send descriptor ring (SendQSlots)
// holds descriptors, not packets, and does not change.
func (c Config) WithMTU(mtu int) Config {
	if mtu <= 0 || c.MTU <= 0 {
		c.MTU = mtu // Validate reports it
		return c
	}
	scale := func(n int) int { return max(n*c.MTU/mtu, 1) }
	c.RecvBufs, c.SpareBufs = scale(c.RecvBufs), scale(c.SpareBufs)
	c.SendBufs, c.HostSlots = scale(c.SendBufs), scale(c.HostSlots)
	c.MTU = mtu
	return c
}

// Name is the implementation's name as Table II composes it: the
// variant, "-hmc" with host-level multicast forwarding (I-sdma-hmc,
// section 5.4; «I-hmc is really short for I-sdma-hmc», section 5), then
// the MTU when it is not the base's (I-pio-1k, I-sdma-4k; «I-pio-1k
// refers to an LCI implementation that uses PIO-based message passing
// with the a packet size of 1 Kbyte», section 5).
func (c Config) Name() string {
	name := c.Variant.String()
	if c.Reliability != NoRetransmit {
		// I-nirx and I-hrx are I-sdma's data transfer (Table II); a PIO
		// one is I-pio-nirx.
		name = "I-" + c.Reliability.String()
		if c.Variant == PIO {
			name = "I-pio-" + c.Reliability.String()
		}
	}
	if c.HostForward {
		name += "-hmc"
	}
	if c.MTU == BaseMTU {
		return name
	}
	if c.MTU%1024 == 0 {
		return fmt.Sprintf("%s-%dk", name, c.MTU/1024)
	}
	return fmt.Sprintf("%s-%d", name, c.MTU)
}

// Window is W: in the base implementation the receive buffers each NI
// reserves for each sender: «Each NI reserves a small, fixed number W of
// NI Receive Buffers for each sender» (MY-P23).
//
// In the retransmitting variants, whose senders «share one NI receive
// buffer pool», it is the go-back-N window, the packets a sender may have
// unacknowledged towards one destination; half of it triggers the explicit
// acknowledgment, as in the base. derived: I-nirx's is the base's W, the
// NI's receive buffers over the other nodes of the cluster: the paper
// credits only the host-level protocol with a window free of the cluster
// size, «due to its host-level retransmission protocol, the window size
// for I-hrx can be kept largely independent of the cluster size (unlike
// I-sdma, which uses a conservative NI-level buffer reservation scheme).
// As a result, fewer acknowledgments need to be sent for large sequences
// of one-way transfers, explaining the lower gap of I-hrx» (section
// 5.1.3), while I-nirx's gap is above I-sdma's. It bounds the packets in
// flight, not the buffers a sender's packets hold: an I-nirx receiver
// acknowledges a packet when it has stored it, so packets waiting for
// host buffers or for forwarding can fill the shared pool («the NI receive
// queue may fill up with packets that have been delivered locally but
// still have to be forwarded», section 5.1.2). I-hrx's is the NI send
// buffers (SendBufs, 16 with the 2 KB MTU), which hold every packet it has
// not seen acknowledged («NI send buffers cannot be reused until they have
// been acknowledged», section 5.1.1), so that no window below them idles a
// sender that has buffers.
func (c Config) Window() int {
	if c.Reliability == HostRetransmit {
		return c.SendBufs
	}
	return (c.RecvBufs - c.SpareBufs) / (c.ClusterSize - 1)
}

// Validate checks the configuration against the SRAM it must fit in.
func (c Config) Validate(sram uint32) error {
	switch {
	case c.MTU < 16 || c.MTU > 65535-2*HeaderBytes || c.MTU%4 != 0:
		return fmt.Errorf("lci: MTU %d must be a multiple of 4 from 16 to %d", c.MTU, 65535-2*HeaderBytes)
	case c.ClusterSize < 2 || c.ClusterSize > 255:
		return fmt.Errorf("lci: cluster size %d must be 2 to 255", c.ClusterSize)
	case c.SpareBufs < 1:
		return fmt.Errorf("lci: %d spare receive buffers: need at least 1 for acknowledgments", c.SpareBufs)
	case c.Window() < 2:
		return fmt.Errorf("lci: %d receive buffers (%d spare) give a window of %d for %d senders: need at least 2",
			c.RecvBufs, c.SpareBufs, c.Window(), c.ClusterSize-1)
	case c.Reliability != NoRetransmit && c.Window() > MaxRxWindow:
		return fmt.Errorf("lci: %s's window of %d packets is above %d (8-bit sequence numbers)",
			c.Reliability, c.Window(), MaxRxWindow)
	case c.Reliability != NoRetransmit && (c.AckDelayCycles < 1 || c.RetransmitCycles <= c.AckDelayCycles):
		return fmt.Errorf("lci: %s's timers: delayed ack %d cycles, retransmission %d: need 1 <= delayed ack < retransmission",
			c.Reliability, c.AckDelayCycles, c.RetransmitCycles)
	case c.SendBufs < 1 || c.SendQSlots < 1 || c.HostSlots < 1:
		return fmt.Errorf("lci: %d send buffers, %d descriptor slots, %d host slots: need at least 1 each", c.SendBufs, c.SendQSlots, c.HostSlots)
	case c.WatchdogCycles < 1:
		return fmt.Errorf("lci: watchdog of %d cycles", c.WatchdogCycles)
	case c.Variant == RCPY && (c.AnonPages < 1 || c.AnonBase%PageBytes != 0):
		return fmt.Errorf("lci: I-rcpy needs at least 1 page-aligned anonymous page: %d at %#x", c.AnonPages, c.AnonBase)
	}
	if err := c.Costs.Validate(); err != nil {
		return err
	}
	if l := NewLayout(c); l.End > sram {
		return fmt.Errorf("lci: the layout needs %d bytes of SRAM (%d receive and %d send buffers of %d bytes), the card has %d",
			l.End, c.RecvBufs, c.SendBufs, l.Buf, sram)
	}
	return nil
}

// Costs are the control program's handler costs in LANai cycles. Each is
// an estimate of the code path's instruction count (assumed, from what the
// handler does; DefaultInstructions) times CPI, the cycles per instruction
// of the LANai executing this code out of SRAM (AtCPI), which is the
// card's: lanai.Config.CPI100, calibrated on each platform (the LANai 4's
// to the PPro I-sdma latency L = 10.7 µs, the LANai 9's to the P3 I-pio
// gap g = 2.8 µs).
//
// The estimates follow the paper's account of the code: «we have taken
// care to avoid unnecessary overheads using aggressive inlining and fast
// paths for the common case» (section 4). The handlers on a packet's path
// (finding the descriptor, transmitting, receiving, delivering) are short
// fast paths; the bookkeeping after the packet has moved on (freeing
// buffers, posting send completions, counting and returning credits,
// taking back host buffers) is longer and off the path. That split shows
// in Table IV: for I-pio L = g = 6.7 µs, so the NI's per-packet work equals
// the whole latency path. The instruction counts are the same on both
// platforms.
type Costs struct {
	// Dispatch: one pass of the main loop that finds an event (poll the
	// sources, branch to the module): 8 instructions.
	Dispatch int
	// HostSend: read and check a send descriptor, queue it: 20. The
	// Multicast module's descriptors pay it too, in the pass (Dispatch)
	// that takes them from the NI's own queue.
	HostSend int
	// DMAStart: program the host DMA engine (addresses, length, start): 12.
	// DMADone: take the completion and branch to its continuation: 10.
	DMAStart, DMADone int
	// Transmit: check the window, piggyback credits, write the header,
	// program the send engine: 20.
	Transmit int
	// SendDone: free the send buffer or drop a reference, stage and
	// queue the send completion, pick the next packet: 40.
	SendDone int
	// Receive: read the header, re-arm the receive engine, dispatch on
	// the type: 20.
	Receive int
	// Deliver: take a free host buffer from the Recv Completions queue,
	// write the slot header: 20.
	Deliver int
	// Release: free the receive buffer, count the credit, decide on an
	// acknowledgment, the watchdog: 40.
	Release int
	// Replenish: take note of a host buffer the host gave back: 16.
	Replenish int
	// Ack: build an explicit acknowledgment: 24. Credit: take credits
	// from an arriving header and restart blocked packets: 24.
	Ack, Credit int
	// FetchAdd: read the variable and the addend from the request's
	// header, build the reply, add: 24.
	FetchAdd int
	// Forward: make a send descriptor for one multicast child and
	// enqueue it in the NI's own send queue (read the child from the
	// forwarding table; fill in the child, length, receive buffer, tag,
	// flag and sequence; store the eight words; advance the tail): 20.
	// assumed: the count of HostSend, which reads and checks the same
	// descriptor on the other side of the queue.
	Forward int
	// Timer: the watchdog expired; compare deliveries with the host's
	// consumption: 20.
	Timer int
	// Boot: lay out the queues and arm the receive engine: 200.
	Boot int

	// The retransmitting variants' NI work (I-nirx; section 5.1.2: the
	// sliding window, timers and acknowledgments «are now all performed
	// on the NI»), charged on top of the handlers above:
	//
	// RxSend: a reliable packet admitted to its destination's window:
	// number it, append it to the unacknowledged list: 12. A transmission
	// also stores its timestamp in the list entry and puts the
	// acknowledgment owed to the destination in the header: 8 more
	// (RxStamp), also paid by every retransmission.
	RxSend, RxStamp int
	// RxRecv: check an arriving reliable packet's sequence against the
	// one expected from its sender, count it towards an acknowledgment,
	// start the sender's delayed-acknowledgment timer: 16.
	RxRecv int
	// RxAck: take an acknowledgment from an arriving header (piggybacked
	// or explicit): reconstruct the sequence, compare with the window: 12;
	// RxFree per packet it acknowledges: unlink the entry and free its
	// buffer or drop a reference, stage a send completion (what SendDone
	// does on transmit in the base implementation): 16.
	RxAck, RxFree int
	// Retransmit: requeue one unacknowledged packet after a timeout or a
	// retransmission request: 8.
	Retransmit int

	// I-rcpy's NI work (section 5.2.3; rcpyni.go), on top of the
	// handlers above:
	//
	// RcpyXlate: a page transfer's NTLB work at one end: the lookup
	// (index the entry by the virtual page number, read its two words,
	// compare the tag, test the valid and locked bits, add the page
	// offset) and the NI-level state machine that keeps the NTLB
	// consistent with the host's HTLB («Host-level and NI-level state
	// machines keep corresponding NTLB and HTLB entries consistent»,
	// section 5.2.3): 84. Paid by a page transfer's descriptor (the
	// source, with HostSend; on a send miss the same instructions write
	// the entry instead) and by an arriving RCPY packet (the destination,
	// with Receive). calibrated: 84 instructions, fitted to the PPro
	// I-rcpy L = 16.1 µs (Table IV; 16.12 at 84): the paper gives no
	// breakdown of I-rcpy's NI work, and a bare lookup (12, about
	// HostSend's reading of a descriptor) gave 10.67 µs, I-sdma's L. The
	// P3 rows it was not fitted to then come out L 9.08 (9.1), g 5.03
	// (5.1), end-to-end 9.54 (9.8) µs.
	RcpyXlate int
	// RcpyMiss: a receive miss: take an anonymous page, invalidate and
	// lock the entry, build the RCPY notification: 16. assumed: as
	// Replenish (take note of a host buffer) plus the entry's write.
	RcpyMiss int
	// RcpyUnlock: the host wrote an NTLB entry (it unlocks it after a
	// receive miss): read it, give the anonymous page back, retry packets
	// stalled on it: 16. assumed: as RcpyMiss, the same state undone.
	RcpyUnlock int
}

// DefaultCPI100 is the CPI, in hundredths, of DefaultCosts: the LANai
// 4's (lanai.LANai4; a testbench converts with the card's own CPI100).
const DefaultCPI100 = 125

// DefaultInstructions returns the handlers' instruction estimates (the
// costs at CPI 1).
func DefaultInstructions() Costs {
	return Costs{Dispatch: 8, HostSend: 20, DMAStart: 12, DMADone: 10, Transmit: 20,
		SendDone: 40, Receive: 20, Deliver: 20, Release: 40, Replenish: 16, Ack: 24, Credit: 24,
		FetchAdd: 24, Forward: 20, Timer: 20, Boot: 200,
		RxSend: 12, RxStamp: 8, RxRecv: 16, RxAck: 12, RxFree: 16, Retransmit: 8,
		RcpyXlate: 84, RcpyMiss: 16, RcpyUnlock: 16}
}

// DefaultCosts returns the instruction estimates at DefaultCPI100.
func DefaultCosts() Costs { return DefaultInstructions().AtCPI(DefaultCPI100) }

// AtCPI returns the costs c (instruction counts) in cycles at cpi100
// hundredths of a cycle per instruction, each rounded up.
func (c Costs) AtCPI(cpi100 int) Costs {
	f := func(instr int) int { return (instr*cpi100 + 99) / 100 }
	return Costs{Dispatch: f(c.Dispatch), HostSend: f(c.HostSend), DMAStart: f(c.DMAStart), DMADone: f(c.DMADone),
		Transmit: f(c.Transmit), SendDone: f(c.SendDone), Receive: f(c.Receive), Deliver: f(c.Deliver),
		Release: f(c.Release), Replenish: f(c.Replenish), Ack: f(c.Ack), Credit: f(c.Credit),
		FetchAdd: f(c.FetchAdd), Forward: f(c.Forward), Timer: f(c.Timer), Boot: f(c.Boot),
		RxSend: f(c.RxSend), RxStamp: f(c.RxStamp), RxRecv: f(c.RxRecv), RxAck: f(c.RxAck), RxFree: f(c.RxFree),
		Retransmit: f(c.Retransmit), RcpyXlate: f(c.RcpyXlate), RcpyMiss: f(c.RcpyMiss), RcpyUnlock: f(c.RcpyUnlock)}
}

// Validate checks that no cost is negative.
func (c Costs) Validate() error {
	for _, v := range []int{c.Dispatch, c.HostSend, c.DMAStart, c.DMADone, c.Transmit, c.SendDone, c.Receive,
		c.Deliver, c.Release, c.Replenish, c.Ack, c.Credit, c.FetchAdd, c.Forward, c.Timer, c.Boot,
		c.RxSend, c.RxStamp, c.RxRecv, c.RxAck, c.RxFree, c.Retransmit, c.RcpyXlate, c.RcpyMiss, c.RcpyUnlock} {
		if v < 0 {
			return fmt.Errorf("lci: negative handler cost %d in %+v", v, c)
		}
	}
	return nil
}
