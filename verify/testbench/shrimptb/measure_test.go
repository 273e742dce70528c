package shrimptb_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/shrimptb"
)

// The measurement drivers of shrimp-report at reduced sizes (issue 14
// design section 5: «measure specs at reduced rounds»).

func newEnv() *env.Env { return env.New(env.Options{Seed: 1}) }

var _ = Describe("SHRIMP measurements", func() {
	It("keeps the AU one-word latency within 10% of the paper's 3.71 µs (the calibration)", func() {
		l, _, err := shrimptb.MeasureAULatency(newEnv(), shrimptb.DefaultConfig(), 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Lat.N).To(Equal(3))
		// section 4.2: 3.71 µs; calibration tolerance 10%: 3.339..4.081.
		Expect(l.Lat.Mean).To(BeNumerically("~", 3710*clock.Nanosecond, 371*clock.Nanosecond))
	})

	It("breaks the AU latency down into legs that add up to the traced round, the same as untraced", func() {
		c := shrimptb.DefaultConfig()
		b, l, err := shrimptb.MeasureBreakdown(c, 1, 3, false)
		Expect(err).NotTo(HaveOccurred())
		var sum clock.Time
		for _, leg := range b.Legs {
			Expect(leg.Time()).To(BeNumerically(">=", 0), leg.From.Event+" -> "+leg.To.Event)
			sum += leg.Time()
		}
		Expect(sum).To(Equal(b.Total))
		// Every block of the path is stamped: the store, both Xpress and
		// the receiving EISA tenures, the NI's snoop, packet, send and
		// receive, the incoming burst and the poll.
		Expect(len(b.Legs)).To(BeNumerically(">=", 10))
		u, _, err := shrimptb.MeasureAULatency(newEnv(), c, 3)
		Expect(err).NotTo(HaveOccurred())
		Expect(u.Rounds.Seen[2] - u.Rounds.Sent[2]).To(Equal(l.Rounds.Seen[2] - l.Rounds.Sent[2]))
	})

	It("returns an asynchronous send sooner than a synchronous one, and its data arrives as fast", func() {
		c := shrimptb.DefaultConfig()
		sync, _, err := shrimptb.MeasureDULatency(newEnv(), c, 3, 4, false)
		Expect(err).NotTo(HaveOccurred())
		async, _, err := shrimptb.MeasureDULatency(newEnv(), c, 3, 4, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(async.Overhead.Mean).To(BeNumerically("<", sync.Overhead.Mean))
		Expect(async.Overhead.Mean).To(BeNumerically("<", async.Lat.Mean))
		// The data's path is the same: within a poll iteration.
		Expect(async.Lat.Mean).To(BeNumerically("~", sync.Lat.Mean, 200*clock.Nanosecond))
		// A source line the CPU holds modified costs the read nothing:
		// the Pentium's inquire cycle writes it back within the engine's
		// read (the DEC 560ST's ImplicitWriteBack), so a write-through
		// source gives the same latency.
		clean, _, err := shrimptb.MeasureDULatencyClean(newEnv(), c, 3, 4)
		Expect(err).NotTo(HaveOccurred())
		Expect(clean.Lat.Mean).To(Equal(sync.Lat.Mean))
	})

	It("combines a block stream into fewer, larger packets and streams it faster", func() {
		c := shrimptb.DefaultConfig()
		off, cl, err := shrimptb.MeasureAUStream(newEnv(), c, 4*c.NI.PageBytes, 8, false)
		Expect(err).NotTo(HaveOccurred())
		offPkts := cl.Nodes[0].NI.Counters().AUPackets
		on, cl, err := shrimptb.MeasureAUStream(newEnv(), c, 4*c.NI.PageBytes, 8, true)
		Expect(err).NotTo(HaveOccurred())
		onPkts := cl.Nodes[0].NI.Counters().AUPackets
		// 16 KB of 8-byte stores plus the flag: 2049 packets per store,
		// one per page (4) plus the flag's when combining.
		Expect(offPkts).To(Equal(uint64(2049)))
		Expect(onPkts).To(BeNumerically("<=", 8))
		Expect(on.MBps).To(BeNumerically(">", 1.5*off.MBps))
	})

	It("gets more DU bandwidth from larger sends", func() {
		c := shrimptb.DefaultConfig()
		// 16 KB either way: 256 sends of 64 B, 4 of a page.
		small, _, err := shrimptb.MeasureDUStream(newEnv(), c, 16384, 64, false)
		Expect(err).NotTo(HaveOccurred())
		large, _, err := shrimptb.MeasureDUStream(newEnv(), c, 16384, 4096, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(large.MBps).To(BeNumerically(">", 2*small.MBps))
	})

	It("deschedules flooding AU writers at the threshold without an overflow", func() {
		c := shrimptb.DefaultConfig()
		c.Nodes = 4
		f, _, err := shrimptb.MeasureFIFOBound(newEnv(), c, 3, 2048)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Overflows).To(BeZero())
		Expect(f.Thresholds).To(BeNumerically(">", 0))
		Expect(f.Deschedules).To(Equal(f.Thresholds))
		Expect(f.Overshoot).To(BeNumerically(">", 0))
		Expect(f.FIFOMax).To(BeNumerically("<=", c.NI.FIFOBytes))
	})

	It("never finds the engine busy for back-to-back one-burst sends: the next initiation waits for the burst (section 4.5.3)", func() {
		c := shrimptb.DefaultConfig()
		c.Nodes = 2
		q0, _, err := shrimptb.MeasureDUQueue(newEnv(), c, 4, 256)
		Expect(err).NotTo(HaveOccurred())
		c.NI.DUQueue = 2
		q2, _, err := shrimptb.MeasureDUQueue(newEnv(), c, 4, 256)
		Expect(err).NotTo(HaveOccurred())
		Expect(q0.Busy).To(BeZero())
		Expect(q2.Time).To(Equal(q0.Time))
	})

	It("refuses bad sizes with an error naming them", func() {
		c := shrimptb.DefaultConfig()
		_, _, err := shrimptb.MeasureAULatency(newEnv(), c, 1)
		Expect(err).To(MatchError(ContainSubstring("rounds 1")))
		_, _, err = shrimptb.MeasureAUStream(newEnv(), c, 100, 8, false)
		Expect(err).To(MatchError(ContainSubstring("stream bytes 100")))
		_, _, err = shrimptb.MeasureAUStream(newEnv(), c, 4096, 2, false)
		Expect(err).To(MatchError(ContainSubstring("store bytes 2")))
		_, _, err = shrimptb.MeasureFIFOBound(newEnv(), c, 16, 10)
		Expect(err).To(MatchError(ContainSubstring("senders 16")))
	})
})

var _ = Describe("Radix-VMMC", func() {
	It("sorts the CI size with automatic update, every checker clean, with and without combining", func() {
		c := shrimptb.DefaultConfig()
		rc := shrimptb.DefaultRadixCI()
		r, _, err := shrimptb.MeasureRadix(newEnv(), c, rc)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Sorted).To(BeTrue())
		// The AU version sends only its histogram rows, as the DU version
		// does: one per pair and pass, 16 x 15 x 3.
		Expect(r.Messages).To(Equal(uint64(16*15*3)), "the AU version sends its histogram rows by deliberate update")
		// 1024 keys x 3 passes x 109 cycles of a node's own work at 60
		// MHz is 5.58 ms: the sort takes at least that.
		Expect(r.Time).To(BeNumerically(">", 5580*clock.Microsecond))
		rc.Combine = true
		rcb, _, err := shrimptb.MeasureRadix(newEnv(), c, rc)
		Expect(err).NotTo(HaveOccurred())
		Expect(rcb.Sorted).To(BeTrue())
	})

	It("sorts the CI size with deliberate update (the DU reads and incoming DMA writes meet in the bridge)", func() {
		c := shrimptb.DefaultConfig()
		rc := shrimptb.DefaultRadixCI()
		rc.AU = false
		r, _, err := shrimptb.MeasureRadix(newEnv(), c, rc)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Sorted).To(BeTrue())
		Expect(r.Messages).NotTo(BeZero())
	})

	It("refuses a radix that is not a power of two", func() {
		rc := shrimptb.DefaultRadixCI()
		rc.Radix = 12
		_, _, err := shrimptb.MeasureRadix(newEnv(), shrimptb.DefaultConfig(), rc)
		Expect(err).To(MatchError(ContainSubstring("Radix 12")))
	})
})
