// Package lanai models the Myrinet network interface card of
// lci-myrinet-cluster-protocols.txt section 3 (figure 3): «a custom RISC
// processor, a modest amount of SRAM memory, and three DMA engines. ... One
// DMA engine transfers data between host memory and NI memory; the two
// others transfer packets from NI memory to the network and vice versa»
// (MY-P13). «All inbound and outbound network packets must also be staged
// through this memory» (MY-P15). CRCs are generated and checked by the
// link hardware (rtl/link, MY-P16).
//
// The card is built from clocked parts:
//   - SRAM: an rtl/mem Memory with real contents and five ports (the
//     processor, the host DMA engine, the send and receive DMA engines, and
//     the PCI slave window through which the host writes descriptors and
//     PIO data), arbitrated round-robin one transaction at a time;
//   - the host DMA engine: an rtl/dma Engine, a PCI bus master between host
//     memory and SRAM;
//   - the send DMA engine: SRAM to the link, one packet at a time, at link
//     rate, with the source route in front;
//   - the receive DMA engine: the link to an SRAM buffer the control program
//     armed it with; while it has none, the link's STOP/GO flow control
//     holds the packet in the network;
//   - the processor, which runs a firmware.Program: it polls its event
//     sources in the program's order, runs one handler at a time, stalls on
//     the SRAM port for the handler's SRAM traffic, spends its cycles, then
//     issues its commands;
//   - an interval timer and an interrupt line to the host.
//
// The card knows nothing of any particular control program: firmware/lci
// and the tutorial's firmware run on it unchanged.
package lanai

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/rtl/netdma"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/waves"
)

// SRAM ports.
const (
	portProc = iota
	portHostDMA
	portSend
	portRecv
	portPCI
	numPorts
)

// Builder configures a Card.
type Builder struct {
	env       *env.Env
	cfg       Config
	node      int
	nodes     int
	prog      firmware.Program
	width     int
	linkClock clock.Clock
	flitBytes int
}

// MakeBuilder returns a builder for a LANai 4.1 card with a 4-byte PCI
// window.
func MakeBuilder() Builder { return Builder{cfg: LANai4(), nodes: 1, width: 4, flitBytes: 4} }

// WithEnv sets the simulation (required).
func (b Builder) WithEnv(e *env.Env) Builder { b.env = e; return b }

// WithConfig sets the hardware.
func (b Builder) WithConfig(c Config) Builder { b.cfg = c; return b }

// WithNode sets the card's node number and the cluster size.
func (b Builder) WithNode(node, nodes int) Builder { b.node, b.nodes = node, nodes; return b }

// WithProgram sets the control program (required).
func (b Builder) WithProgram(p firmware.Program) Builder { b.prog = p; return b }

// WithBusWidth sets the PCI data path width (4 or 8 bytes): the width of
// the SRAM ports.
func (b Builder) WithBusWidth(n int) Builder { b.width = n; return b }

// WithLink sets the network link clock (the network DMA engines run on
// it) and the flit size the card sends.
func (b Builder) WithLink(c clock.Clock, flitBytes int) Builder {
	b.linkClock, b.flitBytes = c, flitBytes
	return b
}

