package lci_test

import (
	"strings"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// sramBytes is the fake card's SRAM: enough for testConfig's layout
// (0x1c00 bytes, worked out in the config specs).
const sramBytes = 64 << 10

// Host memory map of the simulated host (as host/lcilib lays it out).
const (
	slotsBase = 0x0010_0000
	sendData  = 0x0100_0000
	hostBytes = 128 << 20
)

// testConfig is a small LCI configuration: 8 nodes, MTU 64, 32 receive
// buffers of which 4 spare, so W = (32-4)/(8-1) = 4 and W/2 = 2.
func testConfig() lci.Config {
	cfg := lci.DefaultConfig()
	cfg.MTU = 64
	cfg.ClusterSize = 8
	cfg.RecvBufs = 32
	cfg.SpareBufs = 4
	cfg.SendBufs = 8
	cfg.SendQSlots = 16
	cfg.HostSlots = 8
	cfg.WatchdogCycles = 500
	return cfg
}

// sentPkt is a transmit command with the packet's bytes as they were in
// SRAM when it was issued.
type sentPkt struct {
	firmware.Packet
	Bytes []byte
}

// Hdr decodes the packet's LCI header.
func (s sentPkt) Hdr() lci.Header { return lci.DecodeHeader(s.Bytes) }

// armCmd is an ArmRecv command.
type armCmd struct {
	Addr uint32
	Max  int
}

// fakeNI is the hardware as the control program sees it: a real SRAM
// (rtl/mem storage) and a record of every command. Engines never complete
// by themselves: the spec raises their events.
type fakeNI struct {
	node, nodes int
	sram        *mem.Storage
	// Free descriptor slots the engines report; the receive engine's
	// buffer.
	hostDMAFree, sendFree int
	armed                 bool
	// Commands and configuration, in order.
	watches [][2]uint32
	dmas    []firmware.HostDMA
	sends   []sentPkt
	arms    []armCmd
	timers  []int
	cancels int
	irqs    int
}

func newFakeNI(node, nodes int, size uint64) *fakeNI {
	return &fakeNI{node: node, nodes: nodes, sram: mem.NewStorage(size), hostDMAFree: 4, sendFree: 4}
}

func (f *fakeNI) Node() int        { return f.node }
func (f *fakeNI) Nodes() int       { return f.nodes }
func (f *fakeNI) SRAMSize() uint32 { return uint32(f.sram.Size()) }
func (f *fakeNI) ReadSRAM(addr uint32, n int) ([]byte, error) {
	return f.sram.Bytes(uint64(addr), n)
}
func (f *fakeNI) WriteSRAM(addr uint32, data []byte) error { return f.sram.Write(uint64(addr), data) }
func (f *fakeNI) Watch(addr uint32, n int)                 { f.watches = append(f.watches, [2]uint32{addr, uint32(n)}) }
func (f *fakeNI) HostDMAFree() int                         { return f.hostDMAFree }
func (f *fakeNI) SendFree() int                            { return f.sendFree }
func (f *fakeNI) RecvArmed() bool                          { return f.armed }
func (f *fakeNI) StartHostDMA(_ clock.Time, d firmware.HostDMA) {
	f.dmas = append(f.dmas, d)
}
func (f *fakeNI) StartSend(_ clock.Time, p firmware.Packet) {
	b, err := f.sram.Bytes(uint64(p.SRAM), p.Len)
	Expect(err).NotTo(HaveOccurred(), "send of %+v", p)
	f.sends = append(f.sends, sentPkt{p, b})
}
func (f *fakeNI) ArmRecv(_ clock.Time, sram uint32, max int) {
	Expect(f.armed).To(BeFalse(), "ArmRecv while armed")
	f.armed = true
	f.arms = append(f.arms, armCmd{sram, max})
}
func (f *fakeNI) SetTimer(_ clock.Time, cycles int) { f.timers = append(f.timers, cycles) }
func (f *fakeNI) CancelTimer(clock.Time)            { f.cancels++ }
func (f *fakeNI) Interrupt(clock.Time)              { f.irqs++ }

// lastSend and lastDMA are the most recent commands.
func (f *fakeNI) lastSend() sentPkt {
	ExpectWithOffset(1, f.sends).NotTo(BeEmpty())
	return f.sends[len(f.sends)-1]
}

func (f *fakeNI) lastDMA() firmware.HostDMA {
	ExpectWithOffset(1, f.dmas).NotTo(BeEmpty())
	return f.dmas[len(f.dmas)-1]
}

// armedAt is the buffer the receive engine holds.
func (f *fakeNI) armedAt() armCmd {
	ExpectWithOffset(1, f.armed).To(BeTrue(), "receive engine not armed")
	return f.arms[len(f.arms)-1]
}

// rig is one NI's control program on a fakeNI, with a scripted host: it
// writes descriptors and free buffer records into SRAM as host/lcilib does,
// plays the DMA engines (copying between SRAM and a host memory when the
// spec completes a DMA) and packet arrivals.
type rig struct {
	e     *env.Env
	ni    *fakeNI
	p     *lci.Program
	c     *firmware.Ctx
	cfg   lci.Config
	l     lci.Layout
	clk   clock.Clock
	cycle clock.Cycle
	host  *mem.Storage

	descSeq, freeSeq uint32
	// pkts numbers the packets the link delivers.
	pkts uint64
	// consumed are host slots the NI filled that the host has not
	// given back; autoReturn gives each back as soon as its DMA is done.
	consumed   []uint64
	autoReturn bool
}

func newRig(cfg lci.Config, node, nodes int) *rig {
	e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33)})
	p, err := lci.New(e, "FW", cfg, node, nodes, "link")
	Expect(err).NotTo(HaveOccurred())
	return &rig{e: e, ni: newFakeNI(node, nodes, sramBytes), p: p, cfg: cfg, l: p.Layout(), clk: clock.MHz(33),
		host: mem.NewStorage(hostBytes), descSeq: 1, freeSeq: 1}
}

