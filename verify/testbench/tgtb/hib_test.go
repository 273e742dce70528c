package tgtb_test

import (
	"encoding/binary"
	"fmt"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/tglib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/tgtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var tcClock = clock.Hz(12_500_000)

// cluster builds n nodes of the given HIB version with every process on
// context = node, key = 0x100+node.
func cluster(e *env.Env, n, version int, mod ...func(*tgtb.ClusterConfig)) (*tgtb.Cluster, []*tglib.Proc) {
	GinkgoHelper()
	c := tgtb.DefaultCluster(n)
	if version == 2 {
		c.HIB = tg.TelegraphosII()
	}
	for _, m := range mod {
		m(&c)
	}
	cl, err := tgtb.BuildCluster(e, c)
	Expect(err).NotTo(HaveOccurred())
	procs := make([]*tglib.Proc, n)
	for i := range n {
		procs[i] = cl.Proc(i, i, uint16(0x100+i))
		if version == 2 {
			Expect(cl.Nodes[i].HIB.SetContextKey(i, uint16(0x100+i))).To(Succeed())
		}
	}
	return cl, procs
}

// run runs the simulation and expects every checker and the watchdog to be
// clean and every packet to be accounted for.
func run(e *env.Env, cl *tgtb.Cluster) env.Result {
	GinkgoHelper()
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	cl.Packets.Finish(res.End)
	Expect(e.Monitor.Err()).NotTo(HaveOccurred())
	return res
}

// mem reads word off of node's shared memory directly.
func mem(cl *tgtb.Cluster, node int, off uint32) uint32 {
	b := make([]byte, 4)
	Expect(cl.Nodes[node].Shared.Storage().Read(uint64(off), b)).To(Succeed())
	return binary.LittleEndian.Uint32(b)
}

var _ = Describe("Telegraphos HIB", func() {
	It("reproduces the paper's measurements within 10% (section 3.2)", func() {
		// Two DEC 3000/300s; node 0 makes remote accesses to node 1 (TG-P3).
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		b, cl, _, err := tgtb.MeasureBasics(e, tgtb.DefaultCluster(2), 2000)
		Expect(err).NotTo(HaveOccurred())
		cl.Packets.Finish(e.Now())
		Expect(e.Monitor.Err()).NotTo(HaveOccurred())
		Expect(b.Write).To(BeNumerically("~", 700*clock.Nanosecond, 70*clock.Nanosecond))
		Expect(b.Read).To(BeNumerically("~", 7200*clock.Nanosecond, 720*clock.Nanosecond))
		// «a stream of 100 remote write operations takes less than 50 µs»
		Expect(b.Stream100).To(BeNumerically("<", 50*clock.Microsecond))
		Expect(b.Stream100).To(BeNumerically(">", 45*clock.Microsecond))
	})

	DescribeTable("writes and reads remote and local words",
		func(version int) {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock})
			cl, p := cluster(e, 3, version)
			var got []uint32
			p[0].Start(p[0].Store(1, 0x40, 7), p[0].Store(0, 0x80, 9), p[0].Store(2, 0x1000, 11),
				p[0].Load(1, 0x40, func(_ clock.Time, v uint32) { got = append(got, v) }),
				p[0].Load(0, 0x80, func(_ clock.Time, v uint32) { got = append(got, v) }),
				p[0].Load(2, 0x1000, func(_ clock.Time, v uint32) { got = append(got, v) }))
			run(e, cl)
			// A remote read after a remote write to the same node sees it:
			// one request channel, served in order.
			Expect(got).To(Equal([]uint32{7, 9, 11}))
			Expect([]uint32{mem(cl, 1, 0x40), mem(cl, 0, 0x80), mem(cl, 2, 0x1000)}).To(Equal([]uint32{7, 9, 11}))
			Expect(cl.Nodes[0].HIB.Stats().RemoteWrites).To(Equal(uint64(2)))
			Expect(cl.Nodes[0].HIB.Stats().RemoteReads).To(Equal(uint64(2)))
			Expect(cl.Nodes[0].HIB.Outstanding()).To(BeZero())
		},
		Entry("Telegraphos I", 1),
		Entry("Telegraphos II", 2),
	)

	DescribeTable("hands out every value of a fetch-and-increment counter exactly once",
		func(version, nodes, each int) {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock})
			cl, p := cluster(e, nodes, version)
			var got []uint32
			for i := range nodes {
				var ops []cpu.Op
				for range each {
					ops = append(ops, p[i].FetchAndInc(0, 0x100, func(_ clock.Time, old uint32) { got = append(got, old) })...)
				}
				p[i].Start(ops...)
			}
			run(e, cl)
			Expect(got).To(HaveLen(nodes * each))
			Expect(got).To(ConsistOf(seq(nodes * each)))
			Expect(mem(cl, 0, 0x100)).To(Equal(uint32(nodes * each)))
		},
		Entry("Telegraphos I, 4 nodes", 1, 4, 25),
		Entry("Telegraphos II, 8 nodes", 2, 8, 12),
	)

	DescribeTable("performs compare-and-swap and fetch-and-store atomically at the home node",
		func(version, home int) {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock})
			cl, p := cluster(e, 2, version)
			var got []uint32
			rec := func(_ clock.Time, v uint32) { got = append(got, v) }
			ops := []cpu.Op{p[0].Store(home, 0x20, 5)}
			ops = append(ops, p[0].CompareAndSwap(home, 0x20, 4, 40, rec)...) // fails: 5 != 4
			ops = append(ops, p[0].CompareAndSwap(home, 0x20, 5, 50, rec)...) // succeeds
			ops = append(ops, p[0].FetchAndStore(home, 0x20, 60, rec)...)
			ops = append(ops, p[0].Load(home, 0x20, rec))
			p[0].Start(ops...)
			run(e, cl)
			Expect(got).To(Equal([]uint32{5, 5, 50, 60}))
		},
		Entry("Telegraphos I, remote", 1, 1),
		Entry("Telegraphos I, local", 1, 0),
		Entry("Telegraphos II, remote", 2, 1),
		Entry("Telegraphos II, local", 2, 0),
	)

	DescribeTable("copies a remote word into local memory without waiting, and Fence waits for it",
		func(version int) {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock})
			cl, p := cluster(e, 2, version)
			var launched, fenced clock.Time
			var got uint32
			ops := []cpu.Op{p[0].Store(1, 0x300, 77)}
			ops = append(ops, p[0].Fence()...)
			ops = append(ops, p[0].RemoteCopy(1, 0x300, 0x10)...)
			ops = append(ops, p[0].Do(func(now clock.Time) { launched = now }))
			ops = append(ops, p[0].Fence()...)
			ops = append(ops, p[0].Do(func(now clock.Time) { fenced = now }), p[0].Load(0, 0x10, func(_ clock.Time, v uint32) { got = v }))
			p[0].Start(ops...)
			run(e, cl)
			Expect(got).To(Equal(uint32(77)))
			// The copy needs a round trip of several µs; its launch did not
			// wait for it, the fence did.
			Expect(fenced - launched).To(BeNumerically(">", 2*clock.Microsecond))
			Expect(cl.Nodes[0].HIB.Stats().Copies).To(Equal(uint64(1)))
		},
		Entry("Telegraphos I", 1),
		Entry("Telegraphos II", 2),
	)

	It("raises a page alarm exactly when a page access counter runs out", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 2, 1)
		page := tg.GlobalPage(1, 3*tg.PageBytes)
		cl.Nodes[0].HIB.SetPageCounters(page, 3, 2)
		var alarms []uint32
		var reads int
		var readsAtAlarm []int
		p[0].OnPageAlarm(func(_ clock.Time, gp uint32) {
			alarms = append(alarms, gp)
			readsAtAlarm = append(readsAtAlarm, reads)
		})
		var ops []cpu.Op
		for i := range 5 {
			ops = append(ops, p[0].Load(1, 3*tg.PageBytes+uint32(4*i), func(clock.Time, uint32) { reads++ }))
		}
		// Another page's accesses do not count; writes count separately.
		ops = append(ops, p[0].Load(1, 4*tg.PageBytes, nil), p[0].Store(1, 3*tg.PageBytes, 1))
		p[0].Start(ops...)
		run(e, cl)
		// Read counter 3: the third read takes it from 1 to 0, and the
		// handler runs before the next operation.
		Expect(alarms).To(Equal([]uint32{uint32(page)}))
		Expect(readsAtAlarm).To(Equal([]int{3}))
		r, w := cl.Nodes[0].HIB.PageCounters(page)
		Expect([]uint32{r, w}).To(Equal([]uint32{0, 1}))
		Expect(cl.Nodes[0].HIB.Stats().PageAlarms).To(Equal(uint64(1)))
		Expect(cl.Nodes[0].CPU.Interrupts()).To(Equal(uint64(1)))
	})

	It("runs the alarm handler after the DEC 3000's kernel interrupt entry, with no signal to user level", func() {
		// alarmAt is when the handler saw the alarm (after its two
		// register loads), on a cluster whose hosts have the given OS
		// costs.
		alarmAt := func(os cpu.OSCosts) clock.Time {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock})
			cl, p := cluster(e, 2, 1, func(c *tgtb.ClusterConfig) { c.Host.OS = os })
			cl.Nodes[0].HIB.SetPageCounters(tg.GlobalPage(1, 3*tg.PageBytes), 1, 0)
			var at []clock.Time
			p[0].OnPageAlarm(func(now clock.Time, _ uint32) { at = append(at, now) })
			p[0].Start(p[0].Load(1, 3*tg.PageBytes, nil), p[0].Load(1, 3*tg.PageBytes+4, nil))
			run(e, cl)
			Expect(at).To(HaveLen(1))
			return at[0]
		}
		os := tgtb.DefaultCluster(2).Host.OS
		// The preset's kernel interrupt: entry and return cost a system
		// call's, not Cashmere-2L's interrupt to a user-level handler.
		Expect([]int{os.InterruptEntry, os.InterruptReturn}).To(Equal([]int{os.TrapEntry, os.TrapReturn}))
		// Both runs take the interrupt at CPU cycle 1069 (7126.667 ns),
		// while the read that raised it ends its TURBOchannel transaction
		// at TC cycle 89 (80 ns cycles). Without OS costs the handler's
		// first load (issued 4 cycles later, 7153.333 ns) waits out the
		// bus's idle cycle 90 and starts at TC cycle 91. With the entry it
		// issues at CPU cycle 1069 + 1320 + 4 = 2393 = 15953.333 ns, on an
		// idle bus, and starts at the next TC edge, cycle 200 (16000 ns).
		// The rest of the handler is the same in both: the alarm is seen
		// (200 − 91) × 80 ns = 8720 ns later, the 8.8 µs entry less the
		// wait for the bus it no longer has.
		Expect(alarmAt(os) - alarmAt(cpu.OSCosts{})).To(Equal(clock.Time(8_720_000)))
	})

	It("multicasts every store to a mapped-out page to all its copies", func() {
		e := vtest.NewEnv(vtest.Options{Clock: tcClock})
		cl, p := cluster(e, 4, 1)
		Expect(cl.Nodes[0].HIB.MapOut(2, tg.Copy{Node: 1, Page: 5}, tg.Copy{Node: 2, Page: 6}, tg.Copy{Node: 3, Page: 7})).To(Succeed())
		var ops []cpu.Op
		for i := range 20 {
			ops = append(ops, p[0].Store(0, 2*tg.PageBytes+uint32(4*i), uint32(100+i)))
		}
		p[0].Start(ops...)
		run(e, cl)
		for i := range 20 {
			off := uint32(4 * i)
			Expect([]uint32{mem(cl, 0, 2*tg.PageBytes+off), mem(cl, 1, 5*tg.PageBytes+off),
				mem(cl, 2, 6*tg.PageBytes+off), mem(cl, 3, 7*tg.PageBytes+off)}).To(HaveEach(uint32(100 + i)))
		}
		Expect(cl.Nodes[0].HIB.Stats().Reflects).To(Equal(uint64(60)))
	})
})

// seq returns 0..n-1.
func seq(n int) []uint32 {
	s := make([]uint32, n)
	for i := range s {
		s[i] = uint32(i)
	}
	return s
}

var _ = fmt.Sprint
