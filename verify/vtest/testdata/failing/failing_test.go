// Package failing holds a spec that fails on purpose, run by vtest's own
// suite in a child process to show that a failure comes with its waveform.
// It is under testdata, so `go test ./...` never runs it.
package failing

import (
	"os"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/fifo"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFailing(t *testing.T) {
	if os.Getenv("NISIM_RUN_FAILING") != "1" {
		t.Skip("run by verify/vtest only")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "failing")
}

var _ = It("fails after filling a FIFO", func() {
	clk := clock.MHz(100)
	e := vtest.NewEnv(vtest.Options{Clock: clk})
	f, err := fifo.MakeBuilder[int]().WithEnv(e).WithDepth(4).Build("Bench.Fifo")
	Expect(err).NotTo(HaveOccurred())
	vtest.NewAgent(e, "Bench.Driver", clk, func(now clock.Time, c clock.Cycle) bool {
		f.Push(now, int(c))
		return c < 2
	}).Start()
	_, err = e.Run()
	Expect(err).To(MatchError(ContainSubstring("deadlock"))) // three entries are left
	Expect(f.Len()).To(Equal(0), "this spec fails on purpose")
})