// slot is the host address of host receive slot i (host/lcilib's layout:
// contiguous slots of lci.SlotBytes).
func (r *rig) slot(i int) uint64 {
	return slotsBase + uint64(i)*uint64(lci.SlotBytes(r.cfg.MTU))
}

// hdrAt is the host address of slot i's header: lci.SlotHeaderAt bytes in,
// 64 + 16 = 80 with the test MTU of 64 (a 32-byte block holds 16 bytes
// of data and the header).
func (r *rig) hdrAt(i int) uint64 { return r.slot(i) + uint64(lci.SlotHeaderAt(r.cfg.MTU)) }

// hostInit writes what host/lcilib's init writes before the card boots: the
// control block (bit 0: interrupts), slots free host buffers and the
// multicast forwarding table of cfg.Tree.
func (r *rig) hostInit(slots int) {
	cb := make([]byte, 16)
	if r.cfg.Interrupts {
		cb[lci.CtlFlags] = 1
	}
	r.sramWrite(0, cb)
	for i := range slots {
		r.writeFree(r.slot(i))
	}
	for root := range r.ni.nodes {
		row := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		for i, k := range r.cfg.Tree.Children(root, r.ni.node, r.ni.nodes) {
			row[i] = byte(k)
		}
		r.sramWrite(r.l.Fwd+uint32(root*lci.FwdWidth), row)
	}
}

// boot runs Boot and issues its commands.
func (r *rig) boot() {
	r.c = firmware.NewCtx(r.e, r.ni, r.clk.TimeOf(r.cycle), r.cycle)
	Expect(r.p.Boot(r.c)).To(Succeed())
	r.c.Commit(r.clk.TimeOf(r.cycle))
}

// handle is one pass of the main loop on ev, its commands issued at once.
func (r *rig) handle(ev firmware.HWEvent) {
	r.cycle += 100
	now := r.clk.TimeOf(r.cycle)
	ev.At = now
	r.c.Reset(now, r.cycle)
	r.p.Handle(r.c, ev)
	r.c.Commit(now)
}

func (r *rig) sramWrite(addr uint32, b []byte) {
	ExpectWithOffset(2, r.ni.sram.Write(uint64(addr), b)).To(Succeed())
}

func (r *rig) sramRead(addr uint32, n int) []byte {
	b, err := r.ni.sram.Bytes(uint64(addr), n)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return b
}

// writeDesc writes the host's next send descriptor (its sequence is set
// here) without telling the NI.
func (r *rig) writeDesc(d lci.Desc) {
	d.Seq = r.descSeq
	r.descSeq++
	r.sramWrite(r.l.SendQ+uint32(int(d.Seq-1)%r.l.SendQSlots*lci.DescBytes), d.Encode())
}

// pokeSendQ raises the HostWrite the card raises for PIO writes into the
// send queue (writes coalesce into one event).
func (r *rig) pokeSendQ() {
	r.handle(firmware.HWEvent{Kind: firmware.HostWrite, Addr: r.l.SendQ, Len: r.l.SendQSlots * lci.DescBytes})
}

// send writes one descriptor and raises HostWrite.
func (r *rig) send(d lci.Desc) {
	r.writeDesc(d)
	r.pokeSendQ()
}

// writeFetch writes an I-sdma send's address and size field (the data of
// descriptor d at host address at) into its send buffer, as host/lcilib
// does before the descriptor.
func (r *rig) writeFetch(d lci.Desc, at uint64) {
	r.sramWrite(r.l.SendBuf(int(d.Buf)), lci.Fetch{Addr: uint32(at), Len: uint32(d.Len)}.Encode())
}

// sendFrom is send of an I-sdma packet whose data is at host address at.
func (r *rig) sendFrom(d lci.Desc, at uint64) {
	r.writeFetch(d, at)
	r.send(d)
}

