package shrimp

// Specs of the EISA target, the UDMA initiation, the CSRs and the DU
// engine, on a rig (duRig): an EISA bus (rtl/bus's EISA preset, SH-P6) with
// host memory as a target at 0 and a test master "CPU" issuing the UDMA
// references, and one NI (node 0 of 2) whose DU engine reads the memory as
// an EISA master. The rig takes the DU stream's words itself (duPath.sink)
// in place of the outgoing arbiter, so the packets are seen as the DU
// engine hands them over, whatever the NIC does. This file is in package
// shrimp for that hook; the suite is shrimp_suite_test.go's.

import (
	"encoding/binary"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"
)

// rigOp is one access of the rig's master: a posted 4-byte store or a
// 4-byte load (then a callback sees its data).
type rigOp struct {
	load   bool
	addr   uint64
	data   uint32
	onLoad func(now clock.Time, c clock.Cycle, v uint32)
}

// rigPkt is a DU packet as the rig took it: the cycle of its header and
// last word, and the packet (with its data) and the words' data.
type rigPkt struct {
	HeadCycle, LastCycle clock.Cycle
	Pkt                  Packet
	Words                int
}

type rigLoad struct {
	Cycle  clock.Cycle
	Status Status
}

type duRig struct {
	e    *env.Env
	clk  clock.Clock
	eisa *bus.Bus
	memo *mem.Memory
	ni   *NI
	amap AddressMap
	ch   *mem.Channel
	ops  []rigOp
	// out: the load being waited for.
	out    *mem.Req
	outOp  rigOp
	loads  []rigLoad
	pkts   []rigPkt
	cur    *rigPkt
	starts []DUStart
	drops  []Drop
	// With a link (newDURigLink): the packets the far end reassembled and
	// the packets OnPacketOut saw.
	lnk     *link.Link
	wire    []Packet
	outPkts []Packet
}

// newDURig builds the rig with cfg (the EISA clock is cfg's) and mutations.
func newDURig(cfg Config, muts map[string]int) *duRig { return newDURigLimit(cfg, muts, 0) }

// duUnitConfig is the SHRIMP preset with DUSetupCycles pinned at 2: the
// hand-worked cycles of the DU specs count two setup cycles, and the
// preset's value is calibrated (config.go) and may move.
func duUnitConfig() Config {
	c := SHRIMP()
	c.DUSetupCycles = 2
	return c
}

// newDURigLimit is newDURig with a time limit (0: none).
func newDURigLimit(cfg Config, muts map[string]int, limit clock.Time) *duRig {
	r := &duRig{clk: cfg.EISAClock, amap: DefaultAddressMap()}
	r.e = vtest.NewEnv(vtest.Options{Clock: r.clk, Trace: true, Mutations: muts, TimeLimit: limit})
	var err error
	bc := bus.EISA()
	bc.Clock = r.clk
	r.eisa, err = bus.MakeBuilder().WithEnv(r.e).WithConfig(bc).Build("EISA")
	Expect(err).NotTo(HaveOccurred())
	// assumed for the rig: memory on the EISA clock, 1 cycle to the first
	// beat, a 4-byte beat per cycle (the EISA's own rate), 1 MB.
	r.memo, err = mem.MakeBuilder().WithEnv(r.e).WithClock(r.clk).WithSize(1 << 20).WithLatency(1).
		WithBytesPerCycle(4).WithPortWidth(4).Build("Mem")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.eisa.AddTarget("Mem", 0, 1<<20, r.memo.Port(0))).To(Succeed())
	r.ch, err = r.eisa.AddMaster("CPU")
	Expect(err).NotTo(HaveOccurred())
	r.ni, err = MakeBuilder().WithEnv(r.e).WithConfig(cfg).WithNode(0, 2).Build("N0.NI")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.ni.AttachEISA(r.eisa, r.amap)).To(Succeed())
	r.ni.du.sink = func(now clock.Time, w streamWord) {
		c := r.clk.CycleAt(now)
		if r.cur == nil {
			Expect(w.Data).To(BeNil(), "a packet starts with its header word")
			r.cur = &rigPkt{HeadCycle: c}
			return
		}
		r.cur.Words++
		if w.Last {
			r.cur.LastCycle = c
			r.cur.Pkt = *w.Pkt
			r.pkts = append(r.pkts, *r.cur)
			r.cur = nil
		}
	}
	r.ni.OnDUStart(func(_ clock.Time, d DUStart) { r.starts = append(r.starts, d) })
	r.ni.OnDrop(func(_ clock.Time, d Drop) { r.drops = append(r.drops, d) })
	pat := make([]byte, 1<<16)
	for i := range pat {
		pat[i] = byte(i*7 + i>>8 + 3)
	}
	Expect(r.memo.Storage().Write(0, pat)).To(Succeed())
	return r
}

