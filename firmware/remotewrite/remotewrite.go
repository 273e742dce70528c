// Package remotewrite is a small NI control program for the LANai card
// (lanai.Card), the worked example of docs/firmware-tutorial.md: a
// one-sided remote write. The host writes a descriptor into a ring in NI
// SRAM; the NI fetches the data from host memory by DMA, sends it in one
// packet to the destination NI, which DMAs the payload straight into the
// host address the descriptor named and then DMAs its completion counter
// (the number of writes it has delivered) to a fixed host address, where
// the destination's host can poll it.
//
// The program is three state machines of the firmware framework:
//
//	send  IDLE -> FETCH -> TX -> IDLE: one descriptor at a time
//	recv  ARMED -> DELIVER -> COUNT -> ARMED: one packet at a time
//	dma   IDLE <-> BUSY: the host DMA engine, shared by send and recv
//
// There is no flow control in the firmware. The sending NI handles one
// descriptor at a time (descriptors the host writes meanwhile wait in the
// ring, and the ring is read again when the packet has left), and the
// receiving NI has one receive buffer, which it re-arms only once the
// payload and the counter are in host memory; until then the Myrinet
// link's STOP/GO flow control holds the next packet in the network. The
// host must not have more than Config.Slots descriptors unread in the ring
// (nothing checks that: a later descriptor would overwrite an earlier one).
package remotewrite

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/rtl/env"
)

// Config is the control program's configuration.
type Config struct {
	// Slots is the descriptor ring's size. assumed: 16.
	Slots int `toml:"slots"`
	// MaxLen is the largest write in bytes: the payload room of the NI's
	// one send and one receive buffer. assumed: 4096.
	MaxLen int `toml:"max_len"`
	// Counter is the host address every NI DMAs its 4-byte completion
	// counter to (the same on every node).
	Counter uint64 `toml:"counter"`
	// Costs are the handlers' cycle counts.
	Costs Costs `toml:"costs"`
}

// Costs are the control program's handler costs in LANai cycles. None is
// measured: each is an instruction count estimated from what the handler
// does, times the CPI of 1.25 that firmware/lci's calibration found for the
// LANai executing out of SRAM (see lci.Costs), rounded up.
type Costs struct {
	// Dispatch is one pass of the main loop that finds an event.
	// assumed: 8 instructions (as lci's Dispatch): 10 cycles.
	Dispatch int `toml:"dispatch"`
	// Desc reads and checks a descriptor. assumed: 16 instructions: 20.
	Desc int `toml:"desc"`
	// DMAStart programs the host DMA engine (addresses, length, start);
	// DMADone takes its completion and branches to the continuation.
	// assumed: 12 and 10 instructions (as lci's): 15 and 13.
	DMAStart int `toml:"dma_start"`
	DMADone  int `toml:"dma_done"`
	// Transmit writes the packet header and programs the send engine.
	// assumed: 12 instructions: 15.
	Transmit int `toml:"transmit"`
	// SendDone takes the send engine's completion. assumed: 6: 8.
	SendDone int `toml:"send_done"`
	// Receive reads and checks a packet header. assumed: 12: 15.
	Receive int `toml:"receive"`
	// Count bumps the completion counter and stages it. assumed: 6: 8.
	Count int `toml:"count"`
	// Boot lays out SRAM and arms the receive engine. assumed: 80: 100.
	Boot int `toml:"boot"`
}

// DefaultConfig is 16 descriptor slots, 4 KiB writes, the counter at host
// address 0x1000 and DefaultCosts.
func DefaultConfig() Config {
	return Config{Slots: 16, MaxLen: 4096, Counter: 0x1000, Costs: DefaultCosts()}
}

// DefaultCosts returns the estimated costs (see Costs).
func DefaultCosts() Costs {
	return Costs{Dispatch: 10, Desc: 20, DMAStart: 15, DMADone: 13, Transmit: 15, SendDone: 8, Receive: 15, Count: 8, Boot: 100}
}

