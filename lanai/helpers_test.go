package lanai_test

import (
	"fmt"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/lanai"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/myrinet"

	. "github.com/onsi/gomega"
)

// niBase is where the cards' SRAM window sits on the PCI bus.
const niBase = 0x8000_0000

// hostMemBytes is the size of a test host memory (at bus address 0).
const hostMemBytes = 1 << 20

var (
	// lanaiClk is the LANai 4.1 processor clock (33 MHz), pciClk the
	// 33.33 MHz PCI clock (a 30 ns period), netPlat the PPro platform's
	// Myrinet: 160 MHz, one byte per cycle, 4-byte flits.
	lanaiClk = lanai.LANai4().Clock
	pciClk   = bus.PCI32().Clock
	netPlat  = myrinet.PPro()
)

// handled is one event as the test firmware saw it.
type handled struct {
	Kind firmware.EventKind
	Tag  uint64
	Addr uint32
	Len  int
	Bad  bool
	// At is when the hardware raised the event, Start when the processor
	// dispatched it (the handler's Now) and Cycle the processor cycle
	// then.
	At, Start clock.Time
	Cycle     clock.Cycle
}

// testFW is a control program written by a spec: Boot and Handle run the
// spec's functions, every handled event is logged, and the commands the
// spec issues through its helpers (dma, send, arm, timer) are counted
// until their completion comes back, so the deadlock watchdog flags a
// completion that never arrives.
type testFW struct {
	order  []firmware.EventKind
	boot   func(f *testFW, c *firmware.Ctx) error
	handle func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent)
	log    []handled
	open   int
}

func newFW(order ...firmware.EventKind) *testFW { return &testFW{order: order} }

// PollOrder implements firmware.Program.
func (f *testFW) PollOrder() []firmware.EventKind { return f.order }

// Boot implements firmware.Program.
func (f *testFW) Boot(c *firmware.Ctx) error {
	if f.boot == nil {
		return nil
	}
	return f.boot(f, c)
}

// Handle implements firmware.Program.
func (f *testFW) Handle(c *firmware.Ctx, ev firmware.HWEvent) {
	f.log = append(f.log, handled{Kind: ev.Kind, Tag: ev.Tag, Addr: ev.Addr, Len: ev.Len, Bad: ev.Bad,
		At: ev.At, Start: c.Now, Cycle: c.Cycle})
	if ev.Kind != firmware.HostWrite {
		f.open--
	}
	if f.handle != nil {
		f.handle(f, c, ev)
	}
}

// Machines implements firmware.Program: the test programs have none.
func (f *testFW) Machines() []*firmware.Machine { return nil }

// Idle implements firmware.Program.
func (f *testFW) Idle() bool { return f.open == 0 }

// State implements firmware.Program.
func (f *testFW) State() string { return fmt.Sprintf("%d completions outstanding", f.open) }

func (f *testFW) dma(c *firmware.Ctx, d firmware.HostDMA) { f.open++; c.StartHostDMA(d) }
func (f *testFW) send(c *firmware.Ctx, p firmware.Packet) { f.open++; c.StartSend(p) }
func (f *testFW) arm(c *firmware.Ctx, addr uint32, n int) { f.open++; c.ArmRecv(addr, n) }
func (f *testFW) timer(c *firmware.Ctx, n int)            { f.open++; c.SetTimer(n) }

// events returns the logged events of kind k.
func (f *testFW) events(k firmware.EventKind) []handled {
	var out []handled
	for _, h := range f.log {
		if h.Kind == k {
			out = append(out, h)
		}
	}
	return out
}

// kinds returns the kinds of the logged events in the order handled.
func (f *testFW) kinds() []firmware.EventKind {
	out := make([]firmware.EventKind, len(f.log))
	for i, h := range f.log {
		out[i] = h.Kind
	}
	return out
}

// node is a card, optionally on a PCI bus with a host memory (and a host
// CPU), with its test firmware.
type node struct {
	bus  *bus.Bus
	host *mem.Memory
	cpu  *cpu.CPU
	card *lanai.Card
	fw   *testFW
	// irqs are the times the card raised its interrupt line.
	irqs []clock.Time
}

type nodeOpts struct {
	pci bool // a PCI bus with host memory at 0 and the card at niBase
	cpu bool // a 200 MHz host CPU on the bus
}

// newNode builds card name as node id of a cluster of nodes.
func newNode(e *env.Env, name string, id, nodes int, fw *testFW, o nodeOpts) *node {
	n := &node{fw: fw}
	card, err := lanai.MakeBuilder().WithEnv(e).WithNode(id, nodes).WithProgram(fw).
		WithLink(netPlat.Link.Clock, netPlat.FlitBytes).Build(name + ".NI")
	Expect(err).NotTo(HaveOccurred())
	n.card = card
	card.OnInterrupt(func(now clock.Time) { n.irqs = append(n.irqs, now) })
	if !o.pci {
		return n
	}
	n.bus, err = bus.MakeBuilder().WithEnv(e).WithConfig(bus.PCI32()).Build(name + ".PCI")
	Expect(err).NotTo(HaveOccurred())
	// A test host memory: one 4-byte word per bus cycle, one cycle to the
	// first data.
	n.host, err = mem.MakeBuilder().WithEnv(e).WithClock(pciClk).WithSize(hostMemBytes).
		WithPortWidth(4).WithBytesPerCycle(4).WithLatency(1).Build(name + ".Mem")
	Expect(err).NotTo(HaveOccurred())
	Expect(n.bus.AddTarget(name+".Mem", 0, hostMemBytes, n.host.Port(0))).To(Succeed())
	if o.cpu {
		n.cpu, err = cpu.MakeBuilder().WithEnv(e).WithClock(clock.MHz(200)).Build(name + ".CPU")
		Expect(err).NotTo(HaveOccurred())
		ch, err := n.bus.AddMaster(name + ".CPU")
		Expect(err).NotTo(HaveOccurred())
		n.cpu.Attach(ch)
	}
	Expect(card.AttachPCI(n.bus, niBase)).To(Succeed())
	return n
}

// connect joins two cards with one link (cfg) and no switch: nothing
// consumes a route, so the route is empty.
func connect(e *env.Env, a, b *node, cfg link.Config) *link.Link {
	l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("Link")
	Expect(err).NotTo(HaveOccurred())
	noRoute := func(int) []byte { return nil }
	a.card.ConnectLink(l.From(link.A), l.From(link.B), noRoute)
	b.card.ConnectLink(l.From(link.B), l.From(link.A), noRoute)
	return l
}

// pattern returns n bytes of a recognisable pattern.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7) + seed
	}
	return p
}

// cyc is the time of LANai cycle n.
func cyc(n int) clock.Time { return lanaiClk.TimeOf(clock.Cycle(n)) }
