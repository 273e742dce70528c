package platform_test

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// missAndHit assembles h with the component builders, as a testbench
// would, and times a load that misses every cache and a second load of the
// same word from CPU 0 (each from the previous one's completion).
func missAndHit(h platform.Host) (miss, hit clock.Time) {
	e := vtest.NewEnv(vtest.Options{Clock: h.CPU.Clock, TimeLimit: 100 * clock.Microsecond})
	n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(h.CPU.Count, h.CPU.Clock).WithCache(h.LastLevel()).
		WithBus(h.MemBus).WithMemoryClock(h.Memory.Clock).
		WithMemory(h.Memory.SizeBytes, 0, h.Memory.LatencyCycles(), h.Memory.BytesPerCycle).Build("N")
	Expect(err).NotTo(HaveOccurred())
	io, err := bus.MakeBuilder().WithEnv(e).WithConfig(h.IOBus).Build("N.IO")
	Expect(err).NotTo(HaveOccurred())
	_, err = bus.MakeBridgeBuilder().WithEnv(e).WithConfig(h.Bridge).WithBuses(n.Bus, io).
		WithDMAWindow(0, h.Memory.SizeBytes, 0).Build("N.Bridge")
	Expect(err).NotTo(HaveOccurred())
	Expect(n.Memory.Storage().Write(0x1000, []byte("platform"))).To(Succeed())
	var done []clock.Time
	var got []string
	for i := range h.CPU.Count {
		p, err := cpu.MakeBuilder().WithEnv(e).WithClock(h.CPU.Clock).WithIssueCycles(h.CPU.IssueCycles).
			WithPostedStores(h.CPU.PostedStores).WithCPI(h.CPU.CPICycles, h.CPU.CPIInstrs).WithOSCosts(h.OS).
			Build(fmt.Sprintf("N.Cpu%d", i))
		Expect(err).NotTo(HaveOccurred())
		p.Attach(n.Caches[i].Port())
		if i == 0 {
			record := func(now clock.Time, d []byte) { done, got = append(done, now), append(got, string(d)) }
			p.Run(cpu.Op{Kind: cpu.Load, Addr: 0x1000, Len: 4, Done: record},
				cpu.Op{Kind: cpu.Load, Addr: 0x1000, Len: 4, Done: record})
		}
	}
	_, err = e.Run()
	Expect(err).NotTo(HaveOccurred())
	Expect(got).To(Equal([]string{"plat", "plat"}))
	Expect(n.Caches[0].Stats().Misses).To(Equal(uint64(1)))
	return done[0], done[1] - done[0]
}

var _ = Describe("a preset assembled with the component builders", func() {
	for _, name := range platform.Names() {
		It("builds "+name+" (memsys node, I/O bus, bridge, CPUs) and its cold load misses for at least the memory latency", func() {
			h, _ := platform.Lookup(name)
			miss, hit := missAndHit(h)
			lat := clock.Time(h.Memory.LatencyNs) * clock.Nanosecond
			GinkgoWriter.Printf("%s: cold miss %v (memory latency %v), hit %v\n", name, miss, lat, hit)
			// The miss waits the memory's LatencyCycles at least, plus
			// the bus phases and the line transfer; the hit does not.
			Expect(miss).To(BeNumerically(">=", lat))
			Expect(hit).To(BeNumerically("<", miss))
		})
	}
})
