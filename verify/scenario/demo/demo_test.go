package demo_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/dma"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/demo"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// goldenPath is the reviewed trace of `make run` (demo defaults, seed 1).
const goldenPath = "testdata/demo.trace"

// goldenComments explain why the golden trace is right; `make golden`
// keeps the comments of an existing file.
var goldenComments = []string{
	"demo scenario, embedded defaults, seed 1 (the trace `make run` writes to out/demo.trace)",
	"Rules the records follow (see the package docs of rtl/bus, rtl/mem, rtl/dma, rtl/link):",
	"- 64 posted 4-byte PIO stores over 32-bit 33 MHz PCI: one bus.pio.write each, 4 bus cycles apart",
	"  (hidden arbitration: address, medium-DEVSEL decode, data, idle), each followed by an NI.Sram mem.write",
	"- the fence retires when the write buffer is empty; the read-back is a bus.pio.read of 4 bytes with the",
	"  same hash as the first store",
	"- three doorbell stores (regs.write at 0x0, 0x4, 0x8) start the host DMA: 8 bus.dma.read bursts of 256 bytes",
	"  (64 data phases each) from Host.Mem at 0x100000.., each burst then written into NI.Sram",
	"- the send DMA streams 2304 bytes; the link carries 5 packets (4 x 512 + 256 bytes) of 32-byte flits;",
	"  Remote.RDMA writes them to Remote.Sram and completes with the hash of all PIO and DMA data",
	"- the processor (200 MHz, 5 ns a cycle) spends 4 issue cycles on an uncached access: one begun in cycle s",
	"  executes (enters the 4-entry write buffer) in s+3, and the next operation begins in s+4, the cycle after",
	"  (host/cpu since 8e23296; before, it began in s+3). The 64th store, begun in 1418, waits on the full",
	"  buffer until 1441, the cycle after the 60th bus.pio.write has left it (7.20 us = 1440); the fence begins",
	"  in 1442 and retires in 1537 (7.685 us), the cycle after the last bus.pio.write (7.68 us = 1536): cycles=95",
	"- the read-back begins in 1537 (a zero-cycle fence lets its successor begin in the cycle it retires), its",
	"  data arrives after the bus.pio.read at 7.80 us and it retires in 1561 (cycles=24); a load's successor",
	"  begins in the cycle it retires, so doorbell-src begins in 1561 and executes in 1564, doorbell-dst begins",
	"  in 1565 and executes in 1568 (7.84 us), doorbell-len in 1569 and 1572 (7.86 us), each cycles=3; their",
	"  bus.pio.writes (7.92, 8.04, 8.16 us) and all that follows keep their times: each takes the bus 120 ns,",
	"  six times the 20 ns between the stores",
}

func runDemo(dir string, sets ...string) (*scenario.Report, []trace.Record, error) {
	p := demo.Defaults()
	Expect(scenario.Configure(p, "", sets)).To(Succeed())
	rep, e, violations, err := scenario.Exec(demo.Scenario(), p, scenario.Options{
		Seed: 1, VCD: filepath.Join(dir, "demo.vcd"), Trace: filepath.Join(dir, "demo.trace"),
		KeepTrace: true, Comment: "nisim run demo, seed 1",
	})
	Expect(err).NotTo(HaveOccurred())
	return rep, e.Trace.Records(), violations
}

// idler ticks every cycle until a time and does nothing else.
type idler struct {
	*clock.Ticking
	until clock.Time
}

func (d *idler) Tick(now clock.Time) bool { return now < d.until }

// runWith runs the demo with an idle component on the given clock ("" for
// none) and returns the trace.
func runWith(freq string) []trace.Record {
	rec := trace.NewRecorder()
	e := env.New(env.Options{Trace: rec, Seed: 1})
	if freq != "" {
		c, err := clock.ParseFreq(freq)
		Expect(err).NotTo(HaveOccurred())
		d := &idler{until: 60 * clock.Microsecond}
		d.Ticking = clock.NewTicking("Idler", e.Engine, c, d)
		d.Start()
	}
	rep, err := demo.Run(e, demo.Defaults())
	Expect(err).NotTo(HaveOccurred())
	Expect(rep.Failed()).To(BeFalse())
	return rec.Records()
}