// Validate checks the configuration against the SRAM it must fit in.
func (c Config) Validate(sram uint32) error {
	k := c.Costs
	for _, v := range []int{k.Dispatch, k.Desc, k.DMAStart, k.DMADone, k.Transmit, k.SendDone, k.Receive, k.Count, k.Boot} {
		if v < 0 {
			return fmt.Errorf("remotewrite: negative cost %d in %+v", v, k)
		}
	}
	switch {
	case c.Slots < 1:
		return fmt.Errorf("remotewrite: slots = %d: need at least 1", c.Slots)
	case c.MaxLen < 4 || c.MaxLen > 1<<20:
		return fmt.Errorf("remotewrite: max_len = %d: need 4 to %d", c.MaxLen, 1<<20)
	case c.Counter%4 != 0:
		return fmt.Errorf("remotewrite: counter = %#x: need a 4-byte aligned host address", c.Counter)
	}
	if l := NewLayout(c); l.End > sram {
		return fmt.Errorf("remotewrite: the layout needs %d bytes of SRAM, the card has %d", l.End, sram)
	}
	return nil
}

// DescBytes is the size of a descriptor. Its layout:
//
//	[0:8] host source address  [8:16] destination's host address
//	[16:20] length  [20] destination node  [21:28] unused
//	[28:32] sequence (1, 2, ...): the slot's valid mark
//
// The mark is the last word, for the reason of firmware/lci's Desc: the
// host's write-combined burst writes ascending addresses, so a program
// that sees the mark sees the whole descriptor.
const DescBytes = 32

// Desc is a remote write request.
type Desc struct {
	Src, Dst uint64 // host addresses: here, and at the destination
	Len      uint32
	Node     uint8 // destination node
	Seq      uint32
}

// Encode returns the descriptor's bytes.
func (d Desc) Encode() []byte {
	b := make([]byte, DescBytes)
	binary.LittleEndian.PutUint64(b[0:], d.Src)
	binary.LittleEndian.PutUint64(b[8:], d.Dst)
	binary.LittleEndian.PutUint32(b[16:], d.Len)
	b[20] = d.Node
	binary.LittleEndian.PutUint32(b[28:], d.Seq)
	return b
}

// DecodeDesc reads a descriptor.
func DecodeDesc(b []byte) Desc {
	return Desc{Src: binary.LittleEndian.Uint64(b[0:]), Dst: binary.LittleEndian.Uint64(b[8:]),
		Len: binary.LittleEndian.Uint32(b[16:]), Node: b[20], Seq: binary.LittleEndian.Uint32(b[28:])}
}

// HeaderBytes is the size of the packet header: [0:8] destination's host
// address, [8:12] payload length, [12] source node, [13:16] unused.
const HeaderBytes = 16

// Layout is where the program keeps things in SRAM.
type Layout struct {
	Ring    uint32 // the descriptor ring, watched for host writes
	Send    uint32 // send buffer: header, then payload
	Recv    uint32 // receive buffer
	Counter uint32 // the counter, staged for its DMA
	End     uint32
}

// NewLayout lays out SRAM for c.
func NewLayout(c Config) Layout {
	align := func(n int) uint32 { return uint32((n + 63) &^ 63) }
	buf := align(HeaderBytes + c.MaxLen)
	l := Layout{Ring: 0, Send: align(c.Slots * DescBytes)}
	l.Recv = l.Send + buf
	l.Counter = l.Recv + buf
	l.End = l.Counter + 64
	return l
}

// Machine states.
const (
	Idle    firmware.State = "IDLE"
	Fetch   firmware.State = "FETCH"
	TX      firmware.State = "TX"
	Armed   firmware.State = "ARMED"
	Deliver firmware.State = "DELIVER"
	Count   firmware.State = "COUNT"
	Busy    firmware.State = "BUSY"
)

type jobKind uint8

const (
	jobFetch   jobKind = iota // descriptor data into the send buffer
	jobDeliver                // payload to the destination host address
	jobCount                  // counter to the host
)

type job struct {
	kind jobKind
	d    firmware.HostDMA
}

// Program is one NI's remote write control program.
type Program struct {
	name string
	cfg  Config
	lay  Layout

	send, recv, dma *firmware.Machine

	next  uint32 // sequence of the next descriptor
	cur   Desc   // the descriptor being sent
	jobs  []job  // waiting for the host DMA engine
	busy  job    // on the engine
	count uint32 // writes delivered to this host
}