// Build creates the card; attach it with AttachPCI and ConnectLink, then
// Start it.
func (b Builder) Build(name string) (*Card, error) {
	switch {
	case b.env == nil:
		return nil, errors.New(name + ": no env")
	case b.prog == nil:
		return nil, errors.New(name + ": no control program")
	case !b.linkClock.Valid():
		return nil, errors.New(name + ": no link clock")
	case b.node < 0 || b.node >= b.nodes:
		return nil, fmt.Errorf("%s: node %d outside a cluster of %d", name, b.node, b.nodes)
	case b.flitBytes < 1:
		return nil, fmt.Errorf("%s: flit of %d bytes", name, b.flitBytes)
	case b.width < 1 || b.width&(b.width-1) != 0:
		return nil, fmt.Errorf("%s: PCI window width %d bytes must be a power of two", name, b.width)
	}
	if err := b.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &Card{env: b.env, cfg: b.cfg, node: b.node, nodes: b.nodes, prog: b.prog}
	c.Ticking = clock.NewTicking(name, b.env.Engine, b.cfg.Clock, c)
	// The processor and DMA ports are as wide as the SRAM's data path;
	// the PCI slave port is as wide as the bus.
	sw := b.cfg.SRAMBytesPerCycle
	sram, err := mem.MakeBuilder().WithEnv(b.env).WithClock(b.cfg.Clock).WithSize(b.cfg.SRAMBytes).
		WithPorts(numPorts).WithPortWidths(sw, sw, sw, sw, b.width).WithBytesPerCycle(b.cfg.SRAMBytesPerCycle).
		WithLatency(b.cfg.SRAMLatency).Build(name + ".SRAM")
	if err != nil {
		return nil, err
	}
	c.sram = sram
	sram.Port(portProc).ConnectMaster(c)
	sram.OnWrite(c.sramWritten)
	c.hdma, err = dma.MakeBuilder().WithEnv(b.env).WithClock(b.cfg.Clock).WithQueueDepth(b.cfg.HostDMAQueue).
		WithSetupCycles(b.cfg.HostDMASetup).WithBurst(b.cfg.HostDMABurst).WithBuffer(2 * b.cfg.HostDMABurst).
		WithOutstandingReads(2).WithPostedWrites(true).WithClass("hostdma").Build(name + ".HDMA")
	if err != nil {
		return nil, err
	}
	c.hdmaSRAM = c.hdma.AddMemPort("sram", sram.Port(portHostDMA))
	c.hdma.OnDone(c.hostDMADone)
	// The send and receive DMA engines (MY-P13) move packets between SRAM
	// and the link, on the link clock.
	c.send, err = netdma.MakeSendBuilder().WithEnv(b.env).WithClock(b.linkClock).WithMemory(sram.Port(portSend)).
		WithFlitBytes(b.flitBytes).WithBurst(b.cfg.NetBurst).WithQueueDepth(b.cfg.SendQueue).WithNode(b.node).
		Build(name + ".SDMA")
	if err != nil {
		return nil, err
	}
	c.send.OnSent(func(now clock.Time, p netdma.Packet) {
		c.raise(now, firmware.HWEvent{Kind: firmware.SendDone, Tag: p.Tag, Addr: uint32(p.Addr), Len: p.Len})
	})
	c.recv, err = netdma.MakeRecvBuilder().WithEnv(b.env).WithClock(b.linkClock).WithMemory(sram.Port(portRecv)).
		WithBurst(b.cfg.NetBurst).Build(name + ".RDMA")
	if err != nil {
		return nil, err
	}
	c.recv.OnReceived(func(now clock.Time, d netdma.Received) {
		c.raise(now, firmware.HWEvent{Kind: firmware.RecvDone, Addr: uint32(d.Addr), Len: d.Len, Bad: d.Bad, Tag: d.Packet, Src: d.Src})
	})
	reg := b.env.Waves
	// cpu.state: BOOT, IDLE, the kind of the event being handled, SRAM or
	// SPIN; cpu.events_pending: events raised and not yet handled;
	// interrupts: host interrupts raised so far.
	c.sigState = reg.String(name+".cpu", "state")
	c.sigState.SetString(0, "BOOT")
	c.sigEvents = reg.Integer(name+".cpu", "events_pending", 16)
	c.sigIRQ = reg.Integer(name, "interrupts", 32)
	b.env.Register(c)
	return c, nil
}

// Card is a LANai network interface card.
type Card struct {
	*clock.Ticking
	env   *env.Env
	cfg   Config
	node  int
	nodes int
	prog  firmware.Program

	sram     *mem.Memory
	hdma     *dma.Engine
	hdmaSRAM int
	hdmaPCI  int
	pciBase  uint64
	send     *netdma.Sender
	recv     *netdma.Receiver
	route    func(dst int) []byte
	onIRQ    func(now clock.Time)

	// Processor.
	ctx      *firmware.Ctx
	order    []firmware.EventKind
	events   [firmware.NumEventKinds]queue.Queue[firmware.HWEvent]
	pending  int
	phase    phase
	sramLeft int // bytes of the handler's SRAM access not yet returned
	readyAt  clock.Time
	booted   bool
	spinning bool // polling only spinOn until it fires
	spinOn   firmware.EventKind
	spinTime clock.Time
	handled  uint64
	busy     clock.Time // time spent in handlers
	began    clock.Time

	hdmaTags queue.Queue[uint64]
	watches  [][2]uint32
	watchHit []bool // a HostWrite for the range is waiting

	timerOn bool
	timerAt clock.Time
	irqs    uint64

	sigState, sigEvents, sigIRQ *waves.Signal
}

type phase uint8

