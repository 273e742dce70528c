package cpu_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// spinner polls the word at 0x2000 of the stand-in target until it reads
// 1 or until is reached (until 0: no end), each iteration a 4-instruction
// code step with the load, marked Poll or not.
func spinner(poll bool, until clock.Time) cpu.Op {
	return cpu.Go(func(p *cpu.Proc) {
		for {
			out := p.Step(cpu.Step{Label: "spin", Instrs: 4, Accesses: []cpu.Access{{Addr: 0x2000, Len: 4}}, Poll: poll})
			if binary.LittleEndian.Uint32(out[0]) == 1 || (until > 0 && p.Now() >= until) {
				return
			}
		}
	})
}

var _ = Describe("spin loops and the stall watchdog", func() {
	const limit = 20 * clock.Microsecond

	It("counts no poll step as progress: a program spinning on a flag nobody sets is stopped with a stuck report", func() {
		e := env.New(env.Options{StallLimit: limit})
		nd := buildNode(e, 1, cpu.OSCosts{}, 2)
		nd.cpus[0].Run(spinner(true, 0))
		res, err := e.Run()
		Expect(res.Stuck).To(BeTrue())
		Expect(err).To(MatchError(ContainSubstring("no progress for more than 20us")))
		Expect(err).To(MatchError(ContainSubstring("Cpu0: at op")))
		Expect(err).To(MatchError(ContainSubstring("polling")))
		// Nothing ever recorded progress; the watchdog fires at the first
		// event past the limit (an iteration is 6 cycles, 60 ns).
		Expect(e.Monitor.LastProgress()).To(Equal(clock.Time(0)))
		Expect(res.End).To(BeNumerically(">", limit))
		Expect(res.End).To(BeNumerically("<=", limit+100*clock.Nanosecond))
	})

	It("without Poll the same loop is progress and runs to the time limit (the blind spot Poll closes)", func() {
		e := env.New(env.Options{StallLimit: limit, TimeLimit: 5 * limit})
		nd := buildNode(e, 1, cpu.OSCosts{}, 2)
		nd.cpus[0].Run(spinner(false, 0))
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stuck).To(BeFalse())
		Expect(res.Stopped).To(BeTrue())
	})

	It("counts a long Compute as work, not a stall: one CPU computes 10 limits while another polls, and the run ends when the flag is set", func() {
		// 100 MHz: 20,000 cycles are 200 µs, ten watchdog limits. Cpu1
		// spins (not progress) the whole time, so only Cpu0's compute
		// keeps the run from being stuck; the compute sets the flag at
		// its end and the spin stops.
		e := env.New(env.Options{StallLimit: limit})
		nd := buildNode(e, 2, cpu.OSCosts{}, 2)
		nd.cpus[0].Run(cpu.Go(func(p *cpu.Proc) {
			p.Compute(20000)
			p.Store(0x2000, []byte{1, 0, 0, 0})
		}))
		nd.cpus[1].Run(spinner(true, 0))
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stuck).To(BeFalse())
		Expect(res.End).To(BeNumerically(">", 200*clock.Microsecond))
		Expect(nd.cpus[1].Idle()).To(BeTrue())
	})

	It("ends a spin normally when the flag is set, and the set is progress", func() {
		e := env.New(env.Options{StallLimit: limit})
		nd := buildNode(e, 1, cpu.OSCosts{}, 2)
		nd.cpus[0].Run(spinner(true, 0))
		e.Engine.AfterStep(limit/2, func(clock.Time) {
			Expect(nd.mem.store.Write(0x2000, []byte{1, 0, 0, 0})).To(Succeed())
		})
		res, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stuck).To(BeFalse())
		Expect(nd.cpus[0].Idle()).To(BeTrue())
		// The step that read 1 retired a Poll step too, but the program's
		// end is not a poll: the last progress is its retirement, just
		// after the flag was set.
		Expect(res.End).To(BeNumerically("<", limit))
	})

	It("lets software declare a longer quiet wait (env.AllowQuiet): a 30 µs timer under a 20 µs limit raised to 40 µs", func() {
		for _, raise := range []bool{false, true} {
			e := env.New(env.Options{StallLimit: limit})
			if raise {
				e.AllowQuiet(40 * clock.Microsecond)
				Expect(e.StallLimit()).To(Equal(40 * clock.Microsecond))
			}
			nd := buildNode(e, 1, cpu.OSCosts{}, 2)
			nd.cpus[0].Run(spinner(true, 30*clock.Microsecond))
			res, err := e.Run()
			if raise {
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Stuck).To(BeFalse())
			} else {
				Expect(res.Stuck).To(BeTrue())
				Expect(err).To(MatchError(ContainSubstring("no progress")))
			}
		}
	})
})
