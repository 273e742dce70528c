package cashtb_test

import (
	"fmt"
	"time"

	"github.com/nisim/nisim/host/cashapps"
	"github.com/nisim/nisim/host/cashmere"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/cashtb"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// randomVariants are the protocols the randomised data-race-free programs
// run under (issue 18 section 4: «on all six variants against the
// reference»): one list.
var randomVariants = []string{cashmere.Variant2L, cashmere.Variant2LS, cashmere.Variant2LOffMC, cashmere.Variant2LMigr, cashmere.Variant1LD, cashmere.Variant1L}

// randomShapes are the P:C configurations a variant runs on: 16 processes
// (4 nodes of 4, 8 of 2) for the two-level protocols; 8 (2 of 4, 4 of 2)
// for the one-level ones, whose every processor is a protocol node with
// an entry of the 8-entry lock array (MC-P26; cashmere.Config.Validate:
// Nodes*CPUs at most 8, docs/cashmere-design.md section 8). 16 x 1 is not
// a configuration: the lock array bounds the nodes to 8 for every variant.
func randomShapes(v string) [][2]int {
	if (cashmere.Config{Variant: v}).OneLevel() {
		return [][2]int{{2, 4}, {4, 2}}
	}
	return [][2]int{{4, 4}, {8, 2}}
}

// randomSize is the programs' size: assumed: the smallest that keeps
// every feature of cashapps.Random (two data pages, so the two halves
// are a page each, written and read in turn; 16-word granules, 64 a page,
// so every page has several writers on several nodes; two phases, so the
// second reads what others wrote in the first; two locks guarding 8 words
// each, one critical section per process per phase; the flag ring), three
// pages of shared memory in all. A 16-process run costs 4 to 7 s of CPU
// whatever the size below this (the barriers, faults and fetches of 16
// processes simulated cycle by cycle; DefaultRandom's 10 pages and 6
// phases take about 25 s), so the suite's share stays near a minute.
func randomSize(seed uint64, procs int) cashapps.RandomConfig {
	return cashapps.RandomConfig{Seed: seed, Procs: procs, DataPages: 2, Granule: 16, Phases: 2,
		Locks: 2, BlockWords: 8, Sections: 1, WriteShare: 128, Compute: 200}
}

// runRandom runs Random(rc) on nodes x cpus under variant v with
// mutations mut, in an env without the waveform history (as runApp), and
// returns the program, the result, the MC writes the hub ordered and the
// run's error.
func runRandom(rc cashapps.RandomConfig, v string, nodes, cpus int, mut map[string]int) (*cashapps.Random, cashtb.Result, uint64, error) {
	GinkgoHelper()
	prog, err := cashapps.NewRandom(rc)
	Expect(err).NotTo(HaveOccurred())
	e := env.New(env.Options{Seed: vtest.Seed(), TimeLimit: 2 * clock.Second, Mutations: mut})
	c := cashtb.DefaultConfig()
	c.Nodes, c.CPUs, c.Variant = nodes, cpus, v
	b, err := cashtb.BuildApp(e, c, prog)
	Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	res, err := b.Run()
	wall := time.Since(start)
	randomWall += wall
	ordered := b.Cluster.Ref.Stats().Ordered
	GinkgoWriter.Printf("random seed %d %s %dx%d: %v simulated, %v wall, %d MC writes ordered, %+v\n",
		rc.Seed, v, nodes, cpus, res.Time, wall.Round(time.Millisecond), ordered, res.Total)
	return prog, res, ordered, err
}

// randomWall sums the runs' wall time, printed after the last spec.
var randomWall time.Duration

var _ = Describe("Randomised data-race-free programs (cashapps.Random) on every variant", Ordered, func() {
	// Every (variant, shape) pair has a seed of its own: every variant
	// runs two programs (different owners, lock plans and values), and
	// the regression tier (verify/regress, system cash) runs hundreds
	// more through cashmere-random.
	seed := uint64(0)
	for _, v := range randomVariants {
		for _, nc := range randomShapes(v) {
			seed++
			s := seed
			procs := nc[0] * nc[1]
			It(fmt.Sprintf("runs seed %d under %s on %dx%d bit-exact against the replay in lock order, every checker clean", s, v, nc[0], nc[1]), func() {
				rc := randomSize(s, procs)
				prog, res, ordered, err := runRandom(rc, v, nc[0], nc[1], nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(prog.Check(res.Memory)).To(Succeed())
				t := res.Total
				// The program's synchronisation, whatever the timing:
				// Sections lock acquires and one flag acquire per
				// process per phase, Phases barriers and the exit
				// barrier per process.
				Expect(t.LockAcquires).To(Equal(procs * rc.Sections * rc.Phases))
				Expect(t.FlagAcquires).To(Equal(procs * rc.Phases))
				Expect(t.Barriers).To(Equal(procs * (rc.Phases + 1)))
				// Sharing across nodes: pages fetched and written
				// notices sent, every byte through the hub.
				Expect([]int{t.PageTransfers, t.WriteNotices, t.Invalidations}).To(HaveEach(BeNumerically(">", 0)))
				Expect(ordered).To(BeNumerically(">", 0))
				switch v {
				case cashmere.Variant1L:
					// Write doubling: no twins, no diffs.
					Expect([]int{t.Twins, t.Diffs}).To(HaveEach(BeZero()))
				case cashmere.Variant2LS:
					// Shootdown replaces the incoming diff.
					Expect(t.IncomingDiffs).To(BeZero())
					Expect(t.Diffs).To(BeNumerically(">", 0))
				default:
					Expect([]int{t.Twins, t.Diffs}).To(HaveEach(BeNumerically(">", 0)))
				}
			})
		}
	}

	// Random.Check is the checker of cashmere.skipincoming and
	// cashmere.skipflushupdate (no runtime checker sees them): on the
	// bench it must catch them. Seed 1 on 2x2 under 2L has incoming
	// diffs (a fetch into a page the node is writing) and flush-updates;
	// without the merge the node's copy loses the other node's words, and
	// without the flush-update the next diff sends words already sent,
	// over newer ones at the home.
	It("catches cashmere.skipincoming with Random.Check on 2x2 under 2L (seed 1)", func() {
		rc := randomSize(1, 4)
		prog, res, _, err := runRandom(rc, cashmere.Variant2L, 2, 2, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(prog.Check(res.Memory)).To(Succeed())
		Expect(res.Total.IncomingDiffs).To(BeNumerically(">", 0))
		prog, res, _, err = runRandom(rc, cashmere.Variant2L, 2, 2, map[string]int{"cashmere.skipincoming": 1})
		Expect(errorsOf(err, prog.Check(res.Memory))).To(ContainSubstring("random: "))
	})

	// Fault injection (issue 18 section 4: «with the adapter's fault
	// injection on where the protocol would survive it»): the model's
	// faults are the links' CRC errors and drops (rtl/link CorruptProb,
	// DropProb, FaultPlan); the receiving adapter drops a corrupted packet
	// (RxCRC, counted, a CSR cause and an interrupt), the MC has no
	// retransmission and Cashmere no acknowledgements (section 2.2: it
	// «relies on the MC's write-ordering property»; section 5: «relies on
	// the Memory Channel's broadcast, ordering, and reliable delivery
	// capabilities»). So no fault is survivable by mechanism; this spec
	// shows the loss is caught, not silent. Env seed 3 fixes the links'
	// error draws at 10^-2 a link crossing: 32 packets corrupted and
	// dropped, 12 checker violations and a wrong final memory. (At 2 x
	// 10^-3 one run lost 3 writes that were all rewritten later and passed:
	// luck, not recovery; seeds 1 and 2 at 10^-2 lose a request or reply
	// and a process never finishes. The spec asserts only that the loss is
	// not silent, whichever check sees it.)
	It("is caught, not survived, when links corrupt packets (no MC retransmission): cashmere.copy and Random.Check", func() {
		prog, err := cashapps.NewRandom(randomSize(1, 4))
		Expect(err).NotTo(HaveOccurred())
		e := env.New(env.Options{Seed: 3, TimeLimit: 60 * clock.Millisecond})
		c := cashtb.DefaultConfig()
		c.Nodes, c.CPUs = 2, 2
		c.Cluster.Link.CorruptProb = 0.01
		b, err := cashtb.BuildApp(e, c, prog)
		Expect(err).NotTo(HaveOccurred())
		res, err := b.Run()
		s := b.Cluster.Ref.Stats()
		GinkgoWriter.Printf("random seed 1 2L 2x2 with CRC errors: %d packets dropped for their CRC, %d (write, receiver) pairs lost\n", s.RxCRC, s.Lost)
		Expect(s.RxCRC).To(BeNumerically(">", 0))
		Expect(s.Lost).To(BeNumerically(">", 0))
		// Which check sees the loss first depends on which packets the
		// draws hit (a lost diff word: cashmere.copy at the next barrier
		// exit or Random.Check at the end; a lost request or reply: the
		// requester never finishes, the run's watchdog): not silent is
		// what the spec asserts.
		checkErr := prog.Check(res.Memory)
		GinkgoWriter.Printf("  run: %v\n  Random.Check: %v\n", err, checkErr)
		Expect(errorsOf(err, checkErr)).NotTo(BeEmpty())
	})

	AfterAll(func() {
		GinkgoWriter.Printf("randomised programs: %v wall in all the runs of this file\n", randomWall.Round(time.Millisecond))
		AddReportEntry("random wall", randomWall.Round(time.Millisecond).String())
	})
})

// errorsOf is the text of the errors that are not nil, joined.
func errorsOf(errs ...error) string {
	s := ""
	for _, err := range errs {
		if err != nil {
			s += err.Error() + "; "
		}
	}
	return s
}
