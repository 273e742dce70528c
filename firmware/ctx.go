package firmware

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Program is an NI control program.
type Program interface {
	// PollOrder is the order in which the main loop polls the event
	// sources; a kind not listed is never handled.
	PollOrder() []EventKind
	// Boot runs once when the card starts (its cycles count like a
	// handler's): lay out SRAM, watch host queues, arm the receive engine.
	Boot(c *Ctx) error
	// Handle is one pass of the main loop that found ev.
	Handle(c *Ctx, ev HWEvent)
	// Machines returns the program's state machines.
	Machines() []*Machine
	// Idle reports that the program holds no unfinished work (for the
	// deadlock watchdog); State describes what it holds.
	Idle() bool
	State() string
}

// Ctx is what a handler runs with: the hardware, the time, and the
// account of the cycles, SRAM bytes and commands the handler has spent
// and issued so far.
type Ctx struct {
	// Now is when the handler started; Cycle the processor cycle then.
	Now   clock.Time
	Cycle clock.Cycle
	Env   *env.Env
	hw    NI

	cycles    int
	sramBytes int
	cmds      []command
	hostDMAs  int
	sends     int
	armed     bool
	spin      EventKind
	spinning  bool
}

type command struct {
	kind   uint8
	dma    HostDMA
	pkt    Packet
	addr   uint32
	n      int
	cancel bool
}

const (
	cmdHostDMA uint8 = iota
	cmdSend
	cmdArm
	cmdTimer
	cmdInterrupt
)

// NewCtx starts the account of a handler (the processor calls it).
func NewCtx(e *env.Env, hw NI, now clock.Time, cycle clock.Cycle) *Ctx {
	return &Ctx{Env: e, hw: hw, Now: now, Cycle: cycle, armed: hw.RecvArmed()}
}

// Reset reuses c for the next handler.
func (c *Ctx) Reset(now clock.Time, cycle clock.Cycle) {
	c.Now, c.Cycle = now, cycle
	c.cycles, c.sramBytes, c.hostDMAs, c.sends = 0, 0, 0, 0
	c.spinning = false
	c.cmds = c.cmds[:0]
	c.armed = c.hw.RecvArmed()
}

// Fire runs machine m's transition on ev (a control transfer into m).
// It reports whether the transition existed.
func (c *Ctx) Fire(m *Machine, ev Event, arg any) bool { return m.Fire(c, ev, arg) }

// Charge adds n processor cycles (work whose length depends on the data);
// it also takes the cost of every transition the handler fires
// (fsm.Driver).
func (c *Ctx) Charge(n int) { c.cycles += n }

// Cycles and SRAMBytes return what the handler has been charged so far.
func (c *Ctx) Cycles() int    { return c.cycles }
func (c *Ctx) SRAMBytes() int { return c.sramBytes }

// SRAMSize is the size of NI memory.
func (c *Ctx) SRAMSize() uint32 { return c.hw.SRAMSize() }

// Node and Nodes identify the NI and the cluster size.
func (c *Ctx) Node() int  { return c.hw.Node() }
func (c *Ctx) Nodes() int { return c.hw.Nodes() }

// Read reads n bytes of SRAM; the bytes are charged to the SRAM port.
// An address outside SRAM is a checker error (and reads zeros).
func (c *Ctx) Read(addr uint32, n int) []byte {
	c.sramBytes += n
	b, err := c.hw.ReadSRAM(addr, n)
	if err != nil {
		c.Env.Report(c.Now, "firmware", "fw.sram", "read of %d bytes at %#x: %v", n, addr, err)
		return make([]byte, n)
	}
	return b
}

// Write writes data to SRAM, charged like Read.
func (c *Ctx) Write(addr uint32, data []byte) {
	c.sramBytes += len(data)
	if err := c.hw.WriteSRAM(addr, data); err != nil {
		c.Env.Report(c.Now, "firmware", "fw.sram", "write of %d bytes at %#x: %v", len(data), addr, err)
	}
}

// Watch makes host writes to [addr, addr+n) raise HostWrite (at once: it
// configures the PCI slave, it is not a command).
func (c *Ctx) Watch(addr uint32, n int) { c.hw.Watch(addr, n) }

// HostDMAFree and SendFree are the descriptor slots left for this
// handler's commands; RecvArmed whether the receive engine has (or will
// have, after this handler) a buffer.
func (c *Ctx) HostDMAFree() int { return c.hw.HostDMAFree() - c.hostDMAs }
func (c *Ctx) SendFree() int    { return c.hw.SendFree() - c.sends }
func (c *Ctx) RecvArmed() bool  { return c.armed }

// StartHostDMA queues a host DMA (issued at the handler's end). The caller
// checks HostDMAFree first; a request beyond it is a checker error.
func (c *Ctx) StartHostDMA(d HostDMA) {
	if c.HostDMAFree() <= 0 {
		c.Env.Report(c.Now, "firmware", "fw.overflow", "host DMA queue full")
		return
	}
	c.hostDMAs++
	c.cmds = append(c.cmds, command{kind: cmdHostDMA, dma: d})
}

// StartSend queues a packet for the send DMA engine (checked like
// StartHostDMA against SendFree).
func (c *Ctx) StartSend(p Packet) {
	if c.SendFree() <= 0 {
		c.Env.Report(c.Now, "firmware", "fw.overflow", "send queue full")
		return
	}
	c.sends++
	c.cmds = append(c.cmds, command{kind: cmdSend, pkt: p})
}

// ArmRecv gives the receive engine its next buffer.
func (c *Ctx) ArmRecv(sram uint32, max int) {
	if c.armed {
		c.Env.Report(c.Now, "firmware", "fw.overflow", "receive engine armed twice")
		return
	}
	c.armed = true
	c.cmds = append(c.cmds, command{kind: cmdArm, addr: sram, n: max})
}

// SetTimer starts (or restarts) the interval timer for n processor cycles;
// CancelTimer stops it.
func (c *Ctx) SetTimer(n int) { c.cmds = append(c.cmds, command{kind: cmdTimer, n: n}) }
func (c *Ctx) CancelTimer()   { c.cmds = append(c.cmds, command{kind: cmdTimer, cancel: true}) }

// SpinUntil makes the processor, once this handler's commands are issued,
// poll only the event source k until it fires, and handle that event
// next: the control program busy-waits (for a DMA it just started, say)
// instead of returning to its main loop. Other events wait meanwhile.
func (c *Ctx) SpinUntil(k EventKind) { c.spin, c.spinning = k, true }

// Spin reports the source the handler asked to spin on (the processor
// calls it).
func (c *Ctx) Spin() (EventKind, bool) { return c.spin, c.spinning }

// Interrupt raises the host interrupt line.
func (c *Ctx) Interrupt() { c.cmds = append(c.cmds, command{kind: cmdInterrupt}) }

// Commit issues the handler's commands at now (the processor calls it when
// the handler's time has elapsed).
func (c *Ctx) Commit(now clock.Time) {
	for i := range c.cmds {
		x := &c.cmds[i]
		switch x.kind {
		case cmdHostDMA:
			c.hw.StartHostDMA(now, x.dma)
		case cmdSend:
			c.hw.StartSend(now, x.pkt)
		case cmdArm:
			c.hw.ArmRecv(now, x.addr, x.n)
		case cmdTimer:
			if x.cancel {
				c.hw.CancelTimer(now)
			} else {
				c.hw.SetTimer(now, x.n)
			}
		case cmdInterrupt:
			c.hw.Interrupt(now)
		}
	}
	c.cmds = c.cmds[:0]
}
