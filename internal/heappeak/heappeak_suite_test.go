package heappeak_test

import (
	"runtime"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/internal/heappeak"
	"github.com/nisim/nisim/rtl/env"
)

func TestHeappeak(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/heappeak")
}

var _ = Describe("Sampler", func() {
	It("reads the live heap at Collect and keeps the peak after it is freed", func() {
		const held = 16 << 20
		s := heappeak.Hook(env.New(env.Options{Seed: 1}), 0)
		buf := make([]byte, held)
		for i := range buf {
			buf[i] = byte(i)
		}
		with := s.Collect()
		runtime.KeepAlive(buf)
		Expect(with.Live).To(BeNumerically(">=", held))
		peak := s.Peak.Live
		Expect(peak).To(BeNumerically(">=", with.Live))
		buf = nil
		without := s.Collect()
		// The 16 MiB slice is garbage at the second collection; whatever
		// else the test process allocated in between is far smaller.
		Expect(without.Live).To(BeNumerically("<", with.Live-held/2))
		Expect(s.Peak.Live).To(Equal(peak))
		Expect(s.GCs).To(BeNumerically(">=", 2))
	})
})
