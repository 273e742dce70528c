package atm_test

import (
	"github.com/nisim/nisim/switch/atm"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("ATM cell header", func() {
	It("computes the HEC of the ITU-T I.432 idle cell", func() {
		// The idle cell header is 00 00 00 01 with HEC 0x52.
		Expect(atm.HEC([]byte{0, 0, 0, 1})).To(Equal(byte(0x52)))
		b, err := atm.Header{CLP: true}.Encode()
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal([]byte{0, 0, 0, 1, 0x52}))
	})

	It("packs the UNI fields in network order and decodes them back", func() {
		h := atm.Header{GFC: 0xa, VPI: 0x5c, VCI: 0xbeef, PT: 5, CLP: true}
		b, err := h.Encode()
		Expect(err).NotTo(HaveOccurred())
		// GFC a, VPI 5c, VCI beef, PT 101, CLP 1.
		Expect(b[:4]).To(Equal([]byte{0xa5, 0xcb, 0xee, 0xfb}))
		back, err := atm.DecodeHeader(b)
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(h))
	})

	It("rejects a header with a bad HEC or length", func() {
		b, _ := atm.Header{VCI: 42}.Encode()
		b[4] ^= 1
		_, err := atm.DecodeHeader(b)
		Expect(err).To(MatchError(ContainSubstring("HEC")))
		_, err = atm.DecodeHeader(b[:4])
		Expect(err).To(MatchError(ContainSubstring("4 bytes, want 5")))
	})

	It("builds a cell as one 53-byte flit with a padded payload", func() {
		f, err := atm.NewCell(7, atm.Header{VPI: 1, VCI: 100}, []byte{1, 2, 3})
		Expect(err).NotTo(HaveOccurred())
		Expect(f.Head && f.Tail).To(BeTrue())
		Expect(f.WireBytes()).To(Equal(53))
		Expect(f.Data).To(HaveLen(48))
		Expect(f.Data[:4]).To(Equal([]byte{1, 2, 3, 0}))
		h, err := atm.CellHeader(f)
		Expect(err).NotTo(HaveOccurred())
		Expect(h.VCI).To(Equal(uint16(100)))
	})

	DescribeTable("rejects fields that do not fit",
		func(h atm.Header, payload int, msg string) {
			_, err := atm.NewCell(1, h, make([]byte, payload))
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("GFC", atm.Header{GFC: 16}, 48, "GFC 16"),
		Entry("PT", atm.Header{PT: 8}, 48, "PT 8"),
		Entry("payload", atm.Header{}, 49, "payload 49 bytes"),
	)
})
