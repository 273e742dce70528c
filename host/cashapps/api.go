package cashapps

// Proc is one application process's view: processor ID of Procs, the shared
// address space [0, Program.SharedBytes()), 8-byte words.
//
// It is the interface of section 2 of docs/cashmere-design.md. The paper's
// programs use Cashmere-2L's shared address space (cashmere-2l-memory-channel.txt
// section 2.3: «each processor sharing the same virtual and physical
// addresses»), its locks, barriers and flags (section 3.2 names which program
// uses which); a load or store that misses permission faults (section 2.4.1),
// which is the runtime's business, never the program's. Poll is the check the
// paper's instrumentation pass inserts at loop tops (section 2.3, Figure 3:
// the polling instructions go «at the tops of all loops»), a no-op where no
// runtime polls.
type Proc interface {
	ID() int
	Procs() int
	Load(addr uint64, dst []uint64)  // len(dst) words from addr (8-aligned)
	Store(addr uint64, src []uint64) // len(src) words at addr
	Compute(cycles int)              // the program's own work, CPU cycles
	Poll()                           // Figure 3's check at a loop top
	Lock(l int)                      // l in [0, Program.Locks())
	Unlock(l int)
	Barrier()                 // all Procs() processes
	SetFlag(f int, v uint64)  // f in [0, Program.Flags()); a release
	WaitFlag(f int, v uint64) // until flag f == v; an acquire
}

// Program is one of the paper's applications (section 3.2, Table 2) written
// against Proc: every process runs Run; process 0 may do the sequential
// parts.
//
// Rules (docs/cashmere-design.md section 2): data-race-free (every
// conflicting pair of accesses is ordered by a lock, a barrier or a flag);
// the final shared memory does not depend on the number of processes, so the
// reference is one process (RunSequential); shared data is initialised inside
// Run by the process that will own it (section 2.3: homes are «re-assigned
// dynamically after program initialization to the node that first touches a
// page»); floating point through math.Float64bits.
type Program interface {
	Name() string
	SharedBytes() uint64 // a multiple of 8 KB
	Locks() int
	Flags() int
	Run(p Proc) // every process runs it; process 0 may do the sequential parts
}

// PageBytes is Cashmere's coherence unit, one VM page (section 2.3: «making
// the coherence unit equal to the size of VM page»; 8 KB on the Alpha).
const PageBytes = 8192

// pageWords is PageBytes in 8-byte words.
const pageWords = PageBytes / 8
