package tgtb_test

import (
	"encoding/binary"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Memory consistency (section 2.3.5)", func() {
	// Processor A (node 0) writes data into node 3's memory and then a
	// flag into node 2's; processor B (node 3) spins on the flag and then
	// reads the data from its own memory. Nodes 4 and 5 keep node 3's HIB
	// busy with random writes, so A's data write can still be queued there
	// when its flag write has landed on the idle node 2. Without a barrier B
	// reads stale data on some seeds; with UNLOCK's fence between the two
	// writes, never.
	producerConsumer := func(seed uint64, fence bool) (stale bool) {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock, Seed: seed})
		cl, p := cluster(e, 6, 1)
		rng := e.Rand("Background")
		for _, n := range []int{4, 5} {
			var ops []cpu.Op
			for range 60 {
				ops = append(ops, p[n].Compute(rng.IntN(100)), p[n].Store(3, uint32(0x4000+4*rng.IntN(64)), 1))
			}
			p[n].Start(ops...)
		}
		a := []cpu.Op{p[0].Compute(1000 + rng.IntN(2000)), p[0].Store(3, 0x100, 42)}
		if fence {
			a = append(a, p[0].Unlock(2, 0x200)...) // FENCE, then the flag (0 = "released")
		} else {
			a = append(a, p[0].Store(2, 0x200, 0))
		}
		p[0].Start(a...)
		var data uint32
		p[2].Start(p[2].Store(2, 0x200, 1)) // the flag starts "held"
		p[3].Start(p[3].Compute(300), p[3].SpinUntil(2, 0x200, func(v uint32) bool { return v == 0 }, func(now clock.Time, _ uint32) {
			p[3].Run(now, p[3].Load(3, 0x100, func(_ clock.Time, v uint32) { data = v }))
		}))
		run(e, cl)
		return data != 42
	}

	It("lets a consumer read stale data without a barrier on some seeds, never with one", func() {
		staleWithout, staleWith := 0, 0
		for seed := range uint64(12) {
			if producerConsumer(seed+1, false) {
				staleWithout++
			}
			if producerConsumer(seed+1, true) {
				staleWith++
			}
		}
		GinkgoWriter.Printf("stale reads in 12 seeds: %d without the barrier, %d with it\n", staleWithout, staleWith)
		Expect(staleWithout).To(BeNumerically(">", 0))
		Expect(staleWith).To(BeZero())
	})
})

var _ = Describe("Protection (section 2.2.4)", func() {
	It("refuses a shadow store with a wrong key and leaves the context and memory untouched", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 2)
		forger := cl.Proc(0, 0, 0xbad) // its own context 0, whose key is 0x100
		var got uint32 = 99
		ops := []cpu.Op{p[0].Store(1, 0x40, 5)}
		ops = append(ops, forger.FetchAndInc(1, 0x40, func(_ clock.Time, v uint32) { got = v })...)
		ops = append(ops, p[0].Fence()...)
		p[0].Start(ops...)
		run(e, cl)
		h := cl.Nodes[0].HIB
		// The shadow store is refused; the launch then finds no address
		// and is refused too: the word is untouched, the read returns 0.
		Expect(h.Stats().Refused).To(Equal(uint64(2)))
		Expect(got).To(BeZero())
		Expect(mem(cl, 1, 0x40)).To(Equal(uint32(5)))
		_, _, args := h.Context(0)
		Expect(args).To(BeEmpty())
	})

	It("keeps a process out of another's context: its MMU faults and the HIB refuses the key", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 2)
		// Node 0's process (context 0, key 0x100) tries context 1, which
		// its page table does not map and whose key it does not know.
		intruder := cl.Proc(0, 1, 0x100)
		intruder.Contexts = []int{0}
		p[0].Start(intruder.FetchAndInc(1, 0x40, nil)...)
		run(e, cl)
		Expect(intruder.Faults).To(Equal(4))                         // op, two operands, launch
		Expect(cl.Nodes[0].HIB.Stats().Refused).To(Equal(uint64(1))) // the shadow store's key
		Expect(mem(cl, 1, 0x40)).To(BeZero())
		op, data, args := cl.Nodes[0].HIB.Context(1)
		Expect(op).To(BeZero())
		Expect(data).To(Equal([2]uint32{}))
		Expect(args).To(BeEmpty())
	})

	It("refuses accesses outside the cluster and outside the shared memory", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 1)
		var got []uint32
		p[0].Start(p[0].Store(5, 0x40, 1), // node 5 of 2
			p[0].Load(7, 0x40, func(_ clock.Time, v uint32) { got = append(got, v) }),
			cpu.Op{Kind: cpu.Store, Addr: tg.WindowBase + 3<<28, Data: tg.Word(1)}, // region 3
			p[0].Store(1, 0x40, 8))
		run(e, cl)
		Expect(cl.Nodes[0].HIB.Stats().Refused).To(Equal(uint64(3)))
		Expect(got).To(Equal([]uint32{0}))
		Expect(mem(cl, 1, 0x40)).To(Equal(uint32(8))) // the legal store still works
		Expect(cl.Nodes[0].HIB.Stats().RemoteWrites).To(Equal(uint64(1)))
	})

	It("resumes an interrupted special operation from its preserved context", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 2)
		other := cl.Proc(0, 5, 0x55)
		Expect(cl.Nodes[0].HIB.SetContextKey(5, 0x55)).To(Succeed())
		var a, b uint32
		seqA := p[0].FetchAndInc(1, 0x80, func(_ clock.Time, v uint32) { a = v })
		seqB := other.FetchAndInc(1, 0x80, func(_ clock.Time, v uint32) { b = v })
		// A writes its context and passes the address, is interrupted
		// before its launch, B runs a whole fetch-and-inc on its own
		// context, and A resumes with its launch.
		ops := append([]cpu.Op{p[0].Store(1, 0x80, 10)}, seqA[:len(seqA)-1]...)
		ops = append(ops, seqB...)
		ops = append(ops, seqA[len(seqA)-1])
		p[0].Start(ops...)
		run(e, cl)
		Expect([]uint32{b, a}).To(Equal([]uint32{10, 11}))
		Expect(mem(cl, 1, 0x80)).To(Equal(uint32(12)))
		Expect(cl.Nodes[0].HIB.Stats().Refused).To(BeZero())
	})
})

