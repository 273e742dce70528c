package cashtb_test

import (
	"bytes"
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

// smallApps are host/cashapps's programs at sizes small enough to run on
// 32 processes in a few seconds, each with the statistics its sharing
// implies on more than one node (cashmere-2l-memory-channel.txt section
// 3.2), beyond page transfers and barriers, which every one has.
var smallApps = []struct {
	name string
	set  map[string]int
	// sharing says what the program's sharing pattern must produce on
	// more than one node.
	sharing func(t cashmere.Stats) []int
}{
	// Bands of rows: the band-edge rows are read by the neighbour
	// (transfers); 34 rows of 32 words a colour, 2 iterations.
	{"sor", map[string]int{"rows": 34, "cols": 64, "iters": 2}, func(t cashmere.Stats) []int { return []int{t.ReadFaults} }},
	// Cyclic rows, a pivot flag each: flag acquires and pivot-row
	// transfers; 16 rows, a row per page.
	{"gauss", map[string]int{"n": 16}, func(t cashmere.Stats) []int { return []int{t.FlagAcquires} }},
	// Non-contiguous blocks: 8 owners of a page's columns (false
	// sharing): twins, diffs and write notices; 64 x 64 in 8 x 8 blocks
	// (4 pages).
	{"lu", map[string]int{"n": 64, "block": 8}, func(t cashmere.Stats) []int { return []int{t.Twins, t.Diffs, t.WriteNotices} }},
	// A block a page: no false sharing, only transfers of the pivot
	// blocks; 32 x 32 in 8 x 8 blocks (16 pages).
	{"clu", map[string]int{"n": 32, "block": 8}, func(t cashmere.Stats) []int { return []int{t.ReadFaults} }},
	// Bands of nodes reading their neighbours' edge values; 512 nodes
	// of degree 2 within 8 indices, 2 iterations.
	{"em3d", map[string]int{"nodes": 512, "degree": 2, "span": 8, "iters": 2}, func(t cashmere.Stats) []int { return []int{t.ReadFaults} }},
	// Forces added under locks into other processes' molecules
	// (migratory): lock acquires, twins, diffs, write notices; 32
	// molecules, 1 step, 4 locks.
	{"water", map[string]int{"molecules": 32, "steps": 1, "groups": 4}, func(t cashmere.Stats) []int {
		return []int{t.LockAcquires, t.Twins, t.Diffs, t.WriteNotices}
	}},
}

// runApp runs prog on nodes x cpus in an env without the waveform
// history vtest.NewEnv keeps for a failure's VCD: recording every signal
// of 8 nodes x 4 CPUs made these runs several times slower (the failure
// is reproduced by its seed, printed by vtest.Seed).
func runApp(prog cashapps.Program, nodes, cpus int) (cashtb.Result, error) {
	GinkgoHelper()
	e := env.New(env.Options{Seed: vtest.Seed(), TimeLimit: 2 * clock.Second})
	c := cashtb.DefaultConfig()
	c.Nodes, c.CPUs = nodes, cpus
	start := time.Now()
	res, err := cashtb.RunApp(e, c, prog)
	GinkgoWriter.Printf("%s %dx%d: %v simulated, %v wall, %+v\n", prog.Name(), nodes, cpus, res.Time, time.Since(start), res.Total)
	return res, err
}

var _ = Describe("The programs (host/cashapps) on the bench", func() {
	for _, a := range smallApps {
		for _, nc := range [][2]int{{2, 1}, {4, 2}, {8, 4}} {
			cfg := itoa(nc[0]*nc[1]) + ":" + itoa(nc[1])
			name := "runs " + a.name + " on " + cfg + " to RunSequential's memory bit for bit, checkers on, with the statistics its sharing implies"
			It(name, func() {
				prog, err := cashapps.Build(a.name, a.set)
				Expect(err).NotTo(HaveOccurred())
				want, err := cashapps.RunSequential(prog)
				Expect(err).NotTo(HaveOccurred())
				res, err := runApp(prog, nc[0], nc[1])
				Expect(err).NotTo(HaveOccurred())
				Expect(firstDiff(res.Memory, want)).To(BeEmpty())
				t := res.Total
				Expect([]int{t.PageTransfers, t.Barriers, t.DirUpdates}).To(HaveEach(BeNumerically(">", 0)))
				Expect(t.Barriers%(nc[0]*nc[1])).To(BeZero(), "every process passes every barrier")
				if nc[1] == 1 {
					// One processor a node: every sharer is on another
					// node, so the pattern shows in full.
					Expect(a.sharing(t)).To(HaveEach(BeNumerically(">", 0)))
				}
			})
		}
	}

	It("refuses a nil program and a program too large for the shared area, with one-line errors", func() {
		_, err := cashtb.BuildApp(vtest.NewEnv(vtest.Options{}), cashtb.DefaultConfig(), nil)
		Expect(err).To(MatchError("cashtb: no program"))
		big, err := cashapps.Build("sor", map[string]int{"rows": 8192, "cols": 4096})
		Expect(err).NotTo(HaveOccurred())
		_, err = cashtb.RunApp(vtest.NewEnv(vtest.Options{Clock: clock.MHz(33)}), cashtb.DefaultConfig(), big)
		Expect(err).To(MatchError(ContainSubstring("program sor: SharedBytes")))
		Expect(err.Error()).NotTo(ContainSubstring("\n"))
	})
})

// firstDiff names the first 8-byte word where got and want differ, or
// returns "" when they are equal.
func firstDiff(got, want []byte) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bytes against %d", len(got), len(want))
	}
	for i := 0; i < len(got); i += 8 {
		if !bytes.Equal(got[i:min(i+8, len(got))], want[i:min(i+8, len(want))]) {
			return fmt.Sprintf("word at %#x (page %d) differs: % x against % x", i, i/cashmere.PageBytes, got[i:min(i+8, len(got))], want[i:min(i+8, len(want))])
		}
	}
	return ""
}
