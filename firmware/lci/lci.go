// Package lci is the LCI control program of lci-myrinet-cluster-protocols.txt
// section 4, the base implementation I-sdma, and its PIO variant I-pio
// (section 5.2.1), and their host-level multicast variants I-sdma-hmc and
// I-pio-hmc (section 5.4, Config.HostForward), written as the modules of
// figure 4, each a state machine of the firmware framework:
//
//	hsq    Host Send Queue Mgt: finds send descriptors the host wrote,
//	       fetches I-sdma data into the NI send buffer by DMA; takes the
//	       Multicast module's descriptors from the NI's own queue
//	fc     Reliability / Flow Control and Send Queue Mgt: a credit-based
//	       sliding window per destination, W reserved receive buffers per
//	       sender, blocked packets queued per destination
//	tx     Unicast: drives the send DMA engine, piggybacks credits
//	rq     Recv Queue Mgt and Recv Dispatch: re-arms the receive engine,
//	       dispatches on the packet type
//	mc     Multicast forwarding along the spanning tree: a send
//	       descriptor per child, enqueued like the host's
//	fa     Fetch-and-add on the NI's variable
//	hrq    Host Recv Queue Mgt: free host buffers from the Recv Completions
//	       queue
//	dma    DMA to Host: the host DMA engine, one transfer at a time
//	timer  the polling watchdog
//
// The base implementation «assumes reliable network hardware with FIFO
// communication paths. The implementation therefore never retransmits»,
// and «aborts if it detects that one of these assumptions has been
// violated (e.g., if it discovers a bad CRC on a packet)»: here a bad CRC
// is a checker error naming the link and the packet, and the NI stops.
package lci

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/waves"
)

// Test-only faults (see env.DeclareMutation).
var (
	mutOverdraw = env.DeclareMutation("lci.overdraw",
		"the flow control lets a sender go N credits below zero: W+N packets in flight to a destination "+
			"(caught by the receiver's window checker, lci.window)")
	mutExtraCredit = env.DeclareMutation("lci.extracredit",
		"every Nth receive buffer released is counted twice towards the acknowledgment: the sender gets a credit "+
			"it never spent (caught by lci.credits)")
	mutCorrupt = env.DeclareMutation("lci.corrupt",
		"the NI flips a bit of every Nth non-empty packet it delivers to its host, after the link's CRC check "+
			"(caught by the host's data check, lci.data)")
	mutHMCEarly = env.DeclareMutation("lci.hmcearly",
		"I-sdma-hmc: a host forward's send buffer is reported free after its first child's send, not its last "+
			"(the next child's send finds its references spent: caught by lci.refs)")
)

// Program is one NI's LCI control program.
type Program struct {
	env    *env.Env
	name   string
	cfg    Config
	layout Layout
	w      int
	node   int
	n      int
	link   string

	hsq, fc, tx, rq, mc, fa, hrq, dmaM, timer *firmware.Machine
	// rx is I-nirx's retransmission protocol (nil in the other variants)
	// and rxm its machine: acknowledgments and the shared timer.
	rx  *rxState
	rxm *firmware.Machine
	// hrx is set in I-hrx, whose protocol the host library runs
	// (hrx.go): the NI passes the host's headers, keeps no credits and
	// delivers every packet with a good CRC.
	hrx *hrxNI
	// rcpy is I-rcpy's NI state (rcpyni.go; nil in the other variants)
	// and rcm its machine.
	rcpy *rcpyNI
	rcm  *firmware.Machine

	nextDesc uint32 // sequence of the next send descriptor
	// The NI's own send queue (Layout.FwdQ): sequences of the next
	// descriptor the Multicast module writes and of the next Host Send
	// Queue Mgt reads.
	fwdNext, fwdRead uint32
	fetches          int // I-sdma data fetches in flight
	sq               []sqEntry

	credits []int // per destination
	owed    []int // credits to return, per source
	held    []int // receive buffers holding a source's reserved packets
	blocked []queue.Queue[txItem]
	nblock  int
	seqOut  []uint32
	ready   queue.Queue[txItem]
	txBusy  bool
	txCur   txItem
	// txStarted: the handler running has started the send engine.
	txStarted bool

	jobs    queue.Queue[dmaJob]
	dmaBusy bool
	dmaCur  dmaJob

	freeRecv []int
	recvRef  []int
	recvHdr  []Header
	armed    bool
	armedBuf int

	freeCtl  []int
	sendRefs []int

	freeNext  uint32           // sequence of the next Recv Completions record
	hostWait  queue.Queue[int] // receive buffers, or -(send buffer+1) for completions
	delivered uint32           // packets handed to the host (the slot flag)

	faValue uint32
	faLocal []uint32 // the own host's fetch-and-add addends waiting for a receive buffer
	counts  Counts

	watchdog bool
	aborted  bool

	// test-only faults: credits a sender may overdraw; every
	// extraEvery-th release counts twice; every corruptEvery-th delivery
	// is corrupted
	overdraw, extraEvery, releases int
	corruptEvery, deliveries       int
	hmcEarly                       bool

	sigCredits           []*waves.Signal // per destination
	sigReady, sigBlocked *waves.Signal
}

