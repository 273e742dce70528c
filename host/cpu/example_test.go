package cpu_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/platform"
	"github.com/nisim/nisim/rtl/env"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The programs below are the ones docs/host-programs.md shows; a spec
// checks that every Go block of that page appears here verbatim, so the
// page cannot drift from code that compiles and runs.

const backoff = 10 // processor cycles between two reads of a busy lock

// Acquire takes the spin lock at lock: read it until it looks free, then
// try to take it with a load-locked / store-conditional pair; a failed
// store-conditional (someone else wrote the line) starts again.
func Acquire(p *cpu.Proc, lock uint64) {
	for {
		for p.Load32(lock) != 0 {
			p.Compute(backoff)
		}
		if p.LoadLocked32(lock) == 0 && p.StoreConditional32(lock, 1) {
			p.Fence() // the critical section's accesses stay after the acquire
			return
		}
	}
}

// Release frees the lock once every store of the critical section has
// completed.
func Release(p *cpu.Proc, lock uint64) {
	p.Fence()
	p.Store32(lock, 0)
}

// Barrier is a sense-reversing barrier for N processors: a counter
// incremented with fetch-and-add and a sense flag the last arrival flips.
type Barrier struct {
	Count, Sense uint64
	N            uint32
}

// Wait blocks until all N processors have called it; sense is the
// caller's private sense, flipped on each use.
func (b Barrier) Wait(p *cpu.Proc, sense *uint32) {
	*sense ^= 1
	if p.FetchAdd(b.Count, 1) == b.N-1 { // the last one to arrive
		p.Store32(b.Count, 0)
		p.Fence()
		p.Store32(b.Sense, *sense)
		return
	}
	for p.Load32(b.Sense) != *sense {
		p.Compute(backoff)
	}
}

// SVM is a home-based shared virtual memory's page state on one processor
// (Cashmere-2L's protocol, cashmere-2l-memory-channel.txt section 2.4,
// reduced to one node): shared pages start unmapped; the home copy of a
// page is at Home+page, its twin at Twins+page.
type SVM struct {
	PageSize    int
	Home, Twins uint64
	Dirty       []uint64
}

// PageFault is the SIGSEGV handler: a fault on an unmapped page fetches
// it from its home and maps it read-only; a write fault then makes a twin,
// puts the page on the dirty list and maps it read-write. The access
// restarts when the handler returns.
func (s *SVM) PageFault(p *cpu.Proc, f *cpu.Frame) {
	page := f.Addr &^ uint64(s.PageSize-1)
	if p.CPU().PageTable().Perm(page) == cpu.PermNone {
		p.Mprotect(page, s.PageSize, cpu.PermReadWrite) // to copy into it
		s.copy(p, s.Home+page, page)
		p.Mprotect(page, s.PageSize, cpu.PermRead)
	}
	if f.Write {
		s.copy(p, page, s.Twins+page)
		s.Dirty = append(s.Dirty, page)
		p.Mprotect(page, s.PageSize, cpu.PermReadWrite)
	}
}

func (s *SVM) copy(p *cpu.Proc, from, to uint64) {
	for off := uint64(0); off < uint64(s.PageSize); off += 8 {
		p.Store(to+off, p.Load(from+off, 8))
	}
}

// exampleNode is n processors on the stand-in memory (2 cycles of
// latency) at 100 MHz, with the AlphaServer's OS costs.
func exampleNode(n int) *node {
	return buildNode(env.New(env.Options{}), n, platform.AlphaServer2100().OS, 2)
}

// Two processors each add to a shared counter 3 times inside the lock.
func Example_lock() {
	nd := exampleNode(2)
	const lock, counter = 0x100, 0x200
	for _, c := range nd.cpus {
		c.Run(cpu.Go(func(p *cpu.Proc) {
			for range 3 {
				Acquire(p, lock)
				v := p.Load32(counter)
				p.Compute(20)
				p.Store32(counter, v+1)
				Release(p, lock)
			}
		}))
	}
	if _, err := nd.e.Run(); err != nil {
		fmt.Println(err)
	}
	v, _ := nd.mem.store.Bytes(counter, 1)
	fmt.Println("counter:", v[0])
	// Output: counter: 6
}

// Three processors meet at a barrier twice; each records the phase it saw
// the others reach.
func Example_barrier() {
	nd := exampleNode(3)
	b := Barrier{Count: 0x100, Sense: 0x140, N: 3}
	var arrived [3]uint32
	for i, c := range nd.cpus {
		c.Run(cpu.Go(func(p *cpu.Proc) {
			var sense uint32
			for phase := range 2 {
				p.Compute(50 * (i + 1)) // uneven work
				p.FetchAdd(0x300, 1)    // "I have arrived"
				b.Wait(p, &sense)
				if phase == 0 {
					arrived[i] = p.Load32(0x300) // every arrival of phase 0
				}
			}
		}))
	}
	if _, err := nd.e.Run(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("seen after the first barrier:", arrived)
	// Output: seen after the first barrier: [3 3 3]
}

// A program reads and then writes a shared page; the handler fetches it,
// then twins it.
func Example_pageFault() {
	nd := exampleNode(1)
	c := nd.cpus[0]
	s := &SVM{PageSize: 256, Home: 0x40000, Twins: 0x80000}
	pt, _ := cpu.NewPageTable(uint64(s.PageSize), cpu.PermReadWrite)
	pt.Protect(0x1000, s.PageSize, cpu.PermNone) // a shared page, not yet here
	c.SetPageTable(pt)
	c.SetFaultHandler(cpu.Sequential(s.PageFault))
	nd.mem.Poke(0x40000+0x1010, []byte{41})
	var x uint32
	c.Run(cpu.Go(func(p *cpu.Proc) {
		x = p.Load32(0x1010)   // read fault: fetched from home
		p.Store32(0x1010, x+1) // write fault: twinned, dirty
		p.Store32(0x1014, x+2) // no fault
	}))
	if _, err := nd.e.Run(); err != nil {
		fmt.Println(err)
	}
	twin, _ := nd.mem.store.Bytes(0x80000+0x1010, 1)
	page, _ := nd.mem.store.Bytes(0x1010, 5)
	fmt.Printf("faults %d, dirty %#x, read %d, twin %d, page %v\n", c.Faults(), s.Dirty, x, twin[0], page)
	// Output: faults 2, dirty [0x1000], read 41, twin 41, page [42 0 0 0 43]
}

var _ = Describe("docs/host-programs.md", func() {
	It("shows only code that is in this package's compiled examples and specs", func() {
		doc, err := os.ReadFile("../../docs/host-programs.md")
		Expect(err).NotTo(HaveOccurred())
		var src strings.Builder
		for _, f := range []string{"example_test.go", "kernel_test.go"} {
			b, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			src.Write(b)
		}
		blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
		Expect(len(blocks)).To(BeNumerically(">=", 6))
		for _, b := range blocks {
			Expect(src.String()).To(ContainSubstring(b[1]), "a block of docs/host-programs.md is not in host/cpu's tests")
		}
	})
})
