package remotewritetb_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/firmware/remotewrite"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/remotewritetb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// newEnv is a spec's env: a failure waveform of the last 2000 LANai cycles
// and an in-memory trace.
func newEnv() *env.Env { return vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Trace: true}) }

// oneWay runs a write of n bytes from node 0 to node 1 on the defaults.
func oneWay(n int) remotewritetb.Result {
	GinkgoHelper()
	r, err := remotewritetb.OneWay(newEnv(), remotewritetb.DefaultClusterConfig(), n)
	Expect(err).NotTo(HaveOccurred())
	return r
}

// step is a machine's state change as fw.state records it.
type step struct{ From, On, To string }

// steps returns the fw.state records of machine path, in order.
func steps(recs []trace.Record, path string) []step {
	var out []step
	for _, r := range recs {
		if r.Path != path || r.Kind != "fw.state" {
			continue
		}
		f, _ := r.Get("from")
		on, _ := r.Get("on")
		t, _ := r.Get("to")
		out = append(out, step{f, on, t})
	}
	return out
}

var _ = Describe("remote write on the PPro platform", func() {
	DescribeTable("puts the data, intact, at the destination's host address, then the counter",
		func(n int) {
			r := oneWay(n)
			dst := r.Cluster.Nodes[1]
			got, err := dst.Mem.Storage().Bytes(remotewritetb.DstBase, n)
			Expect(err).NotTo(HaveOccurred())
			want := make([]byte, n)
			for i := range want {
				want[i] = byte(i*7 + 1) // Write's pattern
			}
			Expect(got).To(Equal(want))
			Expect(dst.Counter()).To(Equal(uint32(1)))
			Expect(dst.FW.Delivered()).To(Equal(uint32(1)))
			// The counter lands after the data, and the poll sees it then.
			Expect(r.Landed).To(BeNumerically(">", r.Start))
			Expect(r.Seen).To(BeNumerically(">=", r.Landed))
		},
		Entry("4 bytes", 4),
		Entry("100 bytes (not a multiple of the 8-byte SRAM word)", 100),
		Entry("2000 bytes (several 256-byte host DMA bursts)", 2000),
	)

	It("takes longer for more bytes, at least as long as the three store-and-forward stages at peak rate", func() {
		l4, l100, l2000 := oneWay(4).Latency, oneWay(100).Latency, oneWay(2000).Latency
		Expect(l4).To(BeNumerically("<", l100))
		Expect(l100).To(BeNumerically("<", l2000))
		// The NI moves a write in three stages, each finished before the
		// next starts: host memory to SRAM over PCI (127.2 MB/s peak),
		// SRAM to the link (160 MB/s), SRAM to host memory over PCI. Each
		// extra byte costs at least 1/127.2 + 1/160 + 1/127.2 µs
		// = 21.97 ns; 1900 more bytes at least 41.7 µs.
		perByte := 2/127.2e6 + 1/160e6 // seconds
		Expect(float64(l2000-l100) / 1e12).To(BeNumerically(">=", 1900*perByte))
	})

	It("moves the latency by exactly the cycles added to a handler on the path", func() {
		base := oneWay(100).Latency
		c := remotewritetb.DefaultClusterConfig()
		c.Firmware.Costs.Transmit += 33
		r, err := remotewritetb.OneWay(newEnv(), c, 100)
		Expect(err).NotTo(HaveOccurred())
		// 33 LANai cycles at 33 MHz are 1 µs, and so are 160 link cycles:
		// the send, the network and the receiving NI move by exactly 1 µs.
		// The receiving side crosses into the 33.33 MHz PCI clock twice
		// (payload, then counter DMA), and each crossing can round to a
		// different bus edge, by less than a 30 ns bus cycle.
		Expect(r.Latency - base).To(BeNumerically("~", clock.Microsecond, 2*30*clock.Nanosecond))
	})

	It("crosses the grid: node 0 to node 63 (10 switches) takes longer than to node 1 (2)", func() {
		c := remotewritetb.DefaultClusterConfig()
		c.Nodes = 64
		far, err := remotewritetb.Write(newEnv(), c, 0, 63, 100)
		Expect(err).NotTo(HaveOccurred())
		Expect(far.Cluster.Net.Hops(0, 63)).To(Equal(10))
		Expect(far.Cluster.Net.Hops(0, 1)).To(Equal(2))
		Expect(far.Latency).To(BeNumerically(">", oneWay(100).Latency))
	})

	It("records every machine's state changes (fw.state) and the card's events (ni.*)", func() {
		e := newEnv()
		_, err := remotewritetb.OneWay(e, remotewritetb.DefaultClusterConfig(), 100)
		Expect(err).NotTo(HaveOccurred())
		recs := e.Trace.Records()
		Expect(cmp.Diff([]step{{"IDLE", "poll", "IDLE"}, {"IDLE", "desc", "FETCH"}, {"FETCH", "fetched", "TX"}, {"TX", "sent", "IDLE"}},
			steps(recs, "N0.NI.FW.send"))).To(BeEmpty())
		Expect(cmp.Diff([]step{{"ARMED", "packet", "ARMED"}, {"ARMED", "deliver", "DELIVER"}, {"DELIVER", "delivered", "COUNT"}, {"COUNT", "counted", "ARMED"}},
			steps(recs, "N1.NI.FW.recv"))).To(BeEmpty())
		// Node 1's DMA machine runs the payload, then the counter.
		Expect(cmp.Diff([]step{{"IDLE", "job", "BUSY"}, {"BUSY", "done", "IDLE"}, {"IDLE", "job", "BUSY"}, {"BUSY", "done", "IDLE"}},
			steps(recs, "N1.NI.FW.dma"))).To(BeEmpty())
		Expect(steps(recs, "N1.NI.FW.send")).To(BeEmpty())
		kinds := map[string]int{}
		for _, r := range recs {
			kinds[r.Kind]++
		}
		Expect(kinds).To(HaveKeyWithValue("ni.sent", 1))
		Expect(kinds).To(HaveKeyWithValue("ni.received", 1))
		Expect(kinds).To(HaveKeyWithValue("ni.event", 6)) // HostWrite, HostDMADone, SendDone; RecvDone, 2 HostDMADone
	})

	It("is deterministic: two runs give the same trace records and the same waveform", func() {
		runOnce := func() ([]trace.Record, []byte) {
			var buf bytes.Buffer
			reg := waves.NewRegistry(waves.Options{})
			Expect(reg.DumpVCD(&buf, waves.VCDOptions{})).To(Succeed())
			e := env.New(env.Options{Waves: reg, Trace: trace.NewRecorder(), Seed: 7})
			_, err := remotewritetb.OneWay(e, remotewritetb.DefaultClusterConfig(), 2000)
			Expect(err).NotTo(HaveOccurred())
			Expect(reg.Close(e.Now())).To(Succeed())
			return e.Trace.Records(), buf.Bytes()
		}
		t1, w1 := runOnce()
		t2, w2 := runOnce()
		Expect(t1).NotTo(BeEmpty())
		Expect(cmp.Diff(t1, t2)).To(BeEmpty())
		Expect(bytes.Equal(w1, w2)).To(BeTrue(), "the two VCDs differ")
	})

	It("handles writes in both directions at once, several in a row, and fires every row but the error paths", func() {
		e := newEnv()
		cl, err := remotewritetb.Build(e, remotewritetb.DefaultClusterConfig())
		Expect(err).NotTo(HaveOccurred())
		const writes, size = 8, 300
		data := func(from, i int) []byte {
			b := make([]byte, size)
			for k := range b {
				b[k] = byte(k + 31*i + 101*from + 1)
			}
			return b
		}
		// Each host posts a descriptor every 1.5 µs (300 cycles at
		// 200 MHz), faster than its NI moves 300 bytes (about 10 µs): the
		// later ones arrive while the NI is fetching or sending an
		// earlier one (poll in FETCH and TX) and wait in the ring, and
		// each NI's one DMA engine has fetches and deliveries to
		// interleave (job in BUSY).
		for from, n := range cl.Nodes {
			var ops []cpu.Op
			for i := range writes {
				src := remotewritetb.SrcBase + uint64(i)*0x1000
				Expect(n.Mem.Storage().Write(src, data(from, i))).To(Succeed())
				ops = append(ops, n.Post(1-from, src, remotewritetb.DstBase+uint64(i)*0x1000, size)...)
				ops = append(ops, cpu.Op{Kind: cpu.Compute, Cycles: 300})
			}
			n.CPU.Run(ops...)
		}
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		for to, n := range cl.Nodes {
			Expect(n.Counter()).To(Equal(uint32(writes)))
			for i := range writes {
				got, err := n.Mem.Storage().Bytes(remotewritetb.DstBase+uint64(i)*0x1000, size)
				Expect(err).NotTo(HaveOccurred())
				Expect(got).To(Equal(data(1-to, i)), "write %d to node %d", i, to)
			}
		}
		// Table coverage over both NIs: only the bad-input rows never
		// fired.
		fired := map[string]uint64{}
		for _, n := range cl.Nodes {
			for _, m := range n.FW.Machines() {
				for _, c := range m.Coverage() {
					fired[fmt.Sprintf("%s: %s in %s", strings.TrimPrefix(c.Machine, fmt.Sprintf("N%d.NI.FW.", n.ID)), c.On, c.From)] += c.Count
				}
			}
		}
		var never []string
		for row, k := range fired {
			if k == 0 {
				never = append(never, row)
			}
		}
		Expect(never).To(ConsistOf("send: reject in IDLE", "recv: drop in ARMED"))
	})

	It("notices data that did not arrive intact (the counter DMAed over the data's first word)", func() {
		c := remotewritetb.DefaultClusterConfig()
		c.Firmware.Counter = remotewritetb.DstBase
		_, err := remotewritetb.OneWay(newEnv(), c, 100)
		Expect(err).To(MatchError(ContainSubstring("differ from those sent")))
	})
})

