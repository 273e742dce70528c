package mpi_test

import (
	"github.com/nisim/nisim/host/mpi"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("MPI's matching", func() {
	DescribeTable("a receive of (source, tag) against a message",
		func(src, tag, esrc, etag int, want bool) {
			pt, coll := mpi.Matches(src, tag, esrc, etag)
			Expect(pt).To(Equal(want))
			Expect(coll).To(BeFalse(), "collective traffic never matches a point-to-point receive")
		},
		Entry("exact", 3, 7, 3, 7, true),
		Entry("other source", 3, 7, 4, 7, false),
		Entry("other tag", 3, 7, 3, 8, false),
		Entry("any source", mpi.AnySource, 7, 5, 7, true),
		Entry("any tag", 3, mpi.AnyTag, 3, 99, true),
		Entry("both wildcards", mpi.AnySource, mpi.AnyTag, 1, -5, true),
	)
	It("writes a 16-byte envelope: context, source, tag (signed), length", func() {
		Expect(mpi.Envelope(2, -1, 300)).To(Equal([]byte{0, 0, 0, 0, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 44, 1, 0, 0}))
		Expect(mpi.Envelope(0, 0, 0)).To(HaveLen(mpi.EnvelopeBytes))
	})
})
