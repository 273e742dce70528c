package shrimp

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
)

// The EISA target. The NI's EISA board answers three windows of the EISA
// address space (issue 14 design section 1.2, AddressMap; the window sizes
// are derived from the Config):
//
//	MemProxy  MemoryBytes             «proxy memory» of the local memory
//	                                  (L277): a LOAD at MemProxy + phys is the
//	                                  second UDMA reference, naming the source
//	                                  phys, and returns the Status (udma.go).
//	DevProxy  Entries() × PageBytes   the device proxy: a STORE at DevProxy +
//	                                  optIndex × PageBytes + off is the first
//	                                  UDMA reference, naming offset off of the
//	                                  imported page of OPT entry optIndex
//	                                  (L95, SH-P12), with count and notify bit
//	                                  in its data (udma.go).
//	CSR       CSRBytes                the control and status registers
//	                                  (csr.go).
//
// Each window is its own bus target, named after the NI: "<name>.MemProxy",
// "<name>.DevProxy", "<name>.CSR". Kernel and process protection is the
// CPU's page table (proxy pages are mapped per process, L277 «Protection of
// local and remote memory is provided through proxy memory mappings»), not
// the NI's: the target answers every access that reaches it.
//
// Every window is served by a port (tport) in the NI's EISA domain, in the
// order CSR, device proxy, memory proxy, each cycle: a request visible at
// edge t is served from edge t + the port's latency (a read's data pushed,
// a write's beat taken, one beat per cycle), so a CSR write or a STORE
// takes effect at a defined point of the EISA cycle whatever order the
// components tick in.

// Target names of the three windows, appended to the NI's name.
const (
	// TargetMemProxy is the memory proxy window's target name suffix.
	TargetMemProxy = ".MemProxy"
	// TargetDevProxy is the device proxy window's target name suffix.
	TargetDevProxy = ".DevProxy"
	// TargetCSR is the CSR window's target name suffix.
	TargetCSR = ".CSR"
)

// tport is one target window's port: the request being served and the
// handlers that give it meaning.
type tport struct {
	name string
	ch   *mem.Channel
	// lat is the cycles from seeing a request to serving it.
	lat   int
	cur   *mem.Req
	ready clock.Time
	off   int
	rdata []byte
	// read returns n bytes at window offset addr (called once per read,
	// when its first beat goes); write takes one beat at addr.
	read  func(now clock.Time, addr uint64, n int) []byte
	write func(now clock.Time, addr uint64, data []byte)
}

// attachPort maps a window of size bytes at base on eisa onto p.
func (n *NI) attachPort(eisa *bus.Bus, p *tport, base, size uint64) error {
	ch, err := mem.NewChannel(n.env, p.name+".Port", eisa.Config().WidthBytes, 2)
	if err != nil {
		return err
	}
	ch.ConnectTarget(n.eisa)
	if err := eisa.AddTarget(p.name, base, size, ch); err != nil {
		return err
	}
	p.ch = ch
	return nil
}

// attachDUTarget maps the three windows of m on eisa and adds the DU
// engine as a master.
func (n *NI) attachDUTarget(eisa *bus.Bus, m AddressMap) error {
	d := &n.du
	if d.eisa != nil {
		return fmt.Errorf("AttachEISA: already attached")
	}
	c := n.cfg
	if err := n.attachPort(eisa, &d.csrPort, m.CSR, CSRBytes(c)); err != nil {
		return err
	}
	if err := n.attachPort(eisa, &d.devPort, m.DevProxy, uint64(c.Entries())*uint64(c.PageBytes)); err != nil {
		return err
	}
	if err := n.attachPort(eisa, &d.memPort, m.MemProxy, c.MemoryBytes); err != nil {
		return err
	}
	d.eisa, d.amap = eisa, m
	return n.attachDUEngine(eisa)
}

// servePort serves p for one EISA cycle; it returns whether anything moved.
func (n *NI) servePort(now clock.Time, p *tport) bool {
	if p.ch == nil {
		return false
	}
	if p.cur == nil {
		b, ok := p.ch.Down.Peek(now)
		if !ok {
			return false
		}
		if !b.First {
			n.env.Report(now, p.name, "shrimp.target", "data beat without a request: %v", b)
			p.ch.Down.Pop(now)
			return true
		}
		p.cur, p.off = b.Req, 0
		p.ready = n.eisa.Clock().After(now, clock.Cycle(p.lat))
		if p.cur.Op == mem.Read {
			p.ch.Down.Pop(now)
		}
	}
	if now < p.ready {
		n.eisa.WakeAt(p.ready)
		return false
	}
	if p.cur.Op == mem.Read {
		if !p.ch.Up.CanPush(now) {
			return false
		}
		if p.off == 0 {
			p.rdata = p.read(now, p.cur.Addr, p.cur.Len)
		}
		k := mem.FirstChunk(p.cur.Addr+uint64(p.off), p.cur.Len-p.off, p.ch.Width)
		last := p.off+k == p.cur.Len
		p.ch.Up.Push(now, mem.Beat{Req: p.cur, Data: p.rdata[p.off : p.off+k], First: p.off == 0, Last: last})
		p.off += k
		if last {
			p.cur, p.rdata = nil, nil
		}
		return true
	}
	b, ok := p.ch.Down.Peek(now)
	if !ok {
		return false
	}
	if b.Last && !p.cur.Posted && !p.ch.Up.CanPush(now) {
		return false
	}
	p.ch.Down.Pop(now)
	addr := p.cur.Addr + uint64(p.off)
	p.off += len(b.Data)
	p.write(now, addr, b.Data)
	if b.Last {
		if !p.cur.Posted {
			p.ch.Up.Push(now, mem.Beat{Req: p.cur, First: true, Last: true})
		}
		p.cur = nil
	}
	return true
}

// tickTarget serves the three windows for one EISA cycle.
func (n *NI) tickTarget(now clock.Time) bool {
	d := &n.du
	a := n.servePort(now, &d.csrPort)
	b := n.servePort(now, &d.devPort)
	c := n.servePort(now, &d.memPort)
	return a || b || c
}

// idleTarget reports whether no access is being served.
func (n *NI) idleTarget() bool {
	d := &n.du
	return d.csrPort.cur == nil && d.devPort.cur == nil && d.memPort.cur == nil
}