var _ = Describe("checkers", func() {
	DescribeTable("a bad descriptor is a checker error, and the next good one still goes through",
		func(dst, n int) {
			e := newEnv()
			cl, err := remotewritetb.Build(e, remotewritetb.DefaultClusterConfig())
			Expect(err).NotTo(HaveOccurred())
			s := cl.Nodes[0]
			ops := s.Post(dst, remotewritetb.SrcBase, remotewritetb.DstBase, n)
			s.CPU.Run(append(ops, s.Post(1, remotewritetb.SrcBase, remotewritetb.DstBase, 8)...)...)
			_, err = e.Run()
			Expect(err).To(MatchError(ContainSubstring("N0.NI.FW [rw.desc] bad descriptor")))
			Expect(e.Monitor.Violations()).To(HaveLen(1))
			Expect(cl.Nodes[1].Counter()).To(Equal(uint32(1)))
		},
		Entry("a node outside the cluster", 7, 8),
		Entry("the sender itself", 0, 8),
		Entry("no bytes", 1, 0),
		Entry("more than max_len", 1, remotewrite.DefaultConfig().MaxLen+1),
	)

	DescribeTable("refuses an impossible configuration, naming what is wrong",
		func(mod func(c *remotewritetb.ClusterConfig), msg string) {
			c := remotewritetb.DefaultClusterConfig()
			mod(&c)
			Expect(c.Validate()).To(MatchError(ContainSubstring(msg)))
			_, err := remotewritetb.Build(env.New(env.Options{}), c)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("one node", func(c *remotewritetb.ClusterConfig) { c.Nodes = 1 }, "nodes = 1"),
		Entry("65 nodes", func(c *remotewritetb.ClusterConfig) { c.Nodes = 65 }, "nodes = 65"),
		Entry("no ring", func(c *remotewritetb.ClusterConfig) { c.Firmware.Slots = 0 }, "slots = 0"),
		Entry("a negative cost", func(c *remotewritetb.ClusterConfig) { c.Firmware.Costs.Transmit = -1 }, "negative cost -1"),
		Entry("buffers beyond the SRAM", func(c *remotewritetb.ClusterConfig) { c.Platform.NI.SRAMBytes = 8192 }, "the card has 8192"),
	)
})