// writeFree gives host buffer addr back (a Recv Completions record).
func (r *rig) writeFree(addr uint64) {
	f := lci.Free{Seq: r.freeSeq, Addr: addr}
	r.freeSeq++
	r.sramWrite(r.l.FreeQ+uint32(int(f.Seq-1)%r.l.FreeQSlots*lci.FreeBytes), f.Encode())
}

func (r *rig) pokeFreeQ() {
	r.handle(firmware.HWEvent{Kind: firmware.HostWrite, Addr: r.l.FreeQ, Len: r.l.FreeQSlots * lci.FreeBytes})
}

// returnSlots gives the n oldest consumed slots back and raises HostWrite.
func (r *rig) returnSlots(n int) {
	for _, s := range r.consumed[:n] {
		r.writeFree(s)
	}
	r.consumed = r.consumed[n:]
	r.pokeFreeQ()
}

// arrive stores a packet (h with its Len set to the payload's) in the
// buffer the receive engine is armed with and raises RecvDone as the card
// does, with the link-level packet number and sender. It returns the
// buffer's address.
func (r *rig) arrive(h lci.Header, payload []byte) uint32 {
	return r.arriveLink(int(h.Src), h, payload, false)
}

// arriveLink is arrive with the link layer's sender and CRC verdict.
func (r *rig) arriveLink(src int, h lci.Header, payload []byte, bad bool) uint32 {
	a := r.ni.armedAt()
	h.Len = uint16(len(payload))
	ExpectWithOffset(2, lci.HeaderBytes+len(payload)).To(BeNumerically("<=", a.Max))
	r.sramWrite(a.Addr, append(h.Encode(), payload...))
	r.ni.armed = false
	r.pkts++
	r.handle(firmware.HWEvent{Kind: firmware.RecvDone, Addr: a.Addr, Len: lci.HeaderBytes + len(payload), Bad: bad, Tag: r.pkts, Src: src})
	return a.Addr
}

// dmaDone completes the running host DMA (the last one issued: the
// program runs one at a time), copying its data, and raises HostDMADone.
// A DMA to host fills a slot: it is consumed (and given back at once with
// autoReturn).
func (r *rig) dmaDone() {
	d := r.ni.lastDMA()
	if d.Dir == firmware.ToNI {
		b, err := r.host.Bytes(d.HostAddr, d.Len)
		Expect(err).NotTo(HaveOccurred())
		r.sramWrite(d.SRAM, b)
	} else {
		Expect(r.host.Write(d.HostAddr, r.sramRead(d.SRAM, d.Len))).To(Succeed())
		r.consumed = append(r.consumed, d.HostAddr+uint64(d.Len)-uint64(lci.SlotHeaderAt(r.cfg.MTU)+lci.HeaderBytes))
	}
	r.handle(firmware.HWEvent{Kind: firmware.HostDMADone, Tag: d.Tag})
	if r.autoReturn && d.Dir == firmware.ToHost {
		r.returnSlots(len(r.consumed))
	}
}

// sendDone raises SendDone for the last packet sent.
func (r *rig) sendDone() {
	s := r.ni.lastSend()
	r.handle(firmware.HWEvent{Kind: firmware.SendDone, Tag: s.Tag, Addr: s.SRAM, Len: s.Len})
}

// settle completes transmissions and DMAs until both engines are idle.
func (r *rig) settle() {
	for range 1000 {
		switch {
		case r.state("tx") == "BUSY":
			r.sendDone()
		case r.state("dma") == "BUSY":
			r.dmaDone()
		default:
			return
		}
	}
	Fail("the program did not settle: " + r.p.State())
}

// m returns the program's machine called name ("tx" for "FW.tx").
func (r *rig) m(name string) *firmware.Machine {
	for _, m := range r.p.Machines() {
		if m.Name() == "FW."+name {
			return m
		}
	}
	Fail("no machine " + name)
	return nil
}

func (r *rig) state(name string) firmware.State { return r.m(name).State() }

// slotHeader reads the host slot header at slot address s.
func (r *rig) slotHeader(s uint64) lci.SlotHeader {
	b, err := r.host.Bytes(s+uint64(lci.SlotHeaderAt(r.cfg.MTU)), lci.HeaderBytes)
	Expect(err).NotTo(HaveOccurred())
	return lci.DecodeSlotHeader(b)
}

// violations lists the checker violations so far as "rule path: message".
func (r *rig) violations() []string {
	var out []string
	for _, v := range r.e.Monitor.Violations() {
		out = append(out, v.Check+" "+v.Path+": "+v.Msg)
	}
	return out
}

// clean expects no checker violation.
func (r *rig) clean() {
	ExpectWithOffset(1, r.e.Monitor.Err()).NotTo(HaveOccurred())
}

// freeRecvBufs is the program's count of free receive buffers, from its
// State ("N receive buffers free").
func (r *rig) freeRecvBufs() string {
	s := r.p.State()
	return s[strings.LastIndex(s, ", ")+2:]
}

// payload returns n recognisable bytes.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}