var _ = Describe("Locks (section 2.3.5)", func() {
	// Every node adds one to a counter at node 0 K times by a remote read
	// and a remote write. Inside Lock/Unlock (fetch-and-store with the
	// fence) no increment is lost; without the lock, reads and writes of
	// different nodes interleave and increments are lost.
	count := func(locked bool) uint32 {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 4, 2)
		const k = 6
		for n := range 4 {
			var step func(now clock.Time, i int)
			step = func(now clock.Time, i int) {
				if i == k {
					return
				}
				incr := func(now clock.Time) {
					p[n].Run(now, p[n].Load(0, 0x500, func(now clock.Time, v uint32) {
						ops := []cpu.Op{p[n].Compute(50), p[n].Store(0, 0x500, v+1)}
						if locked {
							ops = append(ops, p[n].Unlock(0, 0x600)...)
						}
						ops = append(ops, p[n].Do(func(now clock.Time) { step(now, i+1) }))
						p[n].Run(now, ops...)
					}))
				}
				if locked {
					p[n].Run(now, p[n].Lock(0, 0x600, incr)...)
				} else {
					incr(now)
				}
			}
			p[n].Start(p[n].Do(func(now clock.Time) { step(now, 0) }))
		}
		run(e, cl)
		return mem(cl, 0, 0x500)
	}

	It("keeps every increment inside Lock/Unlock and loses some without", func() {
		Expect(count(true)).To(Equal(uint32(24)))
		Expect(count(false)).To(BeNumerically("<", 24))
	})
})

var _ = Describe("Page access counter registers (section 2.2.6)", func() {
	It("lets the OS set and read a page's counters through the HIB's registers", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 1)
		page := uint32(tg.GlobalPage(1, 5*tg.PageBytes))
		var r, w uint32
		reg := func(reg, v uint32) cpu.Op { return cpu.Op{Kind: cpu.Store, Addr: tg.RegAddr(reg), Data: tg.Word(v)} }
		read := func(reg uint32, into *uint32) cpu.Op {
			return cpu.Op{Kind: cpu.Load, Addr: tg.RegAddr(reg), Len: 4, Done: func(_ clock.Time, b []byte) { *into = binary.LittleEndian.Uint32(b) }}
		}
		p[0].Start(reg(tg.RegPCPage, page), reg(tg.RegPCRead, 10), reg(tg.RegPCWrite, 20),
			p[0].Load(1, 5*tg.PageBytes, nil), p[0].Store(1, 5*tg.PageBytes, 1), p[0].Store(1, 5*tg.PageBytes, 2),
			reg(tg.RegPCPage, page), read(tg.RegPCRead, &r), read(tg.RegPCWrite, &w))
		run(e, cl)
		Expect([]uint32{r, w}).To(Equal([]uint32{9, 18}))
	})
})
