package panda_test

import (
	"encoding/binary"
	"fmt"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// fakeHost records reports.
type fakeHost struct {
	node int
	got  []string
}

func (f *fakeHost) Node() int { return f.node }
func (f *fakeHost) Report(now clock.Time, rule, format string, args ...any) {
	f.got = append(f.got, fmt.Sprintf("%v %s ", now, rule)+fmt.Sprintf(format, args...))
}

var _ = Describe("Panda's fragmentation", func() {
	header := func(p []byte) (uint32, uint32) {
		return binary.LittleEndian.Uint32(p[0:]), binary.LittleEndian.Uint32(p[4:])
	}
	It("puts a 16-byte message in one packet of 8 + 16 bytes, the I/O vector's pieces in order", func() {
		pk := panda.Fragments(2048, [][]byte{{1, 2, 3, 4}, make([]byte, 12)}, 7)
		Expect(pk).To(HaveLen(1))
		Expect(pk[0]).To(HaveLen(panda.HeaderBytes + 16))
		arg, total := header(pk[0])
		Expect(arg).To(Equal(uint32(7)))
		Expect(total).To(Equal(uint32(16)))
		Expect(pk[0][8:12]).To(Equal([]byte{1, 2, 3, 4}))
	})
	It("cuts 5000 bytes at a 2048-byte MTU into 2040 + 2040 + 920 bytes of data, each behind a header", func() {
		data := make([]byte, 5000)
		for i := range data {
			data[i] = byte(i * 7)
		}
		// Two pieces, split inside the first packet: the fragments do not
		// follow the vector's boundaries.
		pk := panda.Fragments(2048, [][]byte{data[:100], data[100:]}, 0)
		var sizes []int
		var joined []byte
		for _, p := range pk {
			sizes = append(sizes, len(p)-panda.HeaderBytes)
			_, total := header(p)
			Expect(total).To(Equal(uint32(5000)))
			joined = append(joined, p[panda.HeaderBytes:]...)
		}
		Expect(cmp.Diff([]int{2040, 2040, 920}, sizes)).To(BeEmpty())
		Expect(joined).To(Equal(data))
	})
	It("sends an empty message as one packet of the header alone", func() {
		pk := panda.Fragments(2048, nil, 3)
		Expect(pk).To(HaveLen(1))
		Expect(pk[0]).To(HaveLen(panda.HeaderBytes))
	})
})

var _ = Describe("the total-order checker", func() {
	It("accepts nodes that deliver the same sequence and reports a node whose k-th delivery differs", func() {
		c := panda.NewOrderChecker()
		a, b := &fakeHost{node: 0}, &fakeHost{node: 1}
		c.Delivered(10, a, 2, 0)
		c.Delivered(11, a, 3, 1)
		c.Delivered(12, b, 2, 0) // the same first message: fine
		Expect(b.got).To(BeEmpty())
		c.Delivered(13, b, 4, 2) // its second is not a's second
		Expect(b.got).To(Equal([]string{"13ps panda.order node 1 delivered ordered broadcast 2 from 4 as its #1; another node delivered 1 from 3 there"}))
		Expect(c.Checked).To(Equal(2))
		Expect(c.Violations).To(Equal(1))
		Expect(c.Count(0)).To(Equal(2))
		Expect(c.Count(1)).To(Equal(2))
	})
})
