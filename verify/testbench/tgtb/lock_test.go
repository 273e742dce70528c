package tgtb_test

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/tglib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("host/tglib's lock, sequential and Op form (section 2.3.5)", func() {
	// Three nodes each take the lock word 0x600 of node 0 four times and,
	// holding it, add one to the counter 0x500 of node 0 by a remote read, a
	// computation and a remote write: a read-modify-write that loses
	// increments unless the lock excludes the others.
	const nodes, rounds = 3, 4
	type hold struct {
		Node     int
		From, To clock.Time
	}

	DescribeTable("hands the lock to one holder at a time and loses no increment",
		func(version int, sequential bool) {
			e := vtest.NewEnv(vtest.Options{Clock: tcClock})
			cl, p := cluster(e, nodes, version)
			var holds []hold
			holders, most := 0, 0
			enter := func(now clock.Time, n int) {
				holders++
				most = max(most, holders)
				holds = append(holds, hold{Node: n, From: now})
			}
			// leave runs when the holder starts Unlock: its fence then its
			// store of 0 follow, so the lock is free only later.
			leave := func(now clock.Time, n int) {
				holders--
				for i := len(holds) - 1; i >= 0; i-- {
					if holds[i].Node == n {
						holds[i].To = now
						break
					}
				}
			}
			for n := range nodes {
				if sequential {
					p[n].Start(p[n].Go(func(s *tglib.Seq) {
						for range rounds {
							s.Lock(0, 0x600)
							enter(s.P.Now(), n)
							v := s.Load(0, 0x500)
							s.Compute(50)
							s.Store(0, 0x500, v+1)
							leave(s.P.Now(), n)
							s.Unlock(0, 0x600)
						}
					}))
					continue
				}
				var round func(now clock.Time, i int)
				round = func(now clock.Time, i int) {
					if i == rounds {
						return
					}
					p[n].Run(now, p[n].Lock(0, 0x600, func(now clock.Time) {
						enter(now, n)
						p[n].Run(now, p[n].Load(0, 0x500, func(now clock.Time, v uint32) {
							ops := []cpu.Op{p[n].Compute(50), p[n].Store(0, 0x500, v+1),
								p[n].Do(func(now clock.Time) { leave(now, n) })}
							ops = append(ops, p[n].Unlock(0, 0x600)...)
							ops = append(ops, p[n].Do(func(now clock.Time) { round(now, i+1) }))
							p[n].Run(now, ops...)
						}))
					})...)
				}
				p[n].Start(p[n].Do(func(now clock.Time) { round(now, 0) }))
			}
			run(e, cl)
			Expect(mem(cl, 0, 0x500)).To(Equal(uint32(nodes * rounds)))
			Expect(mem(cl, 0, 0x600)).To(BeZero(), "the lock is free at the end")
			Expect(holds).To(HaveLen(nodes * rounds))
			Expect(most).To(Equal(1), "two holders at once")
			// The holds, in the order they were taken, are disjoint: each
			// ends before the next begins.
			per := map[int]int{}
			for i, h := range holds {
				Expect(h.To).To(BeNumerically(">", h.From), "hold %d has an end", i)
				if i > 0 {
					Expect(h.From).To(BeNumerically(">=", holds[i-1].To), "hold %d overlaps hold %d", i, i-1)
				}
				per[h.Node]++
			}
			Expect(per).To(Equal(map[int]int{0: rounds, 1: rounds, 2: rounds}))
			// The nodes contended: the lock changed hands between nodes
			// before any node had finished its rounds.
			firstNodes := map[int]bool{}
			for _, h := range holds[:rounds] {
				firstNodes[h.Node] = true
			}
			Expect(len(firstNodes)).To(BeNumerically(">", 1), "holds %v", holds)
		},
		Entry("Telegraphos I, Seq.Lock", 1, true),
		Entry("Telegraphos I, Op-form Lock", 1, false),
		Entry("Telegraphos II, Seq.Lock", 2, true),
		Entry("Telegraphos II, Op-form Lock", 2, false),
	)
})