// newDURigLink builds the rig with the whole outgoing path: the DU stream
// goes through the NI's arbiter, NIC port and NIC onto a Paragon terminal
// link (2-B flits at 100 MHz, one VC of 16 flits, SH-P3) whose far end
// takes every flit and reassembles the packets (route flit, 8-B header,
// data: packet.go). With drain false the far end takes nothing (a blocked
// network) and the run stops at limit.
func newDURigLink(cfg Config, drain bool, limit clock.Time) *duRig {
	r := newDURigLimit(cfg, nil, limit)
	r.ni.du.sink = nil
	var err error
	r.lnk, err = link.MakeBuilder().WithEnv(r.e).WithConfig(link.Config{Clock: cfg.LinkClock, BytesPerCycle: 2,
		VCs: 1, FlowControl: link.Credits, BufferFlits: 16, CreditDelay: 1, TxDepth: 1}).Build("Link")
	Expect(err).NotTo(HaveOccurred())
	Expect(r.ni.ConnectLink(r.lnk.From(link.A), r.lnk.From(link.B))).To(Succeed())
	r.ni.OnPacketOut(func(_ clock.Time, p *Packet) { r.outPkts = append(r.outPkts, *p) })
	far := r.lnk.From(link.A)
	var bytes []byte
	var sink *vtest.Agent
	sink = vtest.NewAgent(r.e, "Far", cfg.LinkClock, func(now clock.Time, _ clock.Cycle) bool {
		f, ok := far.Rx(0).Pop(now)
		if !ok {
			return false
		}
		if f.Head {
			bytes = nil
		}
		bytes = append(bytes, f.Data...)
		if f.Tail {
			h, err := DecodeHeader(bytes[cfg.RouteBytes : cfg.RouteBytes+cfg.HeaderBytes])
			Expect(err).NotTo(HaveOccurred())
			h.Data = bytes[cfg.RouteBytes+cfg.HeaderBytes:]
			h.Dst = int(bytes[0]) // the route flit names the destination
			r.wire = append(r.wire, h)
		}
		return true
	})
	if drain {
		far.SetReceiver(sink)
		sink.Start()
	} else {
		// A clock that keeps the run going to its limit (nothing is
		// popped: the watchdog would call the full link a deadlock).
		vtest.NewAgent(r.e, "Clock", cfg.LinkClock, func(clock.Time, clock.Cycle) bool { return true }).Start()
	}
	return r
}

// store queues a STORE of v at EISA address a; load a LOAD.
func (r *duRig) store(a uint64, v uint32) { r.ops = append(r.ops, rigOp{addr: a, data: v}) }
func (r *duRig) load(a uint64, fn func(now clock.Time, c clock.Cycle, v uint32)) {
	r.ops = append(r.ops, rigOp{load: true, addr: a, onLoad: fn})
}

// pair queues the UDMA pair: STORE count|notify to the device proxy of OPT
// entry opt at offset off, LOAD of the memory proxy at src.
func (r *duRig) pair(opt int, off uint64, count int, notify bool, src uint64) {
	v := uint32(count)
	if notify {
		v |= UDMANotify
	}
	r.store(r.amap.DevProxy+uint64(opt)*4096+off, v)
	r.load(r.amap.MemProxy+src, nil)
}

func (r *duRig) csr(reg uint64) uint64 { return r.amap.CSR + r.ni.cfg.CSRReg(reg) }

