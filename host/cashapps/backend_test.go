package cashapps_test

import (
	"encoding/binary"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/cashapps"
)

// fprog is a Program from a function: the backends' own specs.
type fprog struct {
	locks, flags int
	bytes        uint64
	run          func(p cashapps.Proc)
}

func (f fprog) Name() string { return "test" }
func (f fprog) SharedBytes() uint64 {
	if f.bytes == 0 {
		return cashapps.PageBytes
	}
	return f.bytes
}
func (f fprog) Locks() int          { return f.locks }
func (f fprog) Flags() int          { return f.flags }
func (f fprog) Run(p cashapps.Proc) { f.run(p) }
func word(mem []byte, i int) uint64 { return binary.LittleEndian.Uint64(mem[8*i:]) }
func one(v uint64) []uint64         { return []uint64{v} }
func load1(p cashapps.Proc, a uint64) uint64 {
	d := make([]uint64, 1)
	p.Load(a, d)
	return d[0]
}

var _ = Describe("RunInterleaved", func() {
	// counter: under lock 0 each process reads word 0 (the count), writes
	// its ID+1 at word 1+count and the count+1 at word 0. Data-race-free,
	// but the log's order is the interleaving's.
	counter := fprog{locks: 1, run: func(p cashapps.Proc) {
		for r := 0; r < 3; r++ {
			p.Lock(0)
			c := load1(p, 0)
			p.Store(8*(1+c), one(uint64(p.ID()+1)))
			p.Store(0, one(c+1))
			p.Unlock(0)
		}
	}}

	It("runs locks mutually exclusive and counts every acquire", func() {
		mem, st, err := cashapps.RunInterleaved(counter, 4, 1)
		Expect(err).NotTo(HaveOccurred())
		// 4 processes x 3 rounds: the count is 12, every ID three times
		Expect(word(mem, 0)).To(Equal(uint64(12)))
		seen := map[uint64]int{}
		for i := 1; i <= 12; i++ {
			seen[word(mem, i)]++
		}
		Expect(seen).To(Equal(map[uint64]int{1: 3, 2: 3, 3: 3, 4: 3}))
		Expect(cmp.Diff(cashapps.Stats{Procs: 4, LockAcquires: 12, LoadWords: 12, StoreWords: 24, Steps: st.Steps}, st)).To(BeEmpty())
	})

	It("gives the same interleaving for the same seed and others for other seeds", func() {
		a, sa, err := cashapps.RunInterleaved(counter, 4, 7)
		Expect(err).NotTo(HaveOccurred())
		b, sb, err := cashapps.RunInterleaved(counter, 4, 7)
		Expect(err).NotTo(HaveOccurred())
		Expect(b).To(Equal(a))
		Expect(sb).To(Equal(sa))
		logs := map[string]bool{}
		for seed := uint64(0); seed < 8; seed++ {
			m, _, err := cashapps.RunInterleaved(counter, 4, seed)
			Expect(err).NotTo(HaveOccurred())
			logs[string(m[:8*13])] = true
		}
		Expect(len(logs)).To(BeNumerically(">", 1), "the scheduler must interleave differently with different seeds")
	})

	It("orders accesses by barriers and flags", func() {
		// process 0 writes word 0, barrier, everyone reads it; process 1
		// writes word 1 and sets flag 0, process 2 waits for it and reads.
		prog := fprog{flags: 1, run: func(p cashapps.Proc) {
			if p.ID() == 0 {
				p.Store(0, one(5))
			}
			p.Barrier()
			Expect(load1(p, 0)).To(Equal(uint64(5)))
			switch p.ID() {
			case 1:
				p.Store(8, one(6))
				p.SetFlag(0, 1)
			case 2:
				p.WaitFlag(0, 1)
				p.Store(16, one(load1(p, 8)+1))
			}
			p.Barrier()
		}}
		for seed := uint64(0); seed < 5; seed++ {
			mem, st, err := cashapps.RunInterleaved(prog, 3, seed)
			Expect(err).NotTo(HaveOccurred())
			Expect(word(mem, 2)).To(Equal(uint64(7)))
			Expect(st.Barriers).To(Equal(2))
			Expect(st.FlagAcquires).To(Equal(1))
		}
	})

	It("lets readers share a word and a writer follow them after a barrier", func() {
		prog := fprog{run: func(p cashapps.Proc) {
			load1(p, 0) // concurrent reads: the read vector
			p.Barrier()
			if p.ID() == 3 {
				p.Store(0, one(1))
			}
			p.Barrier()
		}}
		_, _, err := cashapps.RunInterleaved(prog, 4, 3)
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("catches a data race, naming the word and both processes, on every seed",
		func(run func(p cashapps.Proc), want string) {
			for seed := uint64(0); seed < 6; seed++ {
				_, _, err := cashapps.RunInterleaved(fprog{locks: 2, run: run}, 3, seed)
				Expect(err).To(MatchError(MatchRegexp(want)), "seed %d", seed)
			}
		},
		Entry("write-write", func(p cashapps.Proc) {
			if p.ID() < 2 {
				p.Store(24, one(uint64(p.ID())))
			}
		}, `data race on word 3 \(address 0x18\): process [01]'s write and process [01]'s write`),
		Entry("write then unordered read", func(p cashapps.Proc) {
			switch p.ID() {
			case 0:
				p.Store(8, one(1))
			case 2:
				load1(p, 8)
			}
		}, `data race on word 1 \(address 0x8\): process [02]'s (read|write) and process [02]'s (read|write)`),
		Entry("reads by two, then a write by a third after one of them only", func(p cashapps.Proc) {
			switch p.ID() {
			case 0, 1:
				load1(p, 16)
				if p.ID() == 0 {
					p.Lock(1)
					p.Unlock(1)
				}
			case 2:
				p.Lock(1)
				p.Unlock(1)
				p.Store(16, one(9))
			}
		}, `data race on word 2 \(address 0x10\): process [012]'s (read|write) and process [012]'s (read|write)`),
		Entry("the same lock does not order two different locks' sections", func(p cashapps.Proc) {
			p.Lock(p.ID() % 2)
			p.Store(0, one(load1(p, 0)+1))
			p.Unlock(p.ID() % 2)
		}, `data race on word 0 \(address 0x0\)`),
	)

	It("finds no race where one lock orders every access", func() {
		for seed := uint64(0); seed < 6; seed++ {
			_, _, err := cashapps.RunInterleaved(fprog{locks: 1, run: func(p cashapps.Proc) {
				p.Lock(0)
				p.Store(0, one(load1(p, 0)+1))
				p.Unlock(0)
			}}, 3, seed)
			Expect(err).NotTo(HaveOccurred())
		}
	})

	DescribeTable("reports misuse as a one-line error, never a panic",
		func(procs int, prog fprog, want string) {
			_, _, err := cashapps.RunInterleaved(prog, procs, 1)
			Expect(err).To(MatchError(MatchRegexp(want)))
			Expect(err.Error()).NotTo(ContainSubstring("\n"))
		},
		Entry("procs", 0, fprog{run: func(cashapps.Proc) {}}, `procs = 0: need at least 1`),
		Entry("size", 1, fprog{bytes: 100, run: func(cashapps.Proc) {}}, `SharedBytes = 100: need a positive multiple of 8192`),
		Entry("a flag never set", 2, fprog{flags: 2, run: func(p cashapps.Proc) {
			if p.ID() == 1 {
				p.WaitFlag(1, 3)
			}
		}}, `deadlock: process 0 has returned; process 1 waits for flag 1 == 3 \(it is 0\)`),
		Entry("a barrier one process skips", 2, fprog{run: func(p cashapps.Proc) {
			if p.ID() == 0 {
				p.Barrier()
			}
		}}, `deadlock: process 0 is in barrier 0 \(1 of 2 arrived\); process 1 has returned`),
		Entry("a lock held at return", 2, fprog{locks: 1, run: func(p cashapps.Proc) {
			if p.ID() == 1 {
				p.Lock(0)
			}
		}}, `process 1 returned holding lock 0`),
		Entry("an unlock of a lock not held", 1, fprog{locks: 1, run: func(p cashapps.Proc) { p.Unlock(0) }},
			`process 0: Unlock\(0\) of a lock it does not hold`),
		Entry("a lock out of range", 1, fprog{locks: 1, run: func(p cashapps.Proc) { p.Lock(1) }},
			`process 0: lock 1: the program declares 1`),
		Entry("a store beyond the space", 1, fprog{run: func(p cashapps.Proc) { p.Store(8184, make([]uint64, 2)) }},
			`process 0: Store of 2 words at address 0x1ff8: beyond the shared space of 8192 bytes`),
		Entry("a misaligned load", 1, fprog{run: func(p cashapps.Proc) { load1(p, 4) }},
			`process 0: Load at address 0x4: not 8-byte aligned`),
		Entry("a panic in the program", 2, fprog{run: func(p cashapps.Proc) {
			if p.ID() == 1 {
				var s []int
				_ = s[3]
			}
		}}, `process 1 panicked: runtime error: index out of range`),
	)
})

var _ = Describe("RunSequential", func() {
	It("is one process with barriers and its own flags", func() {
		mem, err := cashapps.RunSequential(fprog{flags: 1, locks: 1, run: func(p cashapps.Proc) {
			Expect(p.ID()).To(Equal(0))
			Expect(p.Procs()).To(Equal(1))
			p.Store(8, []uint64{3, 4})
			p.Barrier()
			p.SetFlag(0, 2)
			p.WaitFlag(0, 2)
			p.Lock(0)
			p.Store(0, one(load1(p, 8)+load1(p, 16)))
			p.Unlock(0)
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(len(mem)).To(Equal(cashapps.PageBytes))
		Expect([]uint64{word(mem, 0), word(mem, 1), word(mem, 2)}).To(Equal([]uint64{7, 3, 4}))
	})

	It("reports a wait that no process could end", func() {
		_, err := cashapps.RunSequential(fprog{flags: 1, run: func(p cashapps.Proc) { p.WaitFlag(0, 1) }})
		Expect(err).To(MatchError("test: cashapps: process 0: deadlock: WaitFlag(0, 1) with the flag at 0 and no other process"))
	})
})