const (
	phIdle phase = iota
	phSRAM
	phRun
)

// AttachPCI makes the card a PCI device: its SRAM appears on the bus at
// base (the PIO window) and its host DMA engine becomes a bus master.
func (c *Card) AttachPCI(b *bus.Bus, base uint64) error {
	if err := b.AddTarget(c.Name()+".SRAM", base, c.cfg.SRAMBytes, c.sram.Port(portPCI)); err != nil {
		return err
	}
	if err := b.SetTargetWait(c.Name()+".SRAM", c.cfg.PCISlaveWait); err != nil {
		return err
	}
	ch, err := b.AddMaster(c.Name() + ".HDMA")
	if err != nil {
		return err
	}
	c.hdmaPCI = c.hdma.AddMemPort("pci", ch)
	c.pciBase = base
	return nil
}

// ConnectLink attaches the card to the network: out is the direction it
// sends on, in the one it receives from; route gives the source route to
// a node.
func (c *Card) ConnectLink(out, in *link.Dir, route func(dst int) []byte) {
	c.route = route
	c.send.Connect(out)
	c.recv.Connect(in)
}

// OnInterrupt sets what the interrupt line drives (the host CPU).
func (c *Card) OnInterrupt(fn func(now clock.Time)) { c.onIRQ = fn }

// SRAM returns the card's memory (its Storage is the untimed backdoor).
func (c *Card) SRAM() *mem.Memory { return c.sram }

// PCIBase returns the bus address of the SRAM window.
func (c *Card) PCIBase() uint64 { return c.pciBase }

// Program returns the control program.
func (c *Card) Program() firmware.Program { return c.prog }

// Config returns the hardware configuration.
func (c *Card) Config() Config { return c.cfg }

// Start boots the control program at the first edge.
func (c *Card) Start() {
	c.order = c.prog.PollOrder()
	c.ctx = firmware.NewCtx(c.env, c, 0, 0)
	c.Ticking.Start()
}

// Stats are a card's counters.
type Stats struct {
	// Handlers run; Busy the processor time in them (SRAM stalls
	// included); Spin the time it busy-waited (SpinUntil); Interrupts
	// raised.
	Handlers   uint64
	Busy       clock.Time
	Spin       clock.Time
	Interrupts uint64
	// PacketsSent and PacketsReceived by the network DMA engines;
	// HostDMAs by the host DMA engine.
	PacketsSent, PacketsReceived, HostDMAs uint64
	BytesSent, BytesReceived, HostDMABytes uint64
}

// Stats returns the counters.
func (c *Card) Stats() Stats {
	h := c.hdma.Stats()
	return Stats{Handlers: c.handled, Busy: c.busy, Spin: c.spinTime, Interrupts: c.irqs,
		PacketsSent: c.send.Packets(), PacketsReceived: c.recv.Packets(), HostDMAs: h.Descriptors,
		BytesSent: c.send.Bytes(), BytesReceived: c.recv.Bytes(), HostDMABytes: h.Bytes}
}

// raise queues a hardware event for the main loop.
func (c *Card) raise(now clock.Time, ev firmware.HWEvent) {
	ev.At = now
	c.events[ev.Kind].Push(ev)
	c.pending++
	c.sigEvents.Set(now, uint64(c.pending))
	c.Wake(now)
}

// next returns the first event in poll order (or, while the program spins
// on one source, that source's event).
func (c *Card) next(now clock.Time) (firmware.HWEvent, bool) {
	if c.spinning {
		if c.events[c.spinOn].Len() == 0 {
			return firmware.HWEvent{}, false
		}
		c.spinning = false
		c.spinTime += now - c.began
		c.pending--
		c.sigEvents.Set(now, uint64(c.pending))
		ev := c.events[c.spinOn].Pop()
		if ev.Kind == firmware.HostWrite {
			c.watchHit[ev.Tag] = false
		}
		return ev, true
	}
	for _, k := range c.order {
		if c.events[k].Len() > 0 {
			c.pending--
			c.sigEvents.Set(now, uint64(c.pending))
			ev := c.events[k].Pop()
			if k == firmware.HostWrite {
				c.watchHit[ev.Tag] = false
			}
			return ev, true
		}
	}
	return firmware.HWEvent{}, false
}