type itemKind uint8

const (
	itemSend    itemKind = iota // from an NI send buffer
	itemForward                 // a multicast forward from a receive buffer
	itemCtl                     // an ack or F&A reply from a control buffer
)

type txItem struct {
	kind itemKind
	dst  int
	buf  int
	hdr  Header
	// ent is the packet's window entry in I-nirx (nil otherwise, and for
	// acknowledgments).
	ent *rxEntry
}

type jobKind uint8

const (
	jobFetch jobKind = iota
	jobDeliver
	jobCompletion
	// jobRcpyFetch, jobRcpyData follow (rcpyni.go).
)

type dmaJob struct {
	kind jobKind
	d    firmware.HostDMA
	ref  int // send buffer (fetch) or receive buffer (deliver)
}

// New creates the control program of node (of nodes) in a cluster.
func New(e *env.Env, name string, cfg Config, node, nodes int, linkName string) (*Program, error) {
	if nodes > cfg.ClusterSize {
		return nil, fmt.Errorf("%s: %d nodes exceed the cluster size %d the buffers are reserved for", name, nodes, cfg.ClusterSize)
	}
	p := &Program{env: e, name: name, cfg: cfg, layout: NewLayout(cfg), w: cfg.Window(), node: node, n: nodes, link: linkName,
		overdraw: e.Mutation(mutOverdraw), extraEvery: e.Mutation(mutExtraCredit), corruptEvery: e.Mutation(mutCorrupt),
		hmcEarly: e.Mutation(mutHMCEarly) > 0}
	p.credits = make([]int, nodes)
	p.owed = make([]int, nodes)
	p.held = make([]int, nodes)
	p.seqOut = make([]uint32, nodes)
	p.blocked = make([]queue.Queue[txItem], nodes)
	// Waveforms: fc.credits<i> is the send credits left toward node i,
	// fc.blocked the sends waiting for credits (all destinations), and
	// tx.ready the packets ready to transmit.
	for i := range p.credits {
		p.credits[i] = p.w
		s := e.Waves.Integer(name+".fc", fmt.Sprintf("credits%d", i), 16)
		s.Set(0, uint64(p.w))
		p.sigCredits = append(p.sigCredits, s)
	}
	p.sigReady = e.Waves.Integer(name+".tx", "ready", 16)
	p.sigBlocked = e.Waves.Integer(name+".fc", "blocked", 16)
	p.recvRef = make([]int, cfg.RecvBufs)
	p.recvHdr = make([]Header, cfg.RecvBufs)
	for i := cfg.RecvBufs - 1; i >= 0; i-- {
		p.freeRecv = append(p.freeRecv, i)
	}
	for i := ctlBufs - 1; i >= 0; i-- {
		p.freeCtl = append(p.freeCtl, i)
	}
	p.sendRefs = make([]int, cfg.SendBufs)
	p.nextDesc = 1
	p.fwdNext, p.fwdRead = 1, 1
	p.freeNext = 1
	switch cfg.Reliability {
	case NIRetransmit:
		p.rx = newRxState(e, cfg, nodes)
	case HostRetransmit:
		p.hrx = &hrxNI{}
	}
	if cfg.Variant == RCPY {
		p.rcpy = newRcpyNI(e, cfg, p.layout, node, nodes)
	}
	if err := p.build(e); err != nil {
		return nil, err
	}
	return p, nil
}

// Layout returns the SRAM layout.
func (p *Program) Layout() Layout { return p.layout }

