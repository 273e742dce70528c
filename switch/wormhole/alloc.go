package wormhole

import (
	"fmt"
	"math/bits"
)

// Allocator matches requesters (inputs) to resources (outputs), at most one
// output per input and one input per output per cycle. The router uses one
// for virtual-channel allocation (inputs: input port x VC, outputs: output
// port x VC) and one for switch allocation (inputs: input port x input
// speedup, outputs: output port x output speedup). State (round-robin
// pointers) persists from cycle to cycle.
type Allocator interface {
	// Clear drops the requests of the previous cycle.
	Clear()
	// Request asks for output out on behalf of input in.
	Request(in, out int)
	// Allocate computes the matching and updates the pointers.
	Allocate()
	// OutputOf returns the output granted to in, or -1.
	OutputOf(in int) int
}

// NewAllocator returns the named allocator for an inputs x outputs
// problem: "islip" or "separable_input_first" (BookSim's names).
func NewAllocator(kind string, inputs, outputs int) (Allocator, error) {
	small := inputs <= 64 && outputs <= 64
	switch {
	case kind == "islip" && small:
		return newISLIP64(inputs, outputs), nil
	case kind == "islip":
		return newISLIP(inputs, outputs), nil
	case kind == "separable_input_first" && small:
		return newSepIF64(inputs, outputs), nil
	case kind == "separable_input_first":
		return newSepIF(inputs, outputs), nil
	}
	return nil, fmt.Errorf("unknown allocator %q (want islip or separable_input_first)", kind)
}

// bitset is a set of small non-negative integers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)>>6) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

// firstFrom returns the first element at or after ptr, wrapping around to
// the smallest, or -1 for an empty set: a round-robin arbiter whose
// priority pointer is ptr.
func (b bitset) firstFrom(ptr int) int {
	w := ptr >> 6
	if w < len(b) {
		if m := b[w] &^ (1<<(uint(ptr)&63) - 1); m != 0 {
			return w<<6 | bits.TrailingZeros64(m)
		}
		for i := w + 1; i < len(b); i++ {
			if b[i] != 0 {
				return i<<6 | bits.TrailingZeros64(b[i])
			}
		}
	}
	for i := 0; i <= w && i < len(b); i++ {
		if b[i] != 0 {
			return i<<6 | bits.TrailingZeros64(b[i])
		}
	}
	return -1
}

