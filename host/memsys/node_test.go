package memsys_test

import (
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// tracedNode runs four host/cpu CPUs of the benchmarks' mixed program (ops
// each, over 64 KiB apiece and the shared 4 KiB) with seed and returns the
// trace and the node.
func tracedNode(seed uint64, ops int) ([]string, *memsys.Node) {
	e := env.New(env.Options{Seed: seed, Trace: trace.NewRecorder()})
	cclk := clock.MHz(233)
	n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(4, cclk).WithBus(benchBus()).
		WithMemory(4<<20, 0, 2, 0).Build("N")
	Expect(err).NotTo(HaveOccurred())
	for i, c := range n.Caches {
		p, err := cpu.MakeBuilder().WithEnv(e).WithClock(cclk).Build(fmt.Sprintf("N.Cpu[%d]", i))
		Expect(err).NotTo(HaveOccurred())
		p.Attach(c.Port())
		p.Run(program(e, p.Name(), ops, uint64(i)*64<<10, 64<<10)...)
	}
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Stopped).To(BeFalse())
	var out []string
	for _, r := range e.Trace.Records() {
		out = append(out, r.Format())
	}
	return out, n
}

var _ = Describe("Node", func() {
	It("runs four CPUs on one memory bus to the same trace every time, and ends coherent", func() {
		a, n := tracedNode(7, 400)
		b, _ := tracedNode(7, 400)
		Expect(cmp.Diff(a, b)).To(BeEmpty())
		kinds := map[string]bool{}
		for _, l := range a {
			kinds[strings.Fields(l)[3]] = true
		}
		// The shared region makes the caches invalidate each other and
		// write dirty lines back.
		for _, k := range []string{"cache.fill", "cache.invalidate", "cache.writeback", "bus.rfo.read", "bus.wb.write"} {
			Expect(kinds).To(HaveKey(k))
		}
		Expect(n.CheckCoherence()).To(Succeed())
		c, _ := tracedNode(8, 400)
		Expect(c).NotTo(Equal(a), "another seed gives another program")
	})

	It("loses no store under heavy eviction: each CPU's own words end with its last store", func() {
		e := env.New(env.Options{Seed: 3})
		cclk := clock.MHz(233)
		cc := memsys.DefaultCacheConfig()
		cc.CapacityBytes, cc.Ways = 4<<10, 2 // 4 KiB against 16 KiB per CPU: constant evictions
		n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(4, cclk).WithCache(cc).WithBus(benchBus()).
			WithMemory(4<<20, 0, 2, 0).Build("N")
		Expect(err).NotTo(HaveOccurred())
		want := map[uint64][]byte{}
		for i, c := range n.Caches {
			p, err := cpu.MakeBuilder().WithEnv(e).WithClock(cclk).Build(fmt.Sprintf("N.Cpu[%d]", i))
			Expect(err).NotTo(HaveOccurred())
			p.Attach(c.Port())
			ops := program(e, p.Name(), 1500, uint64(i)*16<<10, 16<<10)
			for _, op := range ops {
				if op.Kind == cpu.Store && op.Addr < 0x10_0000 {
					want[op.Addr] = op.Data
				}
			}
			p.Run(ops...)
		}
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		bad := 0
		for addr, d := range want {
			got, _ := n.Memory.Storage().Bytes(addr, 8)
			if string(got) != string(d) {
				bad++
			}
		}
		Expect(bad).To(BeZero(), "of %d words", len(want))
		Expect(n.CheckCoherence()).To(Succeed())
		var wb uint64
		for _, c := range n.Caches {
			wb += c.Stats().WriteBacks
		}
		Expect(wb).To(BeNumerically(">", 100))
	})

	It("refuses a node without CPUs or a bus, naming what is missing", func() {
		e := env.New(env.Options{})
		_, err := memsys.MakeNodeBuilder().WithEnv(e).WithBus(testBus()).Build("N")
		Expect(err).To(MatchError(ContainSubstring("CPUs")))
		_, err = memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).Build("N")
		Expect(err).To(MatchError(ContainSubstring("memory bus")))
		_, err = memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, clk).WithBus(testBus()).WithMemory(1<<16, 0x800, 2, 8).Build("N")
		Expect(err).To(MatchError(ContainSubstring("not aligned to PageBytes")))
	})
})