// PollOrder implements firmware.Program: the receive side first (a full
// receive engine stalls the network), then DMA completions, transmit
// completions, the host's queues and the timer.
func (p *Program) PollOrder() []firmware.EventKind {
	if p.rx != nil {
		return rxPollOrder
	}
	return []firmware.EventKind{firmware.RecvDone, firmware.HostDMADone, firmware.SendDone, firmware.HostWrite, firmware.Timer}
}

// Machines implements firmware.Program.
func (p *Program) Machines() []*firmware.Machine {
	ms := []*firmware.Machine{p.hsq, p.fc, p.tx, p.rq, p.mc, p.fa, p.hrq, p.dmaM, p.timer}
	if p.rxm != nil {
		ms = append(ms, p.rxm)
	}
	if p.rcm != nil {
		ms = append(ms, p.rcm)
	}
	return ms
}

// Idle implements firmware.Program.
func (p *Program) Idle() bool {
	return p.fetches == 0 && p.fwdRead == p.fwdNext && p.nblock == 0 && p.ready.Len() == 0 && !p.txBusy && p.jobs.Len() == 0 && len(p.faLocal) == 0 &&
		!p.dmaBusy && p.hostWait.Len() == 0 && len(p.freeRecv) == p.cfg.RecvBufs-boolInt(p.armed) && p.rxQuiet() &&
		(p.hrx == nil || len(p.hrx.acks) == 0)
}

// rxQuiet: I-nirx holds no unacknowledged packet, owes no
// acknowledgment and no retransmission request.
func (p *Program) rxQuiet() bool {
	if p.rx == nil {
		return true
	}
	for i := range p.n {
		if len(p.rx.unacked[i]) > 0 || p.rx.owed[i] > 0 || p.rx.nack[i] {
			return false
		}
	}
	return true
}

// State implements firmware.Program.
func (p *Program) State() string {
	s := fmt.Sprintf("%d fetches, %d forwards queued, %d blocked, %d ready, tx busy %v, %d DMA jobs, DMA busy %v, %d waiting for host buffers, %d receive buffers free",
		p.fetches, p.fwdNext-p.fwdRead, p.nblock, p.ready.Len(), p.txBusy, p.jobs.Len(), p.dmaBusy, p.hostWait.Len(), len(p.freeRecv))
	if p.rx != nil {
		owed, nacks := 0, 0
		for i := range p.n {
			owed += p.rx.owed[i]
			nacks += boolInt(p.rx.nack[i])
		}
		s += fmt.Sprintf(", %d unacknowledged, %d acknowledgments owed, %d retransmission requests owed", p.Unacked(), owed, nacks)
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Credits returns the send credits towards dst (for tests and waves).
func (p *Program) Credits(dst int) int { return p.credits[dst] }

// Counts are what an NI has done, for tests and reports (they time
// nothing).
type Counts struct {
	// Fetches are the I-sdma DMA fetches of a packet's data from host
	// memory into an NI send buffer (the host-to-NI data transfers of
	// I-sdma; I-pio's are the host's PIO).
	Fetches int
	// DataSends are the packets put on the send engine from a send or
	// receive buffer (data, multicasts, forwards, F&A requests);
	// CtlSends the acknowledgments and F&A replies.
	DataSends, CtlSends int
}

// Counts returns the NI's counts so far.
func (p *Program) Counts() Counts { return p.counts }

// FetchAddValue returns the NI's fetch-and-add variable.
func (p *Program) FetchAddValue() uint32 { return p.faValue }

// Boot implements firmware.Program: read the control block the host wrote,
// watch the host's queues, arm the receive engine.
func (p *Program) Boot(c *firmware.Ctx) error {
	if err := p.cfg.Validate(c.SRAMSize()); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	c.Charge(p.cfg.Costs.Boot)
	b := c.Read(0, 16)
	p.watchdog = p.cfg.Interrupts || binary.LittleEndian.Uint32(b[CtlFlags:])&1 != 0
	c.Watch(p.layout.SendQ, p.layout.SendQSlots*DescBytes)
	c.Watch(p.layout.FreeQ, p.layout.FreeQSlots*FreeBytes)
	if p.rcpy != nil {
		c.Watch(p.layout.NTLB, NTLBBytes) // the host's unlocks
	}
	p.arm(c)
	return nil
}
