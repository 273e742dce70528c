package lciscen_test

import (
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/lciscen"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Issue 12: the LCI scenarios' counts and sizes were bounded by plain
// constants (10000 or 100000 iterations and messages, 4 MiB sizes, 256 MiB
// of payload); each bound is now derived from scenario.MemoryBudget and
// what one unit costs in lcitb's measurements, or from a limit of the
// model, and the error says which.
var _ = DescribeTable("LCI bounds derived from the memory budget or the model",
	func(name string, sets []string, want string) {
		s, err := scenario.Catalog(lciscen.Scenarios()).Lookup(name)
		Expect(err).NotTo(HaveOccurred())
		Expect(scenario.Configure(s.Defaults(), "", sets)).To(MatchError("invalid parameter " + want))
	},
	// 3 x 8 B per round trip: 2^30 / 24 = 44739242.
	Entry("lci-logp iters", "lci-logp", []string{"iters=44739243"},
		"iters: above the limit 44739242 (got 44739243; 24 B per round trip's time in a growing slice x 44739242 = 1023 MiB, the per-run memory budget)"),
	Entry("lci-logp warm + iters", "lci-logp", []string{"warm=40000000", "iters=40000000"},
		"iters: above the limit 44739242 (got 80000000; 24 B per round trip's time (warm + iters) in a growing slice x 44739242 = 1023 MiB, the per-run memory budget)"),
	Entry("lci-latency iters", "lci-latency", []string{"iters=44739243"},
		"iters: above the limit 44739242 (got 44739243; 24 B per round trip's time in a growing slice x 44739242 = 1023 MiB, the per-run memory budget)"),
	Entry("lci-report iters", "lci-report", []string{"iters=44739243"},
		"iters: above the limit 44739242 (got 44739243; 24 B per round trip's time in a growing slice x 44739242 = 1023 MiB, the per-run memory budget)"),
	Entry("lci-throughput messages", "lci-throughput", []string{"messages=44739243"},
		"messages: above the limit 44739242 (got 44739243; 24 B per message's time in a growing slice x 44739242 = 1023 MiB, the per-run memory budget)"),
	// One copy of the queued payload: 2^30 bytes; 1000 x 2^20 + 1 byte
	// more than fits is 1000 x 1073742.
	Entry("lci-throughput payload", "lci-throughput", []string{"messages=1000", "sizes=[1073742]"},
		"messages: above the limit 1073741824 (got 1073742000; 1 B per payload byte the sender queues (1000 messages x 1073742 bytes) x 1073741824 = 1024 MiB, the per-run memory budget)"),
	Entry("lci-throughput size", "lci-throughput", []string{"sizes=[16777217]"},
		"sizes: entry 0: above the limit 16777216 (got 16777217; lcitb's largest message, 16 MiB)"),
	// An int and a clock.Time per multicast: 2^30 / 16 = 67108864.
	Entry("lci-broadcast iters", "lci-broadcast", []string{"iters=67108865"},
		"iters: above the limit 67108864 (got 67108865; 16 B per multicast's reach count and last arrival x 67108864 = 1024 MiB, the per-run memory budget)"),
	Entry("lci-broadcast stream_messages", "lci-broadcast", []string{"stream_messages=67108865"},
		"stream_messages: above the limit 67108864 (got 67108865; 16 B per message's reach count and last arrival x 67108864 = 1024 MiB, the per-run memory budget)"),
	Entry("lci-broadcast stream_size", "lci-broadcast", []string{"stream_size=16777217"},
		"stream_size: above the limit 16777216 (got 16777217; lcitb's largest message, 16 MiB)"),
	Entry("lci-broadcast nodes", "lci-broadcast", []string{"nodes=65"},
		"nodes: above the limit 64 (got 65; lcitb's network of 2 to 64 hosts)"),
	// scenario.MaxDelay = 1 s = 10^6 µs.
	Entry("lci-traffic hot_pause_us", "lci-traffic", []string{"hot_pause_us=1000001"},
		"hot_pause_us: above the limit 1000000 (got 1000001; scenario.MaxDelay, 1 s)"),
	// 2048 - 16: two sizes, 16 and the MTU.
	Entry("lci-report step", "lci-report", []string{"step=2033"},
		"step: above the limit 2032 (got 2033; sizes from 16 to the 2 KB MTU, at least two)"),
	Entry("lci-logp size", "lci-logp", []string{"size=2049"},
		"size: above the limit 2048 (got 2049; one packet of the 2 KB MTU)"),
)
