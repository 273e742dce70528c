package cashapps

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// procFault is how a backend's Proc reports a program's misuse (an address
// out of range, a lock it does not hold): it panics with one, and the
// backend's runner recovers it into the error it returns. A Proc method
// cannot return an error (the interface is the runtime's), and a program
// that misuses it cannot go on.
type procFault struct{ err error }

// fault stops the calling process with err.
func fault(format string, args ...any) {
	panic(procFault{fmt.Errorf(format, args...)})
}

// recoverFault turns a procFault (or any other panic of the program) into
// *err; it is deferred by the function that runs a process.
func recoverFault(id int, err *error) {
	switch r := recover().(type) {
	case nil:
	case procFault:
		*err = r.err
	case stopSignal:
		// the scheduler stopped this process after another failed
	default:
		*err = fmt.Errorf("cashapps: process %d panicked: %v", id, r)
	}
}

// checkProgram validates what a program declares.
func checkProgram(prog Program) error {
	if prog == nil {
		return errors.New("cashapps: program is nil")
	}
	size := prog.SharedBytes()
	if size == 0 || size%PageBytes != 0 {
		return fmt.Errorf("cashapps: %s: SharedBytes = %d: need a positive multiple of %d", prog.Name(), size, PageBytes)
	}
	if prog.Locks() < 0 {
		return fmt.Errorf("cashapps: %s: Locks = %d: need >= 0", prog.Name(), prog.Locks())
	}
	if prog.Flags() < 0 {
		return fmt.Errorf("cashapps: %s: Flags = %d: need >= 0", prog.Name(), prog.Flags())
	}
	return nil
}

// wordRange checks a Load or Store of n words at addr against a shared space
// of words words and returns the first word's index.
func wordRange(op string, id int, addr uint64, n int, words uint64) uint64 {
	if addr%8 != 0 {
		fault("cashapps: process %d: %s at address %#x: not 8-byte aligned", id, op, addr)
	}
	w := addr / 8
	if w > words || uint64(n) > words-w {
		fault("cashapps: process %d: %s of %d words at address %#x: beyond the shared space of %d bytes", id, op, n, addr, words*8)
	}
	return w
}

// checkIndex checks a lock or flag number.
func checkIndex(what string, id, i, limit int) {
	if i < 0 || i >= limit {
		fault("cashapps: process %d: %s %d: the program declares %d", id, what, i, limit)
	}
}

// toBytes is the shared memory as bytes, little-endian words (the Alpha's
// byte order).
func toBytes(words []uint64) []byte {
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}

// RunSequential runs prog as one process on a plain memory, untimed: the
// reference every other backend's final memory must equal byte for byte
// (docs/cashmere-design.md section 2: «the final shared memory does not
// depend on the number of processes ... so the reference is one process»).
// Barriers return at once, locks must be free, and a WaitFlag whose flag
// does not hold its value is a deadlock (no other process could set it).
func RunSequential(prog Program) ([]byte, error) {
	if err := checkProgram(prog); err != nil {
		return nil, err
	}
	s := &seqProc{
		prog:  prog,
		mem:   make([]uint64, prog.SharedBytes()/8),
		held:  make([]bool, prog.Locks()),
		flags: make([]uint64, prog.Flags()),
	}
	var err error
	func() {
		defer recoverFault(0, &err)
		prog.Run(s)
	}()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prog.Name(), err)
	}
	return toBytes(s.mem), nil
}

// seqProc is RunSequential's one process.
type seqProc struct {
	prog  Program
	mem   []uint64
	held  []bool
	flags []uint64
}

func (s *seqProc) ID() int    { return 0 }
func (s *seqProc) Procs() int { return 1 }

func (s *seqProc) Load(addr uint64, dst []uint64) {
	w := wordRange("Load", 0, addr, len(dst), uint64(len(s.mem)))
	copy(dst, s.mem[w:])
}

func (s *seqProc) Store(addr uint64, src []uint64) {
	w := wordRange("Store", 0, addr, len(src), uint64(len(s.mem)))
	copy(s.mem[w:], src)
}

func (s *seqProc) Compute(cycles int) {
	if cycles < 0 {
		fault("cashapps: process 0: Compute(%d): negative", cycles)
	}
}

func (s *seqProc) Poll()    {}
func (s *seqProc) Barrier() {}

func (s *seqProc) Lock(l int) {
	checkIndex("lock", 0, l, len(s.held))
	if s.held[l] {
		fault("cashapps: process 0: deadlock: Lock(%d) while holding it", l)
	}
	s.held[l] = true
}

func (s *seqProc) Unlock(l int) {
	checkIndex("lock", 0, l, len(s.held))
	if !s.held[l] {
		fault("cashapps: process 0: Unlock(%d) of a lock it does not hold", l)
	}
	s.held[l] = false
}

func (s *seqProc) SetFlag(f int, v uint64) {
	checkIndex("flag", 0, f, len(s.flags))
	s.flags[f] = v
}

func (s *seqProc) WaitFlag(f int, v uint64) {
	checkIndex("flag", 0, f, len(s.flags))
	if s.flags[f] != v {
		fault("cashapps: process 0: deadlock: WaitFlag(%d, %d) with the flag at %d and no other process", f, v, s.flags[f])
	}
}