// orderedNode runs four host/cpu CPUs of the benchmarks' mixed program
// (ops each over 16 KiB apiece, in 4 KiB 2-way caches with maxMisses
// registers: constant evictions) and the shared 4 KiB, creating the CPUs in
// order (which sets their tick order at a shared edge). It returns the
// trace, the node and the last store each CPU made to each of its own
// words.
func orderedNode(order []int, maxMisses int) ([]string, *memsys.Node, map[uint64][]byte) {
	e := env.New(env.Options{Seed: 5, Trace: trace.NewRecorder()})
	cclk := clock.MHz(233)
	cc := memsys.DefaultCacheConfig()
	cc.CapacityBytes, cc.Ways, cc.MaxMisses = 4<<10, 2, maxMisses
	n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(4, cclk).WithCache(cc).WithBus(benchBus()).
		WithMemory(4<<20, 0, 2, 0).Build("N")
	Expect(err).NotTo(HaveOccurred())
	want := map[uint64][]byte{}
	for _, i := range order {
		p, err := cpu.MakeBuilder().WithEnv(e).WithClock(cclk).Build(fmt.Sprintf("N.Cpu[%d]", i))
		Expect(err).NotTo(HaveOccurred())
		p.Attach(n.Caches[i].Port())
		ops := program(e, p.Name(), 1500, uint64(i)*16<<10, 16<<10)
		for _, op := range ops {
			if op.Kind == cpu.Store && op.Addr < 0x10_0000 {
				want[op.Addr] = op.Data
			}
		}
		p.Run(ops...)
	}
	res, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Stopped).To(BeFalse())
	var out []string
	for _, r := range e.Trace.Records() {
		out = append(out, r.Format())
	}
	return out, n, want
}

var _ = Describe("Node with miss status holding registers (MaxMisses 4)", func() {
	It("runs to the same trace whatever the CPUs' tick order, loses no store, and ends coherent", func() {
		var nodes []*memsys.Node
		var wants []map[uint64][]byte
		diff := vtest.SameInEveryOrder(4, func(order []int) []string {
			tr, n, want := orderedNode(order, 4)
			nodes, wants = append(nodes, n), append(wants, want)
			return tr
		})
		Expect(diff).To(BeEmpty())
		for k, n := range nodes {
			bad := 0
			for addr, d := range wants[k] {
				got, _ := n.Memory.Storage().Bytes(addr, 8)
				if string(got) != string(d) {
					bad++
				}
			}
			Expect(bad).To(BeZero(), "of %d words", len(wants[k]))
			Expect(n.CheckCoherence()).To(Succeed())
			var merged, upgrades, fills uint64
			for _, c := range n.Caches {
				Expect(c.Idle()).To(BeTrue())
				s := c.Stats()
				merged, upgrades, fills = merged+s.Merged, upgrades+s.Upgrades, fills+s.Fills
			}
			// The registers were used: stores merged into outstanding
			// misses, and shared lines were upgraded.
			Expect(merged).To(BeNumerically(">", 0))
			Expect(upgrades).To(BeNumerically(">", 0))
			Expect(fills).To(BeNumerically(">", 0))
		}
	})

	It("finishes the same program sooner than a blocking cache", func() {
		end := func(maxMisses int) clock.Time {
			e := env.New(env.Options{Seed: 5})
			cclk := clock.MHz(233)
			cc := memsys.DefaultCacheConfig()
			cc.MaxMisses = maxMisses
			n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(1, cclk).WithCache(cc).WithBus(benchBus()).
				WithMemory(4<<20, 0, 2, 0).Build("N")
			Expect(err).NotTo(HaveOccurred())
			p, err := cpu.MakeBuilder().WithEnv(e).WithClock(cclk).Build("N.Cpu[0]")
			Expect(err).NotTo(HaveOccurred())
			p.Attach(n.Caches[0].Port())
			// A copy: a load of a source word (hitting after its line's
			// first word) and a store to a fresh destination, 8 bytes at a
			// time over 2 KiB.
			var ops []cpu.Op
			for off := uint64(0); off < 2048; off += 8 {
				ops = append(ops, cpu.Op{Kind: cpu.Load, Addr: 0x1_0000 + off, Len: 8},
					cpu.Op{Kind: cpu.Store, Addr: 0x2_0000 + off, Data: []byte("copydata")})
			}
			p.Run(ops...)
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			got, _ := n.Memory.Storage().Bytes(0x2_0000+2040, 8)
			Expect(string(got)).To(Equal("copydata"))
			return res.End
		}
		blocking, four := end(1), end(4)
		GinkgoWriter.Printf("2 KiB copy: blocking %v, 4 registers %v\n", blocking, four)
		Expect(four).To(BeNumerically("<", blocking))
	})
})
