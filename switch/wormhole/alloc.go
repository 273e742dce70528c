package wormhole

import "fmt"

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
	switch kind {
	case "islip":
		return newISLIP(inputs, outputs), nil
	case "separable_input_first":
		return newSepIF(inputs, outputs), nil
	}
	return nil, fmt.Errorf("unknown allocator %q (want islip or separable_input_first)", kind)
}

// reqSet is a sparse request matrix: per input the requested outputs and
// per output the requesting inputs, both kept sorted, with the inputs and
// outputs that have any request listed in ascending order. Iterating it is
// deterministic and costs only the requests made.
type reqSet struct {
	byIn, byOut   [][]int
	inputs, outs  []int // ascending, with at least one request
	inMark, outMk []bool
}

func newReqSet(inputs, outputs int) reqSet {
	return reqSet{byIn: make([][]int, inputs), byOut: make([][]int, outputs),
		inMark: make([]bool, inputs), outMk: make([]bool, outputs)}
}

func (r *reqSet) clear() {
	for _, i := range r.inputs {
		r.byIn[i] = r.byIn[i][:0]
		r.inMark[i] = false
	}
	for _, o := range r.outs {
		r.byOut[o] = r.byOut[o][:0]
		r.outMk[o] = false
	}
	r.inputs, r.outs = r.inputs[:0], r.outs[:0]
}

func (r *reqSet) add(in, out int) {
	r.byIn[in] = insertSorted(r.byIn[in], out)
	r.byOut[out] = insertSorted(r.byOut[out], in)
	if !r.inMark[in] {
		r.inMark[in] = true
		r.inputs = insertSorted(r.inputs, in)
	}
	if !r.outMk[out] {
		r.outMk[out] = true
		r.outs = insertSorted(r.outs, out)
	}
}

func insertSorted(s []int, v int) []int {
	i := len(s)
	for i > 0 && s[i-1] > v {
		i--
	}
	if i > 0 && s[i-1] == v {
		return s
	}
	s = append(s, 0)
	copy(s[i+1:], s[i:])
	s[i] = v
	return s
}

// firstFrom returns the first element of the sorted set s at or after ptr,
// wrapping around, and whether ok(element) holds for any.
func firstFrom(s []int, ptr int, ok func(int) bool) int {
	start := 0
	for start < len(s) && s[start] < ptr {
		start++
	}
	for k := range s {
		v := s[(start+k)%len(s)]
		if ok(v) {
			return v
		}
	}
	return -1
}

// islip is single-iteration iSLIP as BookSim's iSLIP_Sparse: each output
// grants the first requesting input at or after its grant pointer; each
// input accepts the first granting output at or after its accept pointer;
// both pointers move one past the partner only on an accepted grant.
type islip struct {
	reqSet
	gptr, aptr      []int
	inMatch, outMat []int
	grant           []int // per output: the input it granted, -1
}

func newISLIP(inputs, outputs int) *islip {
	a := &islip{reqSet: newReqSet(inputs, outputs), gptr: make([]int, outputs), aptr: make([]int, inputs),
		inMatch: make([]int, inputs), outMat: make([]int, outputs), grant: make([]int, outputs)}
	for i := range a.inMatch {
		a.inMatch[i] = -1
	}
	for o := range a.outMat {
		a.outMat[o], a.grant[o] = -1, -1
	}
	return a
}

func (a *islip) Clear() {
	for _, i := range a.inputs {
		a.inMatch[i] = -1
	}
	for _, o := range a.outs {
		a.outMat[o], a.grant[o] = -1, -1
	}
	a.clear()
}

func (a *islip) Request(in, out int) { a.add(in, out) }

func (a *islip) Allocate() {
	for _, o := range a.outs {
		a.grant[o] = firstFrom(a.byOut[o], a.gptr[o], func(in int) bool { return a.inMatch[in] < 0 })
	}
	for _, in := range a.inputs {
		o := firstFrom(a.byIn[in], a.aptr[in], func(o int) bool { return a.grant[o] == in })
		if o < 0 {
			continue
		}
		a.inMatch[in], a.outMat[o] = o, in
		a.gptr[o] = (in + 1) % len(a.aptr)
		a.aptr[in] = (o + 1) % len(a.gptr)
	}
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
	choice        []int // per input: the output it picked
	inMatch       []int
	pickedBy      [][]int // per output: inputs that picked it, ascending
}

func newSepIF(inputs, outputs int) *sepIF {
	a := &sepIF{reqSet: newReqSet(inputs, outputs), inPtr: make([]int, inputs), outPtr: make([]int, outputs),
		choice: make([]int, inputs), inMatch: make([]int, inputs), pickedBy: make([][]int, outputs)}
	for i := range a.inMatch {
		a.inMatch[i] = -1
	}
	return a
}

func (a *sepIF) Clear() {
	for _, i := range a.inputs {
		a.inMatch[i] = -1
	}
	for _, o := range a.outs {
		a.pickedBy[o] = a.pickedBy[o][:0]
	}
	a.clear()
}

func (a *sepIF) Request(in, out int) { a.add(in, out) }

func (a *sepIF) Allocate() {
	always := func(int) bool { return true }
	for _, in := range a.inputs {
		o := firstFrom(a.byIn[in], a.inPtr[in], always)
		a.choice[in] = o
		a.pickedBy[o] = append(a.pickedBy[o], in) // inputs ascend, so sorted
	}
	for _, o := range a.outs {
		if len(a.pickedBy[o]) == 0 {
			continue
		}
		in := firstFrom(a.pickedBy[o], a.outPtr[o], always)
		a.inMatch[in] = o
		a.inPtr[in] = (o + 1) % len(a.outPtr)
		a.outPtr[o] = (in + 1) % len(a.inPtr)
	}
}

func (a *sepIF) OutputOf(in int) int { return a.inMatch[in] }