// run drives the master: ops in order, one per cycle at most, each load
// waited for before the next op; then runs the simulation to its end.
func (r *duRig) run() {
	vtest.NewAgent(r.e, "Agent", r.clk, func(now clock.Time, c clock.Cycle) bool {
		if r.out != nil {
			b, ok := r.ch.Up.Pop(now)
			if !ok {
				return true
			}
			Expect(b.Err).To(BeEmpty())
			var w [4]byte
			copy(w[:], b.Data)
			v := binary.LittleEndian.Uint32(w[:])
			if r.out.Addr >= r.amap.MemProxy && r.out.Addr < r.amap.DevProxy {
				r.loads = append(r.loads, rigLoad{Cycle: c, Status: Status(v)})
			}
			fn := r.outOp.onLoad
			r.out = nil
			if fn != nil {
				fn(now, c, v)
			}
			return true
		}
		if len(r.ops) == 0 {
			return false
		}
		if !r.ch.Down.CanPush(now) {
			return true
		}
		op := r.ops[0]
		r.ops = r.ops[1:]
		if op.load {
			r.out = &mem.Req{Op: mem.Read, Addr: op.addr, Len: 4, Class: "pio", Master: "CPU"}
			r.outOp = op
			r.ch.Down.Push(now, mem.Beat{Req: r.out, First: true, Last: true})
			return true
		}
		var w [4]byte
		binary.LittleEndian.PutUint32(w[:], op.data)
		req := &mem.Req{Op: mem.Write, Addr: op.addr, Len: 4, Posted: true, Class: "pio", Master: "CPU"}
		r.ch.Down.Push(now, mem.Beat{Req: req, Data: w[:], First: true, Last: true})
		return true
	}).Start()
	_, err := r.e.Run()
	Expect(err).NotTo(HaveOccurred())
}

// pattern returns the rig memory's bytes [a, a+n).
func (r *duRig) bytes(a uint64, n int) []byte {
	b, err := r.memo.Storage().Bytes(a, n)
	Expect(err).NotTo(HaveOccurred())
	return b
}

// duBus returns the DU master's bus counters.
func (r *duRig) duBus() bus.MasterStats { return r.eisa.Stats().Masters[1] }

func statuses(ls []rigLoad) []Status {
	out := make([]Status, len(ls))
	for i, l := range ls {
		out[i] = l.Status
	}
	return out
}

