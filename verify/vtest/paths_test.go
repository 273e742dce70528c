package vtest_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("TracedAndUntraced", func() {
	clk := clock.MHz(100)

	// stream sends 20 flits over a 2-VC credit link with a 3-cycle wire
	// and returns the cycle each was popped and whether e traced.
	stream := func(e *env.Env) ([]clock.Cycle, bool) {
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.VCs, cfg.BufferFlits = 4, 3, 2, 2
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("L")
		Expect(err).NotTo(HaveOccurred())
		d := l.From(link.A)
		sent := 0
		var pops []clock.Cycle
		snd := vtest.NewAgent(e, "S", clk, func(now clock.Time, c clock.Cycle) bool {
			if sent < 20 && d.CanSend(now, sent%2) {
				d.Send(now, &link.Flit{VC: uint8(sent % 2), Head: true, Tail: true, Data: []byte{1, 2, 3, 4}, Info: &link.PacketInfo{ID: uint64(sent)}})
				sent++
			}
			return sent < 20
		})
		rcv := vtest.NewAgent(e, "R", clk, func(now clock.Time, c clock.Cycle) bool {
			for vc := range 2 {
				if _, ok := d.Rx(vc).Pop(now); ok {
					pops = append(pops, c)
				}
			}
			return len(pops) < 20
		})
		d.Connect(snd, rcv)
		snd.Start()
		rcv.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		return pops, e.Trace.Enabled()
	}

	It("runs traced then untraced with one seed and finds a link's two paths alike", func() {
		var traced []bool
		var seeds []uint64
		pops, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk}, func(e *env.Env) []clock.Cycle {
			p, tr := stream(e)
			traced = append(traced, tr)
			seeds = append(seeds, e.Seed)
			return p
		})
		Expect(diff).To(BeEmpty())
		Expect(pops).To(HaveLen(20))
		Expect(traced).To(Equal([]bool{true, false}))
		Expect(seeds[0]).To(Equal(seeds[1]))
	})

	It("reports what differs", func() {
		got, diff := vtest.TracedAndUntraced(vtest.Options{Clock: clk, Seed: 5}, func(e *env.Env) []int {
			if e.Trace.Enabled() {
				return []int{1, 2, 3}
			}
			return []int{1, 2, 4}
		})
		Expect(got).To(Equal([]int{1, 2, 3}))
		Expect(diff).To(ContainSubstring("3"))
		Expect(diff).To(ContainSubstring("4"))
	})
})