// New creates a program; name prefixes its machines (N0.NI.FW:
// N0.NI.FW.send, under the NI that runs it).
func New(e *env.Env, name string, cfg Config) (*Program, error) {
	p := &Program{name: name, cfg: cfg, lay: NewLayout(cfg), next: 1}
	k := cfg.Costs
	var err error
	mk := func(m string, init firmware.State, rows []firmware.Transition) *firmware.Machine {
		if err != nil {
			return nil
		}
		var fm *firmware.Machine
		fm, err = firmware.NewMachine(e, name+"."+m, init, rows)
		return fm
	}
	p.send = mk("send", Idle, []firmware.Transition{
		{From: Idle, On: "poll", Do: p.poll},
		{From: Idle, On: "desc", To: Fetch, Cost: k.Desc, Do: p.fetch},
		{From: Idle, On: "reject", Cost: k.Desc, Do: p.reject},
		{From: Fetch, On: "poll"}, // busy: the ring is read again after TX
		{From: Fetch, On: "fetched", To: TX, Cost: k.Transmit, Do: p.transmit},
		{From: TX, On: "poll"},
		{From: TX, On: "sent", To: Idle, Cost: k.SendDone, Do: p.poll},
	})
	p.recv = mk("recv", Armed, []firmware.Transition{
		{From: Armed, On: "packet", Cost: k.Receive, Do: p.receive},
		{From: Armed, On: "deliver", To: Deliver, Do: p.deliver},
		{From: Armed, On: "drop", Do: p.arm},
		{From: Deliver, On: "delivered", To: Count, Cost: k.Count, Do: p.bump},
		{From: Count, On: "counted", To: Armed, Do: p.arm},
	})
	p.dma = mk("dma", Idle, []firmware.Transition{
		{From: Idle, On: "job", To: Busy, Cost: k.DMAStart, Do: p.start},
		{From: Busy, On: "job", Do: func(_ *firmware.Ctx, a any) { p.jobs = append(p.jobs, a.(job)) }},
		{From: Busy, On: "done", To: Idle, Cost: k.DMADone, Do: p.done},
	})
	return p, err
}

// Layout returns the SRAM layout (the host needs the ring's address).
func (p *Program) Layout() Layout { return p.lay }

// Delivered returns the writes delivered to this NI's host.
func (p *Program) Delivered() uint32 { return p.count }

// PollOrder implements firmware.Program: the receive side first (an
// unarmed receive engine holds packets in the network), then DMA and send
// completions, then the host's ring.
func (p *Program) PollOrder() []firmware.EventKind {
	return []firmware.EventKind{firmware.RecvDone, firmware.HostDMADone, firmware.SendDone, firmware.HostWrite}
}

// Machines implements firmware.Program.
func (p *Program) Machines() []*firmware.Machine { return []*firmware.Machine{p.send, p.recv, p.dma} }

// Idle implements firmware.Program.
func (p *Program) Idle() bool {
	return p.send.State() == Idle && p.recv.State() == Armed && p.dma.State() == Idle && len(p.jobs) == 0
}

// State implements firmware.Program.
func (p *Program) State() string {
	return fmt.Sprintf("send %s, recv %s, dma %s with %d jobs queued", p.send.State(), p.recv.State(), p.dma.State(), len(p.jobs))
}

// Boot implements firmware.Program: watch the ring, arm the receive engine.
func (p *Program) Boot(c *firmware.Ctx) error {
	if err := p.cfg.Validate(c.SRAMSize()); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	c.Charge(p.cfg.Costs.Boot)
	c.Watch(p.lay.Ring, p.cfg.Slots*DescBytes)
	c.ArmRecv(p.lay.Recv, HeaderBytes+p.cfg.MaxLen)
	return nil
}

// Handle implements firmware.Program: one pass of the main loop.
func (p *Program) Handle(c *firmware.Ctx, ev firmware.HWEvent) {
	c.Charge(p.cfg.Costs.Dispatch)
	switch ev.Kind {
	case firmware.RecvDone:
		c.Fire(p.recv, "packet", ev)
	case firmware.HostDMADone:
		c.Fire(p.dma, "done", nil)
	case firmware.SendDone:
		c.Fire(p.send, "sent", nil)
	case firmware.HostWrite:
		c.Fire(p.send, "poll", nil)
	}
}

// --- send ---