// Tick implements clock.Ticker: the processor. Output first: finish the
// running handler (commit its commands), collect SRAM data, then start the
// next handler.
func (c *Card) Tick(now clock.Time) bool {
	progress := false
	if c.timerOn && now >= c.timerAt {
		c.timerOn = false
		c.raise(now, firmware.HWEvent{Kind: firmware.Timer})
		progress = true
	}
	for {
		switch c.phase {
		case phRun:
			if now < c.readyAt {
				c.WakeAt(c.readyAt)
				return progress
			}
			c.ctx.Commit(now)
			c.busy += now - c.began
			c.phase = phIdle
			if k, ok := c.ctx.Spin(); ok {
				c.spinning, c.spinOn, c.began = true, k, now
				c.sigState.SetString(now, "SPIN")
			}
			progress = true
			continue
		case phSRAM:
			// The handler's cycles run while its SRAM traffic is served:
			// the instructions include the loads and stores, so the SRAM
			// adds time only when the DMA engines hold it.
			for c.sramLeft > 0 {
				b, ok := c.sram.Port(portProc).Up.Pop(now)
				if !ok {
					if now >= c.readyAt {
						c.sigState.SetString(now, "SRAM")
					}
					return progress // the memory's push wakes us
				}
				c.sramLeft -= len(b.Data)
				progress = true
			}
			c.phase = phRun
			continue
		}
		// Idle: boot, or take the next event.
		if !c.booted {
			c.booted = true
			c.ctx.Reset(now, c.Clock().CycleAt(now))
			c.began = now
			if err := c.prog.Boot(c.ctx); err != nil {
				c.env.Report(now, c.Name(), "fw.boot", "%v", err)
			}
			c.sigState.SetString(now, "BOOT")
		} else {
			ev, ok := c.next(now)
			if !ok {
				if !c.spinning {
					c.sigState.SetString(now, "IDLE")
				}
				return progress
			}
			c.ctx.Reset(now, c.Clock().CycleAt(now))
			c.began = now
			c.handled++
			c.sigState.SetString(now, ev.Kind.String())
			if c.env.Trace.Enabled() {
				c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "ni.event", trace.Str("kind", ev.Kind.String()),
					trace.Uint("tag", ev.Tag), trace.Addr("addr", uint64(ev.Addr)), trace.Int("len", int64(ev.Len)))
			}
			c.prog.Handle(c.ctx, ev)
		}
		progress = true
		if n := c.ctx.SRAMBytes(); n > 0 {
			// The handler's SRAM traffic, as one access through the
			// processor's port: it waits behind the DMA engines.
			ch := c.sram.Port(portProc)
			if !ch.Down.CanPush(now) {
				c.env.Report(now, c.Name(), "ni.sram", "processor port busy at the start of a handler")
			}
			ch.Down.Push(now, mem.Beat{Req: &mem.Req{Op: mem.Read, Addr: 0, Len: n, Class: "fw", Master: c.Name()}, First: true, Last: true})
			c.sramLeft = n
			c.phase = phSRAM
		} else {
			c.phase = phRun
		}
		c.readyAt = c.Clock().After(now, clock.Cycle(c.ctx.Cycles()))
	}
}

// sramWritten raises HostWrite for a PIO write into a watched range.
func (c *Card) sramWritten(now clock.Time, port int, addr uint64, n int) {
	if port != portPCI {
		return
	}
	for i, w := range c.watches {
		if addr < uint64(w[0])+uint64(w[1]) && addr+uint64(n) > uint64(w[0]) {
			// The main loop polls the queue, and one poll finds every
			// entry written since: writes coalesce until it runs.
			if !c.watchHit[i] {
				c.watchHit[i] = true
				c.raise(now, firmware.HWEvent{Kind: firmware.HostWrite, Addr: w[0], Len: int(w[1]), Tag: uint64(i)})
			}
			return
		}
	}
}

func (c *Card) hostDMADone(now clock.Time, d dma.Descriptor, err string) {
	tag := c.hdmaTags.Pop()
	if err != "" {
		c.env.Report(now, c.Name(), "ni.hostdma", "host DMA %v failed: %s", d, err)
	}
	c.raise(now, firmware.HWEvent{Kind: firmware.HostDMADone, Tag: tag, Len: d.Len})
}

// Idle implements check.Unit: no event waiting, no handler running, and
// the program holds no work.
func (c *Card) Idle() bool {
	return c.pending == 0 && c.phase == phIdle && !c.spinning && c.prog.Idle() && c.send.Idle() && c.recv.Idle()
}

