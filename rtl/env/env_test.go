package env_test

import (
	"fmt"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves"
	"github.com/sarchlab/akita/v3/sim"
)

// work is a unit for the watchdog holding a number of pending items.
type work struct {
	name    string
	pending int
}

func (w *work) Name() string  { return w.name }
func (w *work) Idle() bool    { return w.pending == 0 }
func (w *work) State() string { return fmt.Sprintf("%d descriptor(s) pending", w.pending) }

var _ check.Unit = (*work)(nil)

var clk = clock.MHz(100) // 10 ns cycles

var _ = Describe("Env", func() {
	It("runs an empty env", func() {
		e := env.New(env.Options{})
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(env.Result{}))
		Expect(e.Now()).To(BeZero())
	})

	It("counts the events and ends at the last one", func() {
		e := env.New(env.Options{})
		var cycles []clock.Cycle
		a := vtest.NewAgent(e, "Demo.Agent", clk, func(now clock.Time, c clock.Cycle) bool {
			cycles = append(cycles, c)
			Expect(e.Now()).To(Equal(now))
			return c < 4
		})
		a.Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Ticks at cycles 0..4: five events, the last at 40 ns.
		Expect(cycles).To(Equal([]clock.Cycle{0, 1, 2, 3, 4}))
		Expect(res).To(Equal(env.Result{End: 40 * clock.Nanosecond, Events: 5}))
		Expect(a.Ticks()).To(Equal(uint64(5)))
	})

	It("keeps the current time where components read it without Akita's lock, equal to the engine's", func() {
		e := env.New(env.Options{})
		Expect(e.Engine.NowPS()).NotTo(BeNil())
		// A 33.33 MHz clock (period 30,000 ps exactly) and a 300 MHz one
		// (edges at ceil(n*10000/3) ps: 0, 3334, 6667, 10000) interleave;
		// AfterStep callbacks are secondary events at A's times.
		var seen, want []clock.Time
		check := func(now clock.Time) {
			seen = append(seen, e.Now(), *e.Engine.NowPS())
			want = append(want, now, clock.FromSim(e.Engine.CurrentTime()))
		}
		var a, b *vtest.Agent
		pci, err := clock.Ratio(100_000_000, 3)
		Expect(err).NotTo(HaveOccurred())
		a = vtest.NewAgent(e, "Demo.A", pci, func(now clock.Time, c clock.Cycle) bool {
			check(now)
			Expect(a.Now()).To(Equal(now))
			e.Engine.AfterStep(now, check)
			return c < 5
		})
		b = vtest.NewAgent(e, "Demo.B", clock.Hz(300_000_000), func(now clock.Time, c clock.Cycle) bool {
			check(now)
			Expect(b.Now()).To(Equal(now))
			return c < 3
		})
		a.Start()
		b.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(want).To(ContainElements(3334*clock.Picosecond, 6667*clock.Picosecond, 10000*clock.Picosecond))
		// A ticks 6 times and B 4 times, A's 6 callbacks: 16 checks of 2.
		Expect(seen).To(HaveLen(32))
		Expect(seen).To(Equal(want))
		// After the run: the last event's time, A's edge 5 at 5 x 30 ns.
		Expect(e.Now()).To(Equal(150 * clock.Nanosecond))
		Expect(e.Now()).To(Equal(clock.FromSim(e.Engine.CurrentTime())))
	})

	It("runs events in the order of Akita's SerialEngine, also at equal times and for secondary events", func() {
		// A tree of events: each handled event logs its id and schedules
		// up to three more, primary or secondary, 0-2 ns after the current
		// time (many equal times), chosen from its id alone. Both engines
		// must handle the same ids in the same order.
		run := func(eng sim.Engine) []int {
			var log []int
			next := 1
			var h probeHandler
			h = func(ev sim.Event) {
				p := ev.(*probe)
				log = append(log, p.id)
				if len(log) > 3000 {
					return
				}
				r := uint64(p.id)*2654435761 + 12345
				for k := range 3 {
					r = r*6364136223846793005 + 1442695040888963407
					if r>>60 < 4 && k > 0 {
						continue
					}
					dt := sim.VTimeInSec(float64((r>>40)%3) * 1e-9)
					eng.Schedule(&probe{t: eng.CurrentTime() + dt, id: next, sec: (r>>20)%4 == 0, h: h})
					next++
				}
			}
			eng.Schedule(&probe{t: 0, id: 0, h: h})
			Expect(eng.Run()).To(Succeed())
			return log
		}
		akita := run(sim.NewSerialEngine())
		ours := run(env.New(env.Options{StallLimit: -1}).Engine)
		Expect(len(akita)).To(BeNumerically(">", 3000))
		Expect(ours).To(Equal(akita))
	})

	It("panics on an event scheduled in the past, as Akita's engine does", func() {
		e := env.New(env.Options{})
		var h probeHandler = func(sim.Event) {}
		e.Engine.Schedule(&probe{t: 2e-9, h: func(sim.Event) {
			Expect(func() { e.Engine.Schedule(&probe{t: 1e-9, h: h}) }).To(PanicWith(ContainSubstring("earlier than the current time")))
		}})
		Expect(e.Engine.Run()).To(Succeed())
	})

	It("ticks components of shared clocks (clock.Domain) at exactly the edges they would tick at alone", func() {
		// Components on two clocks that keep ticking, sleep, wake each
		// other for the next edge and set timers, each choice drawn from
		// the component's name and cycle. On Akita's plain SerialEngine
		// every component schedules its own events; on env's engine they
		// share one event per edge per clock. Both must tick every
		// component at the same edges.
		run := func(eng sim.Engine) []string {
			var log []string
			pci, err := clock.Ratio(100_000_000, 3)
			Expect(err).NotTo(HaveOccurred())
			clks := []clock.Clock{clock.MHz(100), pci}
			var comps []*clock.Ticking
			for i := range 8 {
				clk := clks[i%2]
				var c *clock.Ticking
				c = clock.NewTicking(fmt.Sprintf("C%d", i), eng, clk, tickFunc(func(now clock.Time) bool {
					log = append(log, fmt.Sprintf("%09d %s", now, c.Name()))
					n := clk.CycleAt(now)
					if n > 3000 {
						return false
					}
					r := (uint64(i)+1)*0x9E3779B97F4A7C15 ^ uint64(n)*0xBF58476D1CE4E5B9
					r ^= r >> 29
					r *= 0x94D049BB133111EB
					r ^= r >> 32
					switch r % 8 {
					case 0:
						comps[(i+int(r>>8)%7+1)%8].Wake(now)
					case 1:
						comps[(i+int(r>>8)%7+1)%8].WakeAt(now + clock.Time(r>>16%50_000))
					case 2:
						c.WakeAt(now + clock.Time(r>>16%90_000))
						return false
					}
					return (r>>40)%16 != 0
				}))
				comps = append(comps, c)
			}
			for _, c := range comps {
				c.Start()
			}
			Expect(eng.Run()).To(Succeed())
			slices.Sort(log)
			return log
		}
		alone := run(sim.NewSerialEngine())
		shared := run(env.New(env.Options{StallLimit: -1}).Engine)
		Expect(len(alone)).To(BeNumerically(">", 2000))
		Expect(shared).To(Equal(alone))
	})

	It("calls Progress after every ProgressEvery-th event with the time of that event", func() {
		type call struct {
			now    clock.Time
			events uint64
		}
		var calls []call
		e := env.New(env.Options{
			// Edges at 0, 10 ns, ...: 2.5 ProgressEvery edges run, the
			// last at (2.5*ProgressEvery-1)*10 ns.
			TimeLimit: clock.Time(5*env.ProgressEvery/2-1) * 10 * clock.Nanosecond,
			Progress:  func(now clock.Time, events uint64) { calls = append(calls, call{now, events}) },
		})
		a := vtest.NewAgent(e, "Demo.Agent", clk, func(clock.Time, clock.Cycle) bool { return true })
		a.Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Events).To(Equal(uint64(5 * env.ProgressEvery / 2)))
		// Event number k (1-based) is the edge at (k-1)*10 ns: calls after
		// events ProgressEvery and 2*ProgressEvery, none for the half.
		Expect(calls).To(Equal([]call{
			{clock.Time(env.ProgressEvery-1) * 10 * clock.Nanosecond, env.ProgressEvery},
			{clock.Time(2*env.ProgressEvery-1) * 10 * clock.Nanosecond, 2 * env.ProgressEvery},
		}))
	})

	It("reports a deadlock when a registered unit is left busy", func() {
		e := env.New(env.Options{})
		w := &work{name: "Demo.Dma", pending: 3}
		e.Register(w)
		Expect(e.Monitor.Units()).To(Equal([]check.Unit{w}))
		// The agent takes one item per cycle but gives up after cycle 1:
		// one item is left when the events run out at 10 ns.
		vtest.NewAgent(e, "Demo.Agent", clk, func(now clock.Time, c clock.Cycle) bool {
			w.pending--
			return c < 1
		}).Start()
		res, err := e.Run()
		Expect(res).To(Equal(env.Result{End: 10 * clock.Nanosecond, Events: 2}))
		Expect(err).To(MatchError(ContainSubstring("deadlock")))
		// The monitor's list (with the watchdog's violation) first, then
		// the watchdog's description of every busy unit.
		Expect(err).To(MatchError("1 checker violation(s):\n" +
			"  10ns Watchdog [deadlock] 1 busy unit(s) when events ran out\n" +
			"deadlock or unfinished work: the simulation ran out of events at 10ns with 1 busy unit(s):\n" +
			"  Demo.Dma: 1 descriptor(s) pending"))
	})

	It("passes when the registered units are idle at the end", func() {
		e := env.New(env.Options{})
		w := &work{name: "Demo.Dma", pending: 3}
		e.Register(w)
		vtest.NewAgent(e, "Demo.Agent", clk, func(now clock.Time, c clock.Cycle) bool {
			w.pending--
			return w.pending > 0
		}).Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.End).To(Equal(20 * clock.Nanosecond))
	})

	It("fails the run on a reported violation, after running it to the end", func() {
		e := env.New(env.Options{})
		vtest.NewAgent(e, "Demo.Agent", clk, func(now clock.Time, c clock.Cycle) bool {
			if c == 2 {
				e.Report(now, "Demo.Agent", "protocol", "grant without request (id %d)", 7)
			}
			return c < 3
		}).Start()
		res, err := e.Run()
		Expect(res.Events).To(Equal(uint64(4)))
		Expect(err).To(MatchError("1 checker violation(s):\n  20ns Demo.Agent [protocol] grant without request (id 7)"))
	})

	DescribeTable("TimeLimit stops a component that would tick forever",
		func(limit, end clock.Time, ticks uint64) {
			e := env.New(env.Options{TimeLimit: limit})
			e.Register(&work{name: "Demo.Dma", pending: 1}) // never idle
			a := vtest.NewAgent(e, "Demo.Agent", clk, func(clock.Time, clock.Cycle) bool { return true })
			a.Start()
			res, err := e.Run()
			// The watchdog does not run on a stopped run: no deadlock.
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Stopped).To(BeTrue())
			Expect(res.End).To(Equal(end))
			Expect(res.End).To(BeNumerically("<=", limit))
			Expect(res.Events).To(Equal(ticks))
			Expect(a.Ticks()).To(Equal(ticks))
		},
		// Edges at 0, 10, ..., 90 ns are within 95 ns; 100 ns is not.
		Entry("between two edges", 95*clock.Nanosecond, 90*clock.Nanosecond, uint64(10)),
		// An edge exactly at the limit still ticks.
		Entry("on an edge", 90*clock.Nanosecond, 90*clock.Nanosecond, uint64(10)),
		// Only edge 0 is within 1 ps.
		Entry("right after the start", clock.Time(1), clock.Time(0), uint64(1)),
	)

	It("drops AfterStep callbacks beyond the time limit", func() {
		e := env.New(env.Options{TimeLimit: 50 * clock.Nanosecond})
		ran := false
		e.Engine.AfterStep(60*clock.Nanosecond, func(clock.Time) { ran = true })
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(ran).To(BeFalse())
		Expect(res.Stopped).To(BeTrue())
	})

	Context("Stop", func() {
		It("stops the run from inside a tick; components of the same picosecond still tick", func() {
			e := env.New(env.Options{})
			e.Register(&work{name: "Demo.Dma", pending: 1})
			var stopAt clock.Time
			a := vtest.NewAgent(e, "Demo.A", clk, func(now clock.Time, c clock.Cycle) bool {
				if c == 5 {
					stopAt = now
					e.Stop()
				}
				return true // would tick forever
			})
			b := vtest.NewAgent(e, "Demo.B", clk, func(clock.Time, clock.Cycle) bool { return true })
			a.Start()
			b.Start()
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(stopAt).To(Equal(50 * clock.Nanosecond))
			// Both tick at cycles 0..5 (B at 50 ns too, after A's Stop) and
			// never after. They share a clock, so each edge is one engine
			// event: 6 events, the last at 50 ns.
			Expect(a.Ticks()).To(Equal(uint64(6)))
			Expect(b.Ticks()).To(Equal(uint64(6)))
			Expect(res).To(Equal(env.Result{End: 50 * clock.Nanosecond, Events: 6, Stopped: true}))
		})

		It("counts as stopped even when every component goes idle with it", func() {
			e := env.New(env.Options{})
			e.Register(&work{name: "Demo.Dma", pending: 1})
			// A stops at cycle 5 and sleeps; nothing is scheduled after
			// 50 ns, so no event is cut off. The run still ended by Stop:
			// Stopped, and no watchdog.
			vtest.NewAgent(e, "Demo.A", clk, func(now clock.Time, c clock.Cycle) bool {
				if c == 5 {
					e.Stop()
					return false
				}
				return true
			}).Start()
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(res).To(Equal(env.Result{End: 50 * clock.Nanosecond, Events: 6, Stopped: true}))
		})

		It("ends at the stop even with later ticks already scheduled, like a time limit", func() {
			// A (10 ns) stops at 50 ns; B (25 MHz, 40 ns) ticked at 0 and
			// 40 ns and had already scheduled 80 ns. That tick must not
			// run, count or move End past 50 ns: the result is the one a
			// TimeLimit of 50 ns gives.
			run := func(stop bool) (env.Result, uint64, uint64) {
				limit := clock.Time(0)
				if !stop {
					limit = 50 * clock.Nanosecond
				}
				e := env.New(env.Options{TimeLimit: limit})
				a := vtest.NewAgent(e, "Demo.A", clk, func(now clock.Time, c clock.Cycle) bool {
					if stop && c == 5 {
						e.Stop()
					}
					return true
				})
				b := vtest.NewAgent(e, "Demo.B", clock.MHz(25), func(clock.Time, clock.Cycle) bool { return true })
				a.Start()
				b.Start()
				res, err := e.Run()
				Expect(err).NotTo(HaveOccurred())
				return res, a.Ticks(), b.Ticks()
			}
			res, ta, tb := run(true)
			// A: cycles 0..5 = 6 ticks; B: 0 and 40 ns = 2 ticks.
			Expect(ta).To(Equal(uint64(6)))
			Expect(tb).To(Equal(uint64(2)))
			Expect(res).To(Equal(env.Result{End: 50 * clock.Nanosecond, Events: 8, Stopped: true}))
			limRes, la, lb := run(false)
			Expect(limRes).To(Equal(res))
			Expect([]uint64{la, lb}).To(Equal([]uint64{ta, tb}))
		})
	})

	DescribeTable("AfterStep runs after every component of the picosecond",
		func(aFirst bool) {
			e := env.New(env.Options{})
			var a, b uint64
			var log []string
			var seen []string
			tickA := func(now clock.Time, c clock.Cycle) bool {
				if c == 2 {
					a = 1
					log = append(log, "A")
					e.Engine.AfterStep(now, func(t clock.Time) {
						log = append(log, "after")
						seen = append(seen, fmt.Sprintf("%v a=%d b=%d", t, a, b))
					})
				}
				return c < 2
			}
			tickB := func(now clock.Time, c clock.Cycle) bool {
				if c == 2 {
					b = 1
					log = append(log, "B")
				}
				return c < 2
			}
			// Components of one clock tick in the order they were created
			// (clock.Domain), so creating A or B first exercises both tick
			// orders.
			var agentA, agentB *vtest.Agent
			if aFirst {
				agentA = vtest.NewAgent(e, "Demo.A", clk, tickA)
				agentB = vtest.NewAgent(e, "Demo.B", clk, tickB)
			} else {
				agentB = vtest.NewAgent(e, "Demo.B", clk, tickB)
				agentA = vtest.NewAgent(e, "Demo.A", clk, tickA)
			}
			agentA.Start()
			agentB.Start()
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			if aFirst {
				Expect(log).To(Equal([]string{"A", "B", "after"}))
			} else {
				Expect(log).To(Equal([]string{"B", "A", "after"}))
			}
			// Whichever order: the callback sees both values of 20 ns.
			Expect(seen).To(Equal([]string{"20ns a=1 b=1"}))
			// One event per edge for both agents (0, 10, 20 ns) plus the
			// secondary event.
			Expect(res.Events).To(Equal(uint64(4)))
			Expect(res.End).To(Equal(20 * clock.Nanosecond))
		},
		Entry("A (which asks for the callback) ticks first", true),
		Entry("B ticks first", false),
	)

	It("runs AfterStep at a later time", func() {
		e := env.New(env.Options{})
		var at []clock.Time
		vtest.NewAgent(e, "Demo.A", clk, func(now clock.Time, c clock.Cycle) bool {
			e.Engine.AfterStep(now+5*clock.Nanosecond, func(t clock.Time) {
				at = append(at, t)
				Expect(e.Now()).To(Equal(t))
			})
			return false
		}).Start()
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(Equal([]clock.Time{5 * clock.Nanosecond}))
		Expect(res.End).To(Equal(5 * clock.Nanosecond))
	})

	Context("Rand", func() {
		draw := func(e *env.Env, names ...string) map[string][]uint64 {
			out := map[string][]uint64{}
			for _, n := range names {
				r := e.Rand(n)
				for range 8 {
					out[n] = append(out[n], r.Uint64())
				}
			}
			return out
		}

		It("is deterministic per seed and name, whatever the creation order", func() {
			x := draw(env.New(env.Options{Seed: 7}), "Demo.A", "Demo.B", "Demo.C")
			y := draw(env.New(env.Options{Seed: 7}), "Demo.C", "Demo.A")
			Expect(y["Demo.A"]).To(Equal(x["Demo.A"]))
			Expect(y["Demo.C"]).To(Equal(x["Demo.C"]))
			// A second stream of the same name starts over.
			e := env.New(env.Options{Seed: 7})
			Expect(draw(e, "Demo.A")["Demo.A"]).To(Equal(x["Demo.A"]))
			Expect(draw(e, "Demo.A")["Demo.A"]).To(Equal(x["Demo.A"]))
		})

		It("differs between names and between seeds", func() {
			x := draw(env.New(env.Options{Seed: 7}), "Demo.A", "Demo.B")
			z := draw(env.New(env.Options{Seed: 8}), "Demo.A")
			Expect(x["Demo.A"]).NotTo(Equal(x["Demo.B"]))
			Expect(z["Demo.A"]).NotTo(Equal(x["Demo.A"]))
		})
	})

	Context("with waveforms and a trace", func() {
		It("starts the registry, and flushes both at the end of the run", func() {
			reg := waves.NewRegistry(waves.Options{History: 100})
			rec := trace.NewRecorder()
			e := env.New(env.Options{Waves: reg, Trace: rec, Seed: 1})
			sig := reg.Integer("Demo.A", "ticks", 8)
			vtest.NewAgent(e, "Demo.A", clk, func(now clock.Time, c clock.Cycle) bool {
				sig.Set(now, uint64(c)+1)
				rec.Emit(now, c, "Demo.A", "tick", trace.Uint("c", uint64(c)))
				return c < 3
			}).Start()
			_, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			// Four steps, all of them emitted, the last by Run's Flush.
			Expect(reg.Changes()).To(Equal(uint64(4)))
			Expect(rec.Count()).To(Equal(uint64(4)))
			// The registry was started: no more declarations.
			Expect(reg.Wire("Demo.A", "late", 1)).To(BeNil())
		})

		It("fails the run on a waveform error", func() {
			reg := waves.NewRegistry(waves.Options{})
			e := env.New(env.Options{Waves: reg})
			reg.Wire("Demo.A", "x", 1)
			reg.Wire("Demo.A", "x", 1)
			_, err := e.Run()
			Expect(err).To(MatchError("waves: signal demo.a.x declared twice"))
		})

		It("fails the run on a trace error", func() {
			rec := trace.NewRecorder()
			e := env.New(env.Options{Trace: rec})
			vtest.NewAgent(e, "Demo.A", clk, func(now clock.Time, c clock.Cycle) bool {
				rec.Emit(now, c, "Demo.A", "k")
				if c == 1 {
					rec.Emit(now-1, c, "Demo.A", "late") // back in time
				}
				return c < 2
			}).Start()
			_, err := e.Run()
			Expect(err).To(MatchError("trace: record at 9999ps after one at 10ns: 9999 1 Demo.A late"))
		})

		It("runs with a vtest env", func() {
			e := vtest.NewEnv(vtest.Options{Clock: clk, Trace: true, TimeLimit: clock.Microsecond})
			Expect(e.Waves).NotTo(BeNil())
			Expect(e.Trace).NotTo(BeNil())
			Expect(e.Seed).NotTo(BeZero())
			res, err := e.Run()
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Stopped).To(BeFalse())
		})
	})
})