// poll reads the ring from the next expected slot: the first good
// descriptor starts a fetch; bad ones are rejected on the way.
func (p *Program) poll(c *firmware.Ctx, _ any) {
	for {
		slot := p.lay.Ring + uint32(int(p.next-1)%p.cfg.Slots*DescBytes)
		d := DecodeDesc(c.Read(slot, DescBytes))
		if d.Seq != p.next {
			return // not written yet
		}
		p.next++
		if int(d.Node) >= c.Nodes() || int(d.Node) == c.Node() || d.Len < 1 || int(d.Len) > p.cfg.MaxLen {
			c.Fire(p.send, "reject", d)
			continue
		}
		c.Fire(p.send, "desc", d)
		return
	}
}

func (p *Program) reject(c *firmware.Ctx, a any) {
	c.Env.Report(c.Now, p.name, "rw.desc", "bad descriptor %+v: node %d of %d, length 1 to %d", a.(Desc), c.Node(), c.Nodes(), p.cfg.MaxLen)
}

func (p *Program) fetch(c *firmware.Ctx, a any) {
	p.cur = a.(Desc)
	c.Fire(p.dma, "job", job{kind: jobFetch, d: firmware.HostDMA{Dir: firmware.ToNI, HostAddr: p.cur.Src,
		SRAM: p.lay.Send + HeaderBytes, Len: int(p.cur.Len)}})
}

func (p *Program) transmit(c *firmware.Ctx, _ any) {
	h := make([]byte, HeaderBytes)
	binary.LittleEndian.PutUint64(h[0:], p.cur.Dst)
	binary.LittleEndian.PutUint32(h[8:], p.cur.Len)
	h[12] = uint8(c.Node())
	c.Write(p.lay.Send, h)
	c.StartSend(firmware.Packet{Dst: int(p.cur.Node), SRAM: p.lay.Send, Len: HeaderBytes + int(p.cur.Len)})
}

// --- recv ---

func (p *Program) receive(c *firmware.Ctx, a any) {
	ev := a.(firmware.HWEvent)
	h := c.Read(ev.Addr, HeaderBytes)
	to, n := binary.LittleEndian.Uint64(h[0:]), binary.LittleEndian.Uint32(h[8:])
	if ev.Bad || n < 1 || ev.Len != HeaderBytes+int(n) {
		c.Env.Report(c.Now, p.name, "rw.packet", "dropped a packet of %d bytes from node %d (header length %d, CRC bad %v)", ev.Len, h[12], n, ev.Bad)
		c.Fire(p.recv, "drop", nil)
		return
	}
	c.Fire(p.recv, "deliver", firmware.HostDMA{Dir: firmware.ToHost, HostAddr: to, SRAM: ev.Addr + HeaderBytes, Len: int(n)})
}

func (p *Program) deliver(c *firmware.Ctx, a any) {
	c.Fire(p.dma, "job", job{kind: jobDeliver, d: a.(firmware.HostDMA)})
}

// bump counts the delivery and sends the counter after the payload (the
// host DMA engine runs one transfer at a time, in order, and PCI keeps
// posted writes in order, so the counter lands after the data).
func (p *Program) bump(c *firmware.Ctx, _ any) {
	p.count++
	c.Write(p.lay.Counter, binary.LittleEndian.AppendUint32(nil, p.count))
	c.Fire(p.dma, "job", job{kind: jobCount, d: firmware.HostDMA{Dir: firmware.ToHost, HostAddr: p.cfg.Counter, SRAM: p.lay.Counter, Len: 4}})
}

func (p *Program) arm(c *firmware.Ctx, _ any) { c.ArmRecv(p.lay.Recv, HeaderBytes+p.cfg.MaxLen) }

// --- dma: the host DMA engine, one transfer at a time ---

func (p *Program) start(c *firmware.Ctx, a any) {
	if j, ok := a.(job); ok {
		p.jobs = append(p.jobs, j)
	}
	p.busy, p.jobs = p.jobs[0], p.jobs[1:]
	c.StartHostDMA(p.busy.d)
}

func (p *Program) done(c *firmware.Ctx, _ any) {
	switch p.busy.kind {
	case jobFetch:
		c.Fire(p.send, "fetched", nil)
	case jobDeliver:
		c.Fire(p.recv, "delivered", nil)
	case jobCount:
		c.Fire(p.recv, "counted", nil)
	}
	if len(p.jobs) > 0 && p.dma.State() == Idle {
		c.Fire(p.dma, "job", nil)
	}
}