var _ = Describe("demo scenario", func() {
	It("delivers every byte and passes its checks", func() {
		rep, _, violations := runDemo(GinkgoT().TempDir())
		Expect(violations).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		Expect(rep.Checks).To(HaveLen(6)) // the demo's five and Exec's "checkers"
		Expect(rep.Checks[5].Name).To(Equal("checkers"))
		Expect(rep.Checks[5].OK).To(BeTrue())
	})

	It("matches the golden trace", Label("golden"), func() {
		dir := GinkgoT().TempDir()
		_, recs, violations := runDemo(dir)
		Expect(violations).NotTo(HaveOccurred())
		Expect(vtest.Golden(goldenPath, recs, goldenComments...)).To(Succeed())
	})

	It("fails against a golden with one changed record", func() {
		if trace.Updating() {
			Skip("goldens are being regenerated")
		}
		dir := GinkgoT().TempDir()
		_, recs, _ := runDemo(dir)
		golden, err := os.ReadFile(goldenPath)
		Expect(err).NotTo(HaveOccurred())
		// Change the length of the first DMA burst read from 256 to 128.
		wrong := bytes.Replace(golden, []byte("bus.dma.read master=HDMA target=HostMem addr=0x100000 len=256"),
			[]byte("bus.dma.read master=HDMA target=HostMem addr=0x100000 len=128"), 1)
		Expect(wrong).NotTo(Equal(golden))
		path := filepath.Join(dir, "wrong.trace")
		Expect(os.WriteFile(path, wrong, 0o644)).To(Succeed())
		err = trace.CheckGolden(path, recs)
		var m *trace.Mismatch
		Expect(err).To(BeAssignableToTypeOf(m))
		Expect(err.Error()).To(ContainSubstring("len=128"))
		Expect(err.Error()).To(ContainSubstring("len=256"))
	})

	It("writes byte-identical traces and waveforms on every run, whatever GOMAXPROCS", func() {
		prev := runtime.GOMAXPROCS(0)
		DeferCleanup(runtime.GOMAXPROCS, prev)
		var traces, vcds [][]byte
		for _, procs := range []int{1, max(4, prev), 1} {
			runtime.GOMAXPROCS(procs)
			dir := GinkgoT().TempDir()
			runDemo(dir)
			t, err := os.ReadFile(filepath.Join(dir, "demo.trace"))
			Expect(err).NotTo(HaveOccurred())
			v, err := os.ReadFile(filepath.Join(dir, "demo.vcd"))
			Expect(err).NotTo(HaveOccurred())
			traces, vcds = append(traces, t), append(vcds, v)
		}
		Expect(traces[1]).To(Equal(traces[0]))
		Expect(traces[2]).To(Equal(traces[0]))
		Expect(vcds[1]).To(Equal(vcds[0]))
		Expect(vcds[2]).To(Equal(vcds[0]))
	})

	It("gives the same trace whatever else ticks in the same picoseconds", func() {
		// Extra components that do nothing, on clocks that share edges with
		// the host, the bus, the memory, the NI and the link, change the
		// order in which the engine runs the components within a
		// picosecond. The model's results must not depend on that order.
		base := runWith("")
		for _, f := range []string{"160MHz", "100/3MHz", "200MHz", "66MHz", "33MHz", "1GHz"} {
			Expect(trace.Diff(base, runWith(f))).To(BeNil(), "with an idle %s component", f)
		}
	})

	It("dumps a strictly valid waveform showing bus phases, DMA states, FIFO occupancy and credits", func() {
		dir := GinkgoT().TempDir()
		runDemo(dir)
		f, err := vcd.ParseFile(filepath.Join(dir, "demo.vcd"))
		Expect(err).NotTo(HaveOccurred())
		values := func(name string) []string {
			ch, err := f.Changes(name)
			Expect(err).NotTo(HaveOccurred())
			var out []string
			for _, c := range ch {
				out = append(out, c.Value.String())
			}
			return out
		}
		Expect(values("host.bus.phase")).To(ContainElements("sARB", "sADDR", "sDECODE", "sDATA", "sWAIT", "sTURN"))
		Expect(values("ni.hdma.state")).To(ContainElements("sSETUP", "sMOVE", "sIDLE"))
		numbers := func(name string) []uint64 {
			ch, err := f.Changes(name)
			Expect(err).NotTo(HaveOccurred())
			var out []uint64
			for _, c := range ch {
				v, ok := c.Value.Uint()
				Expect(ok).To(BeTrue())
				out = append(out, v)
			}
			return out
		}
		Expect(numbers("ni.tx_fifo.occupancy")).To(ContainElement(uint64(1)))
		// The link credits of VC 0 start at 8 and are spent and returned.
		credits := numbers("link.ab.credits0")
		Expect(credits[0]).To(Equal(uint64(8)))
		Expect(credits).To(ContainElement(uint64(7)))
	})

	It("writes a waveform GTKWave accepts (when vcd2fst is installed)", func() {
		tool, err := exec.LookPath("vcd2fst")
		if err != nil {
			Skip("vcd2fst (Debian package gtkwave) is not installed")
		}
		dir := GinkgoT().TempDir()
		runDemo(dir)
		out, err := exec.Command(tool, filepath.Join(dir, "demo.vcd"), filepath.Join(dir, "demo.fst")).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		info, err := os.Stat(filepath.Join(dir, "demo.fst"))
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Size()).To(BeNumerically(">", 0))
	})

	It("selects signals and a time window", func() {
		dir := GinkgoT().TempDir()
		p := demo.Defaults()
		_, _, _, err := scenario.Exec(demo.Scenario(), p, scenario.Options{Seed: 1,
			VCD: filepath.Join(dir, "sel.vcd"), Select: []string{"host.bus"}, From: 10_000_000, To: 20_000_000})
		Expect(err).NotTo(HaveOccurred())
		f, err := vcd.ParseFile(filepath.Join(dir, "sel.vcd"))
		Expect(err).NotTo(HaveOccurred())
		for _, v := range f.Vars {
			Expect(v.FullName()).To(HavePrefix("host.bus."))
		}
		ch, err := f.Changes("host.bus.phase")
		Expect(err).NotTo(HaveOccurred())
		Expect(ch[0].Time).To(Equal(int64(10_000_000)))
		Expect(f.EndTime).To(BeNumerically("<=", 20_000_000))
	})

	DescribeTable("rejects impossible parameters, naming the key",
		func(set, key string) {
			err := scenario.Configure(demo.Defaults(), "", []string{set})
			Expect(err).To(MatchError(ContainSubstring(key)))
		},
		Entry("zero FIFO depth", "ni.fifo_depth=0", "ni.fifo_depth"),
		Entry("negative FIFO width", "ni.fifo_width=-8", "ni.fifo_width"),
		Entry("zero link rate", "link.bytes_per_cycle=0", "link.bytes_per_cycle"),
		Entry("zero frequency", "ni.clock=\"0MHz\"", "ni.clock"),
		Entry("burst larger than the FIFO", "ni.dma_burst=1024", "larger than the FIFO"),
		Entry("store wider than the bus", "workload.store_bytes=8", "workload.store_bytes"),
		Entry("unknown bus", "bus.preset=isa", "bus.preset"),
		Entry("unknown key", "ni.fifo_dpth=4", "unknown key ni.fifo_dpth"),
		Entry("wrong type", "ni.fifo_depth=\"deep\"", "want an integer"),
	)

	// Issue 12: these sizes passed validation (fifo_depth = 10^12 died
	// with "fatal error: runtime: out of memory"). Each is refused on one
	// line naming the --set, the limit and its derivation from
	// scenario.MemoryBudget (1 GiB): e.g. a FIFO slot is a 24-byte slice
	// header, an 8-byte time and 8 data bytes = 40 B, twice (two FIFOs) =
	// 80 B, and 2^30 / 80 = 13421772 slots.
	DescribeTable("refuses sizes a run cannot hold, with the limit and its derivation",
		func(set, msg string) {
			err := scenario.Configure(demo.Defaults(), "", []string{set})
			Expect(err).To(MatchError(msg))
		},
		Entry("FIFO depth", "ni.fifo_depth=1000000000000", "invalid parameter ni.fifo_depth: above the limit 13421772 "+
			"(got 1000000000000; 80 B per entry of 32+8 B in each of 2 FIFOs x 13421772 = 1023 MiB, the per-run memory budget)"),
		// A buffered flit: a link.Flit, its 8-byte arrival time and 32
		// payload bytes, in each direction.
		Entry("link buffer", "link.buffer_flits=1000000000", fmt.Sprintf("invalid parameter link.buffer_flits: above the limit %d", scenario.BudgetLimit(2*(linkFlitBytes+8+32)))+
			fmt.Sprintf(" (got 1000000000; %d B per flit of %d+32 B in each direction of the link x %d = 1023 MiB, the per-run memory budget)",
				2*(linkFlitBytes+8+32), linkFlitBytes+8, scenario.BudgetLimit(2*(linkFlitBytes+8+32)))),
		Entry("DMA queue", "ni.dma_queue=1000000000", fmt.Sprintf("invalid parameter ni.dma_queue: above the limit %d", scenario.BudgetLimit(3*(dmaDescBytes+8)))+
			fmt.Sprintf(" (got 1000000000; %d B per descriptor of %d B in each of 3 DMA engines x %d = 1023 MiB, the per-run memory budget)",
				3*(dmaDescBytes+8), dmaDescBytes+8, scenario.BudgetLimit(3*(dmaDescBytes+8)))),
		// A posted store: a mem.Req, its 8-byte push time and 8 data bytes,
		// in 2 masters x 2 FIFOs.
		Entry("write buffer", "host.write_buffer=1000000000", fmt.Sprintf("invalid parameter host.write_buffer: above the limit %d", scenario.BudgetLimit(4*(memReqBytes+16)))+
			fmt.Sprintf(" (got 1000000000; %d B per request of %d B in each of 2 masters' request and response FIFOs x %d = 1023 MiB, the per-run memory budget)",
				4*(memReqBytes+16), memReqBytes+16, scenario.BudgetLimit(4*(memReqBytes+16)))),
		Entry("packet longer than the SRAM region", "link.packet_bytes=100000000",
			"invalid parameter link.packet_bytes: above the limit 524288 (got 100000000; the NI SRAM region the demo moves)"),
	)
})

// dmaDescBytes is the size of a queued DMA descriptor.
var dmaDescBytes = int64(unsafe.Sizeof(dma.Descriptor{}))

// linkFlitBytes is the size of a link flit.
var linkFlitBytes = int64(unsafe.Sizeof(link.Flit{}))

// memReqBytes is the size of a bus request.
var memReqBytes = int64(unsafe.Sizeof(mem.Req{}))