// State implements check.Unit: the card's engines, the program's queues and
// the state of every firmware machine (for the stuck-state report).
func (c *Card) State() string {
	var ms strings.Builder
	for i, m := range c.prog.Machines() {
		if i > 0 {
			ms.WriteByte(' ')
		}
		fmt.Fprintf(&ms, "%s=%s", m.Name(), m.State())
	}
	return fmt.Sprintf("%d events pending, phase %d, program: %s; machines: %s; send: %s; recv: %s",
		c.pending, c.phase, c.prog.State(), ms.String(), c.send.State(), c.recv.State())
}

// firmware.NI: what the control program sees.

// Node implements firmware.NI.
func (c *Card) Node() int { return c.node }

// Nodes implements firmware.NI.
func (c *Card) Nodes() int { return c.nodes }

// SRAMSize implements firmware.NI.
func (c *Card) SRAMSize() uint32 { return uint32(c.cfg.SRAMBytes) }

// ReadSRAM implements firmware.NI.
func (c *Card) ReadSRAM(addr uint32, n int) ([]byte, error) {
	return c.sram.Storage().Bytes(uint64(addr), n)
}

// WriteSRAM implements firmware.NI.
func (c *Card) WriteSRAM(addr uint32, data []byte) error {
	return c.sram.Storage().Write(uint64(addr), data)
}

// Watch implements firmware.NI.
func (c *Card) Watch(addr uint32, n int) {
	c.watches = append(c.watches, [2]uint32{addr, uint32(n)})
	c.watchHit = append(c.watchHit, false)
}

// HostDMAFree implements firmware.NI.
func (c *Card) HostDMAFree() int {
	free := c.hdma.Queue().Free(c.Now())
	if !c.hdma.Idle() {
		free-- // the transfer in progress holds the engine's registers
	}
	return max(free, 0)
}

// SendFree implements firmware.NI.
func (c *Card) SendFree() int { return c.send.Free() }

// RecvArmed implements firmware.NI.
func (c *Card) RecvArmed() bool { return c.recv.Armed() }

// StartHostDMA implements firmware.NI.
func (c *Card) StartHostDMA(now clock.Time, d firmware.HostDMA) {
	var desc dma.Descriptor
	host, sram := dma.Mem(c.hdmaPCI, d.HostAddr), dma.Mem(c.hdmaSRAM, uint64(d.SRAM))
	if d.Dir == firmware.ToNI {
		desc = dma.Descriptor{Src: host, Dst: sram, Len: d.Len, Tag: d.Tag}
	} else {
		desc = dma.Descriptor{Src: sram, Dst: host, Len: d.Len, Tag: d.Tag}
	}
	if !c.hdma.Submit(now, desc) {
		c.env.Report(now, c.Name(), "ni.hostdma", "host DMA started while the engine is busy")
		return
	}
	c.hdmaTags.Push(d.Tag)
}

// StartSend implements firmware.NI.
func (c *Card) StartSend(now clock.Time, p firmware.Packet) {
	if p.Dst < 0 || p.Dst >= c.nodes || p.Dst == c.node {
		c.env.Report(now, c.Name(), "ni.send", "packet to node %d from node %d in a cluster of %d", p.Dst, c.node, c.nodes)
		return
	}
	c.send.Submit(now, netdma.Packet{Dst: p.Dst, Addr: uint64(p.SRAM), Len: p.Len, Tag: p.Tag, Route: c.route(p.Dst)})
}

// ArmRecv implements firmware.NI.
func (c *Card) ArmRecv(now clock.Time, sram uint32, max int) { c.recv.Arm(now, uint64(sram), max) }

// SetTimer implements firmware.NI.
func (c *Card) SetTimer(now clock.Time, cycles int) {
	c.timerOn = true
	c.timerAt = c.Clock().After(now, clock.Cycle(max(cycles, 1)))
	c.WakeAt(c.timerAt)
}

// CancelTimer implements firmware.NI.
func (c *Card) CancelTimer(clock.Time) { c.timerOn = false }

// Interrupt implements firmware.NI.
func (c *Card) Interrupt(now clock.Time) {
	c.irqs++
	c.sigIRQ.Set(now, c.irqs)
	if c.env.Trace.Enabled() {
		c.env.Trace.Emit(now, c.Clock().CycleAt(now), c.Name(), "ni.interrupt")
	}
	if c.onIRQ != nil {
		c.onIRQ(now)
	}
}
