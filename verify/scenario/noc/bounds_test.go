package noc_test

import (
	"fmt"
	"unsafe"

	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/noc"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Issue 12: sizes and counts had no upper bound. Each is refused on one
// line naming the --set, the limit and its derivation from
// scenario.MemoryBudget.
var _ = Describe("upper bounds of the network scenarios", func() {
	// A buffered flit: a link.Flit and an 8-byte push time, plus its
	// payload (flit_bytes = 16 on the mesh).
	flit := int64(unsafe.Sizeof(link.Flit{})) + 8
	limit := func(perUnit int64) int64 { return scenario.BudgetLimit(perUnit) }

	It("bounds the mesh's VC buffers by the flits all its router inputs can hold", func() {
		// 8 x 8 mesh: 5 x 64 = 320 router inputs, 8 VCs each.
		per := 320 * 8 * (flit + 16)
		err := scenario.Configure(noc.MeshDefaults(), "", []string{"router.vc_buf_size=1000000000"})
		Expect(err).To(MatchError(fmt.Sprintf("invalid parameter router.vc_buf_size: above the limit %d (got 1000000000; "+
			"%d B per flit of %d+16 B in each of 8 VCs of 320 router inputs x %d = 1023 MiB, the per-run memory budget)",
			limit(per), per, flit, limit(per))))
		Expect(scenario.Configure(noc.MeshDefaults(), "", []string{fmt.Sprintf("router.vc_buf_size=%d", limit(per))})).To(Succeed())
	})

	It("bounds a shared router buffer and the packet size", func() {
		err := scenario.Configure(noc.MeshDefaults(), "", []string{"router.buffer_policy=shared", "router.buf_size=1000000000000"})
		Expect(err).To(MatchError(HavePrefix("invalid parameter router.buf_size: above the limit ")))
		// 64 terminals each hold the packet they inject.
		per := 64 * (flit + 16)
		err = scenario.Configure(noc.MeshDefaults(), "", []string{"packet_size=1000000000000"})
		Expect(err).To(MatchError(fmt.Sprintf("invalid parameter packet_size: above the limit %d (got 1000000000000; "+
			"%d B per flit of %d+16 B of a packet at each of 64 terminals x %d = 1023 MiB, the per-run memory budget)",
			limit(per), per, flit, limit(per))))
	})

	It("refuses a huge mesh radix before sizing traffic by it", func() {
		err := scenario.Configure(noc.MeshDefaults(), "", []string{"k=1000000000"})
		Expect(err).To(MatchError("invalid parameter k: must be 2..64 (got 1000000000)"))
	})

	It("bounds the star switches' output queues and hotspot lists", func() {
		// ATM: 4 outputs of (flit + 53-byte cell).
		per := 4 * (flit + 53)
		err := scenario.Configure(noc.ATMDefaults(), "", []string{"queue_depth=1000000000000"})
		Expect(err).To(MatchError(fmt.Sprintf("invalid parameter queue_depth: above the limit %d (got 1000000000000; "+
			"%d B per cell of %d+53 B at each of 4 outputs x %d = 1023 MiB, the per-run memory budget)", limit(per), per, flit, limit(per))))
		err = scenario.Configure(noc.ATMDefaults(), "", []string{"hotspots=[0,1,2,3,0]"})
		Expect(err).To(MatchError("invalid parameter hotspots: above the limit 4 (got 5; one entry per host)"))
		err = scenario.Configure(noc.MCDefaults(), "", []string{"queue_depth=1000000000000"})
		Expect(err).To(MatchError(HavePrefix("invalid parameter queue_depth: above the limit ")))
	})
})