// each calls fn for every element, ascending.
func (b bitset) each(fn func(int)) {
	for i, w := range b {
		for w != 0 {
			fn(i<<6 | bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// reqSet is a request matrix as bit sets: per input the requested outputs,
// per output the requesting inputs, and the inputs and outputs with any
// request. Clearing and iterating cost only the requests made.
type reqSet struct {
	byIn, byOut []bitset
	inputs      bitset // inputs with a request
	outs        bitset // outputs with a request
}

func newReqSet(inputs, outputs int) reqSet {
	r := reqSet{byIn: make([]bitset, inputs), byOut: make([]bitset, outputs),
		inputs: newBitset(inputs), outs: newBitset(outputs)}
	for i := range r.byIn {
		r.byIn[i] = newBitset(outputs)
	}
	for o := range r.byOut {
		r.byOut[o] = newBitset(inputs)
	}
	return r
}

func (r *reqSet) clear() {
	r.inputs.each(func(i int) { clear(r.byIn[i]) })
	r.outs.each(func(o int) { clear(r.byOut[o]) })
	clear(r.inputs)
	clear(r.outs)
}

func (r *reqSet) add(in, out int) {
	r.byIn[in].set(out)
	r.byOut[out].set(in)
	r.inputs.set(in)
	r.outs.set(out)
}

// islip is single-iteration iSLIP as BookSim's iSLIP_Sparse: each output
// grants the first requesting input at or after its grant pointer; each
// input accepts the first granting output at or after its accept pointer;
// both pointers move one past the partner only on an accepted grant.
type islip struct {
	reqSet
	gptr, aptr []int
	inMatch    []int
	granted    []bitset // per input: the outputs that granted it
}

func newISLIP(inputs, outputs int) *islip {
	a := &islip{reqSet: newReqSet(inputs, outputs), gptr: make([]int, outputs), aptr: make([]int, inputs),
		inMatch: make([]int, inputs), granted: make([]bitset, inputs)}
	for i := range a.inMatch {
		a.inMatch[i] = -1
		a.granted[i] = newBitset(outputs)
	}
	return a
}

func (a *islip) Clear() {
	a.inputs.each(func(i int) {
		a.inMatch[i] = -1
		clear(a.granted[i])
	})
	a.clear()
}

func (a *islip) Request(in, out int) { a.add(in, out) }

func (a *islip) Allocate() {
	// Grant: with one iteration no input is matched yet, so every output
	// grants its first requester from its pointer on.
	a.outs.each(func(o int) {
		a.granted[a.byOut[o].firstFrom(a.gptr[o])].set(o)
	})
	a.inputs.each(func(in int) {
		o := a.granted[in].firstFrom(a.aptr[in])
		if o < 0 {
			return
		}
		a.inMatch[in] = o
		a.gptr[o] = (in + 1) % len(a.aptr)
		a.aptr[in] = (o + 1) % len(a.gptr)
	})
}

func (a *islip) OutputOf(in int) int { return a.inMatch[in] }

// sepIF is a separable input-first allocator with round-robin arbiters, as
// BookSim's SeparableInputFirstAllocator: each input picks one of its
// requests (first at or after its pointer), each output picks one of the
// inputs that picked it; only winners move their pointers, to one past the
// partner.
type sepIF struct {
	reqSet
	inPtr, outPtr []int
	inMatch       []int
	pickedBy      []bitset // per output: inputs that picked it
}

func newSepIF(inputs, outputs int) *sepIF {
	a := &sepIF{reqSet: newReqSet(inputs, outputs), inPtr: make([]int, inputs), outPtr: make([]int, outputs),
		inMatch: make([]int, inputs), pickedBy: make([]bitset, outputs)}
	for i := range a.inMatch {
		a.inMatch[i] = -1
	}
	for o := range a.pickedBy {
		a.pickedBy[o] = newBitset(inputs)
	}
	return a
}

func (a *sepIF) Clear() {
	a.inputs.each(func(i int) { a.inMatch[i] = -1 })
	a.outs.each(func(o int) { clear(a.pickedBy[o]) })
	a.clear()
}

func (a *sepIF) Request(in, out int) { a.add(in, out) }

func (a *sepIF) Allocate() {
	a.inputs.each(func(in int) {
		a.pickedBy[a.byIn[in].firstFrom(a.inPtr[in])].set(in)
	})
	a.outs.each(func(o int) {
		in := a.pickedBy[o].firstFrom(a.outPtr[o])
		if in < 0 {
			return
		}
		a.inMatch[in] = o
		a.inPtr[in] = (o + 1) % len(a.outPtr)
		a.outPtr[o] = (in + 1) % len(a.inPtr)
	})
}

func (a *sepIF) OutputOf(in int) int { return a.inMatch[in] }

// The allocators below do the same for at most 64 inputs and 64 outputs
// (every router of a realistic size: a 5-port mesh router with 8 VCs
// allocates 40 x 40 VCs and 10 x 5 switch ports), with each set in one
// machine word.

// first64 returns the first element of set at or after ptr, wrapping
// around, or -1 for an empty set.
func first64(set uint64, ptr int) int {
	if set == 0 {
		return -1
	}
	if m := set &^ (1<<uint(ptr) - 1); m != 0 {
		return bits.TrailingZeros64(m)
	}
	return bits.TrailingZeros64(set)
}

type islip64 struct {
	byIn, byOut []uint64
	granted     []uint64 // per input: the outputs that granted it
	inputs      uint64
	outs        uint64
	gptr, aptr  []int
	inMatch     []int
}

func newISLIP64(inputs, outputs int) *islip64 {
	a := &islip64{byIn: make([]uint64, inputs), byOut: make([]uint64, outputs), granted: make([]uint64, inputs),
		gptr: make([]int, outputs), aptr: make([]int, inputs), inMatch: make([]int, inputs)}
	for i := range a.inMatch {
		a.inMatch[i] = -1
	}
	return a
}

func (a *islip64) Clear() {
	for m := a.inputs; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		a.inMatch[i], a.granted[i], a.byIn[i] = -1, 0, 0
	}
	for m := a.outs; m != 0; m &= m - 1 {
		a.byOut[bits.TrailingZeros64(m)] = 0
	}
	a.inputs, a.outs = 0, 0
}

func (a *islip64) Request(in, out int) {
	a.byIn[in] |= 1 << uint(out)
	a.byOut[out] |= 1 << uint(in)
	a.inputs |= 1 << uint(in)
	a.outs |= 1 << uint(out)
}

func (a *islip64) Allocate() {
	for m := a.outs; m != 0; m &= m - 1 {
		o := bits.TrailingZeros64(m)
		a.granted[first64(a.byOut[o], a.gptr[o])] |= 1 << uint(o)
	}
	for m := a.inputs; m != 0; m &= m - 1 {
		in := bits.TrailingZeros64(m)
		o := first64(a.granted[in], a.aptr[in])
		if o < 0 {
			continue
		}
		a.inMatch[in] = o
		a.gptr[o] = (in + 1) % len(a.aptr)
		a.aptr[in] = (o + 1) % len(a.gptr)
	}
}

func (a *islip64) OutputOf(in int) int { return a.inMatch[in] }

type sepIF64 struct {
	byIn          []uint64
	pickedBy      []uint64 // per output: inputs that picked it
	inputs, outs  uint64
	inPtr, outPtr []int
	inMatch       []int
}

func newSepIF64(inputs, outputs int) *sepIF64 {
	a := &sepIF64{byIn: make([]uint64, inputs), pickedBy: make([]uint64, outputs),
		inPtr: make([]int, inputs), outPtr: make([]int, outputs), inMatch: make([]int, inputs)}
	for i := range a.inMatch {
		a.inMatch[i] = -1
	}
	return a
}

func (a *sepIF64) Clear() {
	for m := a.inputs; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		a.inMatch[i], a.byIn[i] = -1, 0
	}
	for m := a.outs; m != 0; m &= m - 1 {
		a.pickedBy[bits.TrailingZeros64(m)] = 0
	}
	a.inputs, a.outs = 0, 0
}

func (a *sepIF64) Request(in, out int) {
	a.byIn[in] |= 1 << uint(out)
	a.inputs |= 1 << uint(in)
	a.outs |= 1 << uint(out)
}

func (a *sepIF64) Allocate() {
	for m := a.inputs; m != 0; m &= m - 1 {
		in := bits.TrailingZeros64(m)
		a.pickedBy[first64(a.byIn[in], a.inPtr[in])] |= 1 << uint(in)
	}
	for m := a.outs; m != 0; m &= m - 1 {
		o := bits.TrailingZeros64(m)
		in := first64(a.pickedBy[o], a.outPtr[o])
		if in < 0 {
			continue
		}
		a.inMatch[in] = o
		a.inPtr[in] = (o + 1) % len(a.outPtr)
		a.outPtr[o] = (in + 1) % len(a.inPtr)
	}
}

func (a *sepIF64) OutputOf(in int) int { return a.inMatch[in] }
