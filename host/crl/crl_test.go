package crl_test

import (
	"fmt"

	"github.com/nisim/nisim/host/crl"
	"github.com/nisim/nisim/rtl/clock"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

type fakeHost struct {
	node int
	got  []string
}

func (f *fakeHost) Node() int { return f.node }
func (f *fakeHost) Report(now clock.Time, rule, format string, args ...any) {
	f.got = append(f.got, rule+" "+fmt.Sprintf(format, args...))
}

var _ = Describe("the coherence checker", func() {
	regions := []crl.Region{{Home: 0, Size: 4}}
	It("accepts many readers of the last completed write, then one writer", func() {
		c := crl.NewChecker(regions)
		a, b := &fakeHost{node: 0}, &fakeHost{node: 1}
		c.StartRead(1, a, 0, make([]byte, 4)) // zeros before any write
		c.StartRead(2, b, 0, make([]byte, 4))
		c.EndRead(0)
		c.EndRead(0)
		c.StartWrite(3, b, 0)
		c.EndWrite(0, []byte{1, 2, 3, 4})
		c.StartRead(4, a, 0, []byte{1, 2, 3, 4})
		Expect(a.got).To(BeEmpty())
		Expect(b.got).To(BeEmpty())
		Expect(c.Checked).To(Equal(4))
	})
	It("reports a stale read, a read during a write and a second writer", func() {
		c := crl.NewChecker(regions)
		a, b := &fakeHost{node: 0}, &fakeHost{node: 1}
		c.StartWrite(1, a, 0)
		c.EndWrite(0, []byte{9, 9, 9, 9})
		c.StartRead(2, b, 0, make([]byte, 4)) // the old zeros
		Expect(b.got).To(Equal([]string{"crl.coherence node 1 reads a stale copy of region 0 (not the last completed write)"}))
		c.EndRead(0)
		c.StartWrite(3, a, 0)
		c.StartWrite(4, b, 0)
		c.StartRead(5, b, 0, []byte{9, 9, 9, 9})
		Expect(b.got[1:]).To(Equal([]string{
			"crl.coherence node 1 writes region 0 while 1 other nodes write and 0 read it",
			"crl.coherence node 1 reads region 0 while a node writes it",
		}))
		Expect(c.Violations).To(Equal(3))
	})
})