var _ = Describe("UDMA and the DU engine", func() {
	// Every spec's NI: OPT entry 1 imports node 1's page 5 (the DU
	// destination), entry 2 node 1's page 6.
	setOPT := func(r *duRig) {
		Expect(r.ni.SetOPT(1, OPTEntry{Valid: true, DstNode: 1, DstPage: 5})).To(Succeed())
		Expect(r.ni.SetOPT(2, OPTEntry{Valid: true, DstNode: 1, DstPage: 6})).To(Succeed())
	}

	It("sends a 4-byte DU: STORE, LOAD → started, one packet of the source's bytes", func() {
		r := newDURig(duUnitConfig(), nil)
		setOPT(r)
		r.pair(1, 0x10, 4, true, 0x2008)
		r.run()
		// Worked by hand (EISA preset: arb 1, addr 1, no decode, idle 1).
		// STORE pushed c0, seen by the bus c1: arb c1, addr c2, data c3
		// (the beat reaches the device proxy port, visible c4: DestLoaded
		// at c4), idle c4. LOAD pushed c1: arb c5, addr c6 (request to the
		// memory proxy port, visible c7), the NI serves it at c7
		// (StatusWaitCycles 1 = the channel register): status pushed c7,
		// the bus's data phase c8 (one wait state at c7), the master sees
		// it at c9.
		Expect(r.loads).To(Equal([]rigLoad{{Cycle: 9, Status: StatusStarted}}))
		// Started at c7; the engine pops the descriptor at c8, sets up
		// c8..c9 (DUSetupCycles 2), issues its read at c10: arb c11, addr
		// c12, memory accepts c13 and has the beat at c14 (latency 1), data
		// phase c15, the engine has it c16, writes it to its stream c17;
		// the NI pops the 4-B chunk at c18 and pushes the header (the first
		// data word is ready), the data word (last) at c19.
		Expect(r.pkts).To(HaveLen(1))
		p := r.pkts[0]
		Expect([]clock.Cycle{p.HeadCycle, p.LastCycle}).To(Equal([]clock.Cycle{18, 19}))
		want := Packet{Kind: KindDU, Src: 0, Dst: 1, DstAddr: 5*4096 + 0x10, SrcAddr: 0x2008, Len: 4,
			Notify: true, Flush: FlushStore, Data: r.bytes(0x2008, 4)}
		Expect(cmp.Diff(want, p.Pkt)).To(BeEmpty())
		Expect(r.starts).To(Equal([]DUStart{{Node: 0, Src: 0x2008, OPT: 1, DstAddr: 5*4096 + 0x10, Len: 4, Notify: true, Tag: 1}}))
		c := r.ni.Counters()
		Expect([]uint64{c.UDMAStarts, c.UDMABusy, c.UDMAErrors}).To(Equal([]uint64{1, 0, 0}))
		Expect(r.ni.DUPending(2)).To(BeFalse())
	})

	It("sends a 4 KB DU page in four 1 KB EISA bursts", func() {
		r := newDURig(duUnitConfig(), nil)
		setOPT(r)
		r.pair(2, 0, 4096, false, 0x3000)
		r.run()
		Expect(statuses(r.loads)).To(Equal([]Status{StatusStarted}))
		// Worked by hand: read k (k = 0..3, DMABurstBytes 1024 = the
		// EISA's MaxBurstBytes) is issued at c10 + 261k: arb +1, addr +2,
		// memory accepts +3 and has its first beat +4, 256 data phases
		// +5..+260, the engine takes the last beat at +261 and issues the
		// next read in that cycle (its staging never fills: the stream
		// drains 8 B per cycle, the bus brings 4). Last beat taken c10 +
		// 3×261 + 261 = c1054, written to the stream c1055, popped by the
		// NI c1056, which completes the last 8-B word: pushed c1056.
		Expect(r.pkts).To(HaveLen(1))
		p := r.pkts[0]
		Expect(p.LastCycle).To(Equal(clock.Cycle(1056)))
		// 4096 / 8 = 512 data words after the header.
		Expect(p.Words).To(Equal(512))
		Expect(p.Pkt.Data).To(Equal(r.bytes(0x3000, 4096)))
		Expect(p.Pkt.DstAddr).To(Equal(uint64(6 * 4096)))
		Expect(r.duBus().Bursts).To(Equal(uint64(4)))
		Expect(r.duBus().Bytes).To(Equal(uint64(4096)))
	})

	It("hands a 4 KB DU packet to the arbiter and the NIC, which put it on the link whole", func() {
		r := newDURigLink(SHRIMP(), true, 0)
		setOPT(r)
		r.pair(2, 0x100, 3840, true, 0x3100)
		r.run()
		Expect(statuses(r.loads)).To(Equal([]Status{StatusStarted}))
		Expect(r.wire).To(HaveLen(1))
		w := r.wire[0]
		Expect([]any{w.Kind, w.Src, w.Dst, w.DstAddr, w.Len, w.Notify}).To(Equal([]any{KindDU, 0, 1, uint64(6*4096 + 0x100), 3840, true}))
		Expect(w.Data).To(Equal(r.bytes(0x3100, 3840)))
		Expect(r.outPkts).To(HaveLen(1))
		Expect(r.outPkts[0].Seq).To(Equal(uint64(1)))
		c := r.ni.Counters()
		Expect([]uint64{c.UDMAStarts, c.DUPackets, c.DUBytes}).To(Equal([]uint64{1, 1, 3840}))
	})

	It("stops reading when the network is blocked, and no EISA tenure waits for it (design R3)", func() {
		cfg := SHRIMP()
		cfg.DUQueue = 2
		r := newDURigLink(cfg, false, clock.Time(150_000_000)) // 150 µs
		setOPT(r)
		for i := range 3 {
			r.pair(1, 0, 4096, false, uint64(i+1)*4096)
		}
		r.run()
		// Nothing leaves the link. Transfer 1's 4 KB fits downstream of the
		// EISA (the link's 16 flits, the NIC's TX FIFO, the DU stream's 2
		// KB, the engine's output and its 2 KB of staging), so its four
		// bursts are read; the engine begins transfer 2 only when transfer
		// 1 is handed on whole, which never happens: no fifth read. The
		// three pairs are accepted (2 and 3 queued) and stay pending.
		Expect(statuses(r.loads)).To(Equal([]Status{StatusStarted, StatusStarted, StatusStarted}))
		b := r.duBus()
		Expect(b.Bursts).To(Equal(uint64(4)))
		Expect(b.Bytes).To(Equal(uint64(4096)))
		// Each burst's only wait states are the memory's: its first beat
		// is there 3 cycles after the address phase (accepted +1, latency
		// 1, the channel register +1), the data phase starts the cycle
		// after the address phase: 2 wait states; then a beat per cycle.
		Expect(b.WaitCycles).To(Equal(2 * b.Bursts))
		Expect(r.wire).To(BeEmpty())
		Expect([]bool{r.ni.DUPending(1), r.ni.DUPending(2), r.ni.DUPending(3)}).To(Equal([]bool{true, true, true}))
	})

	DescribeTable("refuses a request with the cause, and moves nothing",
		func(opt int, off uint64, count int, src uint64, want Status) {
			r := newDURig(duUnitConfig(), nil)
			setOPT(r)
			r.pair(opt, off, count, false, src)
			r.run()
			Expect(statuses(r.loads)).To(Equal([]Status{want}))
			Expect(r.pkts).To(BeEmpty())
			Expect(r.duBus().Requests).To(BeZero())
			Expect(r.ni.Counters().UDMAErrors).To(Equal(uint64(1)))
			Expect(r.drops).To(Equal([]Drop{{Reason: DropUDMA, Node: 0, Addr: src, Len: count}}))
			st, last := r.ni.UDMA()
			Expect(st).To(Equal(UDMAIdle))
			Expect(last).To(Equal(want))
		},
		Entry("a remote page crossing (0xf80 + 200 > 4096)", 1, uint64(0xf80), 200, uint64(0x2000), StatusError|CauseCross),
		Entry("a local page crossing (0x2f80 + 200)", 1, uint64(0), 200, uint64(0x2f80), StatusError|CauseCross),
		Entry("a size above 4 KB (which also crosses)", 1, uint64(0), 5000, uint64(0x2000), StatusError|CauseCross|CauseSize),
		Entry("a count of 0", 1, uint64(0), 0, uint64(0x2000), StatusError|CauseSize),
		Entry("an invalid OPT entry", 7, uint64(0), 64, uint64(0x2000), StatusError|CauseOPT),
	)

	It("answers busy while the engine runs (DUQueue 0), and a retried LOAD starts", func() {
		r := newDURig(duUnitConfig(), nil)
		setOPT(r)
		r.pair(1, 0, 4096, false, 0x1000)
		r.store(r.amap.DevProxy+2*4096, 64)
		var retry func(now clock.Time, c clock.Cycle, v uint32)
		retry = func(_ clock.Time, _ clock.Cycle, v uint32) {
			if Status(v) == StatusBusy {
				r.ops = append([]rigOp{{load: true, addr: r.amap.MemProxy + 0x4000, onLoad: retry}}, r.ops...)
			}
		}
		r.load(r.amap.MemProxy+0x4000, retry)
		r.run()
		// Worked by hand. The master pushes an op in the cycle after the
		// last load returned, a store and the load behind it in successive
		// cycles; the bus grants round robin, so the master gets one
		// tenure between two of the engine's 1 KB bursts. The first pair
		// is started at c7 (status seen c9, as in the 4-byte spec). The
		// second STORE (pushed c10) and the engine's first read (issued
		// c10) both ask at c11: the engine first (the master had the last
		// grant): data c15..c270, idle c271; the STORE: arb c272, addr
		// c273, data c274, idle c275; read 2: arb c276 .. data c280..c535,
		// idle c536; the LOAD: arb c537, addr c538, served c539 with reads
		// 3 and 4 to go: busy, seen c541. Read 3: arb c542 .. data
		// c546..c801, idle c802; the retry (pushed c542): arb c803, served
		// c805: busy, seen c807. Read 4: arb c808 .. data c812..c1067,
		// idle c1068; the engine takes the last beat c1068, streams it
		// c1069 and finishes c1070, freeing its slot from c1071; the
		// second retry (pushed c808): arb c1069, addr c1070, served c1071:
		// started, seen c1073.
		Expect(r.loads).To(Equal([]rigLoad{{9, StatusStarted}, {541, StatusBusy}, {807, StatusBusy}, {1073, StatusStarted}}))
		c := r.ni.Counters()
		Expect([]uint64{c.UDMAStarts, c.UDMABusy, c.UDMAErrors}).To(Equal([]uint64{2, 2, 0}))
		Expect(r.pkts).To(HaveLen(2))
		Expect(r.pkts[0].Pkt.Data).To(Equal(r.bytes(0x1000, 4096)))
		Expect(r.pkts[1].Pkt.Data).To(Equal(r.bytes(0x4000, 64)))
		Expect(r.pkts[1].Pkt.DstAddr).To(Equal(uint64(6 * 4096)))
	})

	It("refuses a LOAD after the kernel's invalidation (context switch), and the retried pair starts", func() {
		r := newDURig(duUnitConfig(), nil)
		setOPT(r)
		r.store(r.amap.DevProxy+4096, 64)
		r.store(r.csr(RegInval), 1)
		r.load(r.amap.MemProxy+0x2000, nil)
		r.pair(1, 0, 64, false, 0x2000)
		r.run()
		Expect(statuses(r.loads)).To(Equal([]Status{StatusError | CauseNoDest, StatusStarted}))
		Expect(r.drops).To(Equal([]Drop{{Reason: DropUDMA, Node: 0, Addr: 0x2000}}))
		Expect(r.pkts).To(HaveLen(1))
		Expect(r.starts).To(HaveLen(1))
		Expect(r.duBus().Requests).To(Equal(uint64(1)))
	})

	It("with shrimp.udma-noinval, a destination survives the invalidation and the LOAD starts", func() {
		r := newDURig(duUnitConfig(), map[string]int{"shrimp.udma-noinval": 1})
		setOPT(r)
		r.store(r.amap.DevProxy+4096, 64)
		r.store(r.csr(RegInval), 1)
		r.load(r.amap.MemProxy+0x2000, nil)
		r.run()
		Expect(statuses(r.loads)).To(Equal([]Status{StatusStarted}))
		Expect(r.pkts).To(HaveLen(1))
	})

	It("with shrimp.du-cross, a crossing request starts (the protection monitor's case)", func() {
		r := newDURig(duUnitConfig(), map[string]int{"shrimp.du-cross": 1})
		setOPT(r)
		r.pair(1, 0, 256, false, 0x2f80)
		r.run()
		Expect(statuses(r.loads)).To(Equal([]Status{StatusStarted}))
		Expect(r.pkts).To(HaveLen(1))
		Expect(r.pkts[0].Pkt.Data).To(Equal(r.bytes(0x2f80, 256)))
	})

	It("queues two requests behind the running one (DUQueue 2), with the CAM reporting their pages", func() {
		cfg := SHRIMP()
		cfg.DUQueue = 2
		r := newDURig(cfg, nil)
		setOPT(r)
		var pending [][]bool
		snap := func(_ clock.Time, _ clock.Cycle, _ uint32) {
			var p []bool
			for pg := 1; pg <= 6; pg++ {
				p = append(p, r.ni.DUPending(pg))
			}
			pending = append(pending, p)
		}
		for i := range 6 {
			r.store(r.amap.DevProxy+4096, 4096)
			r.load(r.amap.MemProxy+uint64(i+1)*4096, snap)
		}
		// The CAM through the CSRs: pages 4 and 1.
		var cam []uint32
		keep := func(_ clock.Time, _ clock.Cycle, v uint32) { cam = append(cam, v) }
		r.store(r.csr(RegCAMQuery), 4)
		r.load(r.csr(RegCAMResult), keep)
		r.store(r.csr(RegCAMQuery), 1)
		r.load(r.csr(RegCAMResult), keep)
		r.run()
		// Worked by hand: the master gets one bus tenure between two of
		// the engine's 1 KB bursts (round robin, see the busy spec), so a
		// pair (STORE, LOAD) takes two bursts and a 4 KB transfer four:
		// the LOADs come after bursts 2, 4, 6, 8, 10 of the engine. After
		// burst 2 transfer 1 runs: 2 is queued; after burst 4 transfer 1
		// is read (freed): 2 runs, 3 queued; after 6: 2 runs, 3, 4
		// queued (1 + DUQueue = 3 accepted); after 8 transfer 2 is read:
		// 5 queued behind 3 and 4; after 10: 3 runs, 4 and 5 wait: busy.
		Expect(statuses(r.loads)).To(Equal([]Status{StatusStarted, StatusStarted, StatusStarted, StatusStarted, StatusStarted, StatusBusy}))
		queued := []bool{}
		for _, s := range r.starts {
			queued = append(queued, s.Queued)
		}
		Expect(queued).To(Equal([]bool{false, true, true, true, true}))
		Expect(pending).To(Equal([][]bool{
			{true, false, false, false, false, false},
			{true, true, false, false, false, false},
			{false, true, true, false, false, false},
			{false, true, true, true, false, false},
			{false, false, true, true, true, false},
			{false, false, true, true, true, false},
		}))
		// Queried after bursts 12 and 14: transfer 4 (bursts 13..16) is
		// pending, transfer 1 long done.
		Expect(cam).To(Equal([]uint32{1, 0}))
		Expect(r.pkts).To(HaveLen(5))
		for i, p := range r.pkts {
			Expect(p.Pkt.Data).To(Equal(r.bytes(uint64(i+1)*4096, 4096)), "packet %d", i)
		}
		for pg := 1; pg <= 6; pg++ {
			Expect(r.ni.DUPending(pg)).To(BeFalse(), "page %d after the run", pg)
		}
		st, _ := r.ni.UDMA()
		Expect(st).To(Equal(UDMADestLoaded), "the busy request's destination stays latched")
	})

	It("reads and writes the OPT, IPT and registers through the CSR window", func() {
		r := newDURig(duUnitConfig(), nil)
		base := r.amap.CSR
		r.store(base+OPTBase+3*OPTEntryBytes+4, 77)
		r.store(base+OPTBase+3*OPTEntryBytes, CSROPTValid|CSROPTAU|CSROPTCombine|1<<CSROPTNodeShift|11)
		var got []uint32
		keep := func(_ clock.Time, _ clock.Cycle, v uint32) { got = append(got, v) }
		r.load(base+OPTBase+3*OPTEntryBytes, keep)
		r.store(r.csr(RegThreshold), 1024)
		r.load(r.csr(RegThreshold), keep)
		r.store(r.amap.DevProxy+4096, 8)
		r.load(r.csr(RegStatus), keep)
		r.run()
		// 11 encodes a 1 << 10 = 1024-byte sub-page.
		Expect(r.ni.OPT(3)).To(Equal(OPTEntry{Valid: true, AU: true, Combine: true, Subpage: 1024, DstNode: 1, DstPage: 77}))
		Expect(got).To(Equal([]uint32{CSROPTValid | CSROPTAU | CSROPTCombine | 1<<CSROPTNodeShift | 11, 1024, CSRStatusDest}))
		Expect(r.ni.FIFOThreshold()).To(Equal(1024))
	})

	It("pops notification records and acknowledges interrupt causes through the CSRs", func() {
		r := newDURig(duUnitConfig(), nil)
		Expect(r.ni.pushNotify(Notification{Page: 12, Src: 3})).To(BeTrue())
		Expect(r.ni.pushNotify(Notification{Page: 40, Src: 1})).To(BeTrue())
		r.ni.raise(0, IRQNotify|IRQThreshold)
		var got []uint32
		keep := func(_ clock.Time, _ clock.Cycle, v uint32) { got = append(got, v) }
		for range 3 {
			r.load(r.csr(RegNotify), keep)
			r.load(r.csr(RegNotify+4), keep)
		}
		r.load(r.csr(RegStatus), keep)
		r.store(r.csr(RegIRQAck), uint32(IRQNotify))
		r.load(r.csr(RegStatus), keep)
		r.run()
		Expect(got).To(Equal([]uint32{
			12, CSRNotifyValid | 3, // the oldest record first
			40, CSRNotifyValid | 1,
			0, 0, // empty: valid clear
			uint32(IRQNotify | IRQThreshold), uint32(IRQThreshold),
		}))
		Expect(r.ni.Notifications()).To(BeZero())
	})
})
