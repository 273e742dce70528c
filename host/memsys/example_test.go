package memsys_test

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// A two-CPU node: each host/cpu CPU attaches to its cache's Port; a page is
// made write-through so that its stores appear on the memory bus, where an
// observer (a snooping NI, a checker) sees them.
func ExampleNodeBuilder() {
	e := env.New(env.Options{})
	cclk := clock.MHz(200)
	n, err := memsys.MakeNodeBuilder().WithEnv(e).WithCPUs(2, cclk).
		WithCache(memsys.DefaultCacheConfig()).
		WithBus(bus.Config{Name: "membus", Clock: clock.MHz(66), WidthBytes: 8, ArbCycles: 1, AddrCycles: 1,
			ReadTurnaround: 1, MaxBurstBytes: 64}).
		WithMemory(1<<20, 0, 3, 0).
		WithPolicy(0x4000, 0x1000, memsys.WriteThrough).
		Build("Node")
	if err != nil {
		fmt.Println(err)
		return
	}
	n.Bus.Observe(func(_ clock.Time, o bus.Observation) {
		if o.Write && o.First {
			fmt.Printf("bus: %s %s write at %#x: %q\n", o.Master, o.Req.Class, o.Addr, o.Data)
		}
	})
	for i, c := range n.Caches {
		p, _ := cpu.MakeBuilder().WithEnv(e).WithClock(cclk).Build(fmt.Sprintf("Node.Cpu[%d]", i))
		p.Attach(c.Port())
		addr := 0x4000 + uint64(i)*8
		p.Run(cpu.Op{Kind: cpu.Store, Addr: addr, Data: []byte(fmt.Sprintf("cpu%d....", i))},
			cpu.Op{Kind: cpu.Load, Addr: 0x100, Len: 8})
	}
	if _, err := e.Run(); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range n.Caches {
		s := c.Stats()
		fmt.Printf("%s: hits %d misses %d write-throughs %d\n", c.Name(), s.Hits, s.Misses, s.WriteThroughs)
	}
	// Output:
	// bus: Node.Cache[0] wt write at 0x4000: "cpu0...."
	// bus: Node.Cache[1] wt write at 0x4008: "cpu1...."
	// Node.Cache[0]: hits 0 misses 2 write-throughs 1
	// Node.Cache[1]: hits 0 misses 2 write-throughs 1
}
