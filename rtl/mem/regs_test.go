package mem_test

import (
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Registers", func() {
	It("calls the device's handlers after its latency and answers reads and non-posted writes", func() {
		clk := clock.MHz(100)
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		r, err := mem.MakeRegistersBuilder().WithEnv(e).WithClock(clk).WithLatency(2).Build("Regs")
		Expect(err).NotTo(HaveOccurred())
		var writes []string
		r.OnWrite(func(now clock.Time, addr uint64, data []byte) {
			writes = append(writes, fmt.Sprintf("%d@%d", clk.CycleAt(now), addr))
		})
		r.OnRead(func(now clock.Time, addr uint64, n int) []byte { return []byte{byte(addr), 7, 7, 7} })
		ch := r.Port()
		var ups []clock.Cycle
		var data []byte
		step := 0
		a := vtest.NewAgent(e, "M", clk, func(now clock.Time, c clock.Cycle) bool {
			if b, ok := ch.Up.Pop(now); ok {
				ups = append(ups, c)
				if b.Data != nil {
					data = b.Data
				}
			}
			switch step {
			case 0:
				req := &mem.Req{Op: mem.Write, Addr: 4, Len: 4}
				ch.Down.Push(now, mem.WriteBeats(req, []byte{1, 2, 3, 4}, 4)[0])
				step++
			case 1:
				ch.Down.Push(now, mem.Beat{Req: &mem.Req{Op: mem.Read, Addr: 8, Len: 4}, First: true, Last: true})
				step++
			}
			return len(ups) < 2
		})
		ch.ConnectMaster(a)
		a.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Write pushed at c0, seen at c1, handled at c1+2 = c3 with its ack;
		// the read (pushed c1) is taken at c4 and answered at c6.
		Expect(writes).To(Equal([]string{"3@4"}))
		Expect(ups).To(Equal([]clock.Cycle{4, 7}))
		Expect(data).To(Equal([]byte{8, 7, 7, 7}))
	})
})
