package rma_test

import (
	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/rma"
)

var _ = Describe("payload codec", func() {
	It("packs a 2-word WRITE as the worked layout", func() {
		p := rma.Payload{Op: rma.OpWrite, Intr: true, Count: 2, Desc: 7, Offset: 0x0102, ReqID: 0xBEEF}
		p.SetWord(0, 0x11223344)
		p.SetWord(1, 0xAABBCCDD)
		b, err := p.Encode()
		Expect(err).NotTo(HaveOccurred())
		var want [48]byte
		// b0 = op 1 <<5 | intr 1<<4 | count 2 = 0x20|0x10|0x02 = 0x32
		want[0] = 0x32
		want[1] = 7
		want[2], want[3] = 0x02, 0x01 // offset 0x0102 LE
		want[4], want[5] = 0xEF, 0xBE // req id 0xBEEF LE
		copy(want[6:], []byte{0x44, 0x33, 0x22, 0x11, 0xDD, 0xCC, 0xBB, 0xAA})
		Expect(cmp.Diff(want, b)).To(BeEmpty())
		q, err := rma.Decode(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(cmp.Diff(p, q)).To(BeEmpty())
	})

	It("places a CAS request's operands and reply location", func() {
		p := rma.Payload{Op: rma.OpCASReq, Count: 1, Desc: 3, Offset: 9, ReqID: 5}
		p.SetWord(0, 1) // old
		p.SetWord(1, 2) // new
		p.SetReply(4, 0x0605)
		b, err := p.Encode()
		Expect(err).NotTo(HaveOccurred())
		// b0 = 4<<5 | 1 = 0x81; data at 6: old 01 00 00 00, new 02 00 00 00,
		// reply desc at data[8] = byte 14, reply offset at data[10:12] = bytes 16-17.
		Expect(b[0]).To(Equal(byte(0x81)))
		Expect(b[6:18]).To(Equal([]byte{1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0x05, 0x06}))
		q, err := rma.Decode(b)
		Expect(err).NotTo(HaveOccurred())
		d, off := q.Reply()
		Expect([]int{int(d), int(off)}).To(Equal([]int{4, 0x0605}))
	})

	DescribeTable("refuses what does not fit, naming the field",
		func(p rma.Payload, field string) {
			_, err := p.Encode()
			Expect(err).To(MatchError(ContainSubstring(field)))
		},
		Entry("op 0", rma.Payload{Op: 0, Count: 1}, "Op 0"),
		Entry("op 7", rma.Payload{Op: 7, Count: 1}, "Op 7"),
		Entry("count 0", rma.Payload{Op: rma.OpWrite, Count: 0}, "Count 0"),
		Entry("count 11", rma.Payload{Op: rma.OpWrite, Count: 11}, "Count 11"),
	)

	It("decodes forged bytes to an error naming the field, never a panic", func() {
		var b [48]byte
		_, err := rma.Decode(b) // op 0, count 0
		Expect(err).To(MatchError(ContainSubstring("Op 0")))
		b[0] = 1<<5 | 15
		_, err = rma.Decode(b)
		Expect(err).To(MatchError(ContainSubstring("Count 15")))
	})

	It("maps VCIs to ordered node pairs and back", func() {
		// 32 + 64·1 + 3 = 99
		Expect(rma.VCI(1, 3)).To(Equal(uint16(99)))
		src, dst, ok := rma.SourceOf(99)
		Expect([]any{src, dst, ok}).To(Equal([]any{1, 3, true}))
		_, _, ok = rma.SourceOf(31)
		Expect(ok).To(BeFalse())
	})

	It("names every status", func() {
		Expect(rma.ErrSrcVCI.String()).To(Equal("vci"))
		Expect(rma.ErrNoRequest.String()).To(Equal("noreq"))
	})
})

var _ = Describe("the data an op uses", func() {
	DescribeTable("is a prefix of the data field",
		func(p rma.Payload, want int) { Expect(p.UsedBytes()).To(Equal(want)) },
		Entry("WRITE of 3 words", rma.Payload{Op: rma.OpWrite, Count: 3}, 12),
		Entry("READ request: the reply location", rma.Payload{Op: rma.OpReadReq, Count: 10}, 4),
		Entry("READ reply of 10 words", rma.Payload{Op: rma.OpReadReply, Count: 10}, 40),
		Entry("CAS request: old, new, reply location", rma.Payload{Op: rma.OpCASReq, Count: 1}, 12),
		Entry("CAS reply: old and swapped", rma.Payload{Op: rma.OpCASReply, Count: 1}, 5),
	)
})