var _ = Describe("progress watchdog", func() {
	// An agent on the 10 ns clock that ticks every cycle until cycle stop,
	// recording progress up to cycle progressUntil, next to a unit holding
	// three descriptors until the agent finishes.
	run := func(stall clock.Time, progressUntil, stop clock.Cycle) (env.Result, error, *work) {
		e := env.New(env.Options{StallLimit: stall})
		w := &work{name: "Demo.Dma", pending: 3}
		e.Register(w)
		a := vtest.NewAgent(e, "Demo.Agent", clk, func(now clock.Time, c clock.Cycle) bool {
			if c <= progressUntil {
				e.Monitor.Progress(now)
			}
			if c == stop {
				w.pending = 0
			}
			return c < stop
		})
		a.Start()
		res, err := e.Run()
		return res, err, w
	}

	It("stops a clocked model that holds work and makes no progress, with the stuck state", func() {
		// Progress up to cycle 4 (40 ns); the limit is 100 ns, so the first
		// event more than 100 ns later is the tick of cycle 15 (150 ns): the
		// run stops there, 16 ticks in, instead of running to cycle 1000.
		res, err, _ := run(100*clock.Nanosecond, 4, 1000)
		Expect(res).To(Equal(env.Result{End: 150 * clock.Nanosecond, Events: 16, Stopped: true, Stuck: true}))
		Expect(err).To(MatchError(ContainSubstring(
			"stuck: no progress for more than 100ns at 150ns (last progress at 40ns) with 1 busy unit(s):\n  Demo.Dma: 3 descriptor(s) pending")))
		Expect(err).To(MatchError(ContainSubstring("150ns Watchdog [stuck] 1 busy unit(s) after no progress for more than 100ns")))
	})

	It("lets a model that keeps making progress run to its end", func() {
		res, err, _ := run(100*clock.Nanosecond, 1000, 1000)
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(env.Result{End: 10 * clock.Microsecond, Events: 1001}))
	})

	It("does not count an idle model whose clocks run on as stuck", func() {
		// Progress stops at cycle 4 but the unit is released at cycle 5:
		// nothing is outstanding, so the long tail of ticks is no stall.
		res, err, _ := run(100*clock.Nanosecond, 4, 5)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stuck).To(BeFalse())
		e := env.New(env.Options{StallLimit: 100 * clock.Nanosecond})
		a := vtest.NewAgent(e, "Demo.Timer", clk, func(_ clock.Time, c clock.Cycle) bool { return c < 500 })
		a.Start()
		res, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(env.Result{End: 5 * clock.Microsecond, Events: 501}))
	})

	It("is on by default and off with a negative limit", func() {
		res, _, _ := run(0, 0, 1_000_000)
		Expect(res.Stuck).To(BeTrue())
		Expect(res.End).To(Equal(env.DefaultStallLimit + 10*clock.Nanosecond))
		// Off: the same stuck model runs until the unit is released at
		// cycle 100 and the watchdog never fires.
		res, err, _ := run(-1, 0, 100)
		Expect(err).NotTo(HaveOccurred())
		Expect(res).To(Equal(env.Result{End: clock.Microsecond, Events: 101}))
	})
})

// probe is a test event that calls its handler function.
type probe struct {
	t   sim.VTimeInSec
	id  int
	sec bool
	h   probeHandler
}

func (p *probe) Time() sim.VTimeInSec { return p.t }
func (p *probe) Handler() sim.Handler { return p.h }
func (p *probe) IsSecondary() bool    { return p.sec }

type probeHandler func(sim.Event)

func (f probeHandler) Handle(e sim.Event) error { f(e); return nil }

// tickFunc is a clock.Ticker made of a function.
type tickFunc func(now clock.Time) bool

func (f tickFunc) Tick(now clock.Time) bool { return f(now) }
