package lcitb_test

import (
	"strings"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Each measurement names itself once in its errors (issue 12: lci-logp cut
// off by --time-limit printed "ping-pong: ping-pong: 1 of 60 round trips
// started", MeasureLogP wrapping what PingPong had already named).
var _ = Describe("measurement errors", func() {
	// cut is an environment stopped after 1 µs, before any measurement
	// can finish.
	cut := func() *env.Env { return env.New(env.Options{TimeLimit: clock.Microsecond}) }
	once := func(err error, want string) {
		GinkgoHelper()
		Expect(err).To(MatchError(want))
		name, _, _ := strings.Cut(want, ":")
		Expect(strings.Count(err.Error(), name+":")).To(Equal(1), "%q repeats %q", err, name)
	}
	small := lcitb.Bench{Size: 16, Warm: 2, Iters: 4, Stream: 8}

	It("names the ping-pong once, through MeasureLogP too", func() {
		_, err := lcitb.MeasureLogP(cut(), lcitb.DefaultConfig(), small)
		once(err, "ping-pong: 1 of 6 round trips started")
		_, err = lcitb.PingPong(cut(), lcitb.DefaultConfig(), small)
		once(err, "ping-pong: 1 of 6 round trips started")
	})

	It("names the stream and the fetch-and-add once", func() {
		_, err := lcitb.Stream(cut(), lcitb.DefaultConfig(), small, false)
		once(err, "stream: 0 of 8 messages received")
		_, err = lcitb.FetchAdd(cut(), lcitb.DefaultConfig(), small)
		once(err, "fetch-and-add: 0 of 6 completed")
	})

	It("names the broadcast latency and throughput once", func() {
		c := lcitb.DefaultConfig()
		c.Nodes = 4
		_, _, err := lcitb.Broadcast(cut(), c, small)
		once(err, "broadcast latency: multicast 0 reached 0 of 3 nodes")
		_, err = lcitb.BroadcastStream(cut(), c, small, true)
		once(err, "broadcast throughput: message 0 reached 0 of 3 nodes")
	})

	It("names the measurement before the benchmark's own refusal", func() {
		_, err := lcitb.PingPong(nil, lcitb.DefaultConfig(), lcitb.Bench{Size: 16, Warm: 0, Iters: 1, Stream: 8})
		Expect(err).To(MatchError(HavePrefix("ping-pong: lci bench: ")))
	})
})
