// Package cashapps holds the application programs of Cashmere-2L
// (cashmere-2l-memory-channel.txt, Stets et al., SOSP 1997, section 3.2 and
// Table 2) written against Proc, a process's view of a shared address space
// with locks, barriers and flags, and two untimed backends to check them
// with: RunSequential, the one-process reference, and RunInterleaved, many
// processes as coroutines in a seeded random interleaving with a data-race
// and deadlock detector. The runtime (host/cashmere) implements Proc on the
// cycle model; this package imports nothing of the model.
//
// The programs: SOR (bands of rows, barriers), Gauss (cyclic rows, a flag
// per row), LU and CLU (SPLASH-2's blocked LU, non-contiguous and contiguous
// blocks), Em3d (bands of nodes, neighbour dependencies, barriers) and Water
// (chunks of molecules, forces added under locks: migratory). Each is
// data-race-free, initialises its data in Run by the owning process (first
// touch), charges its own work through Proc.Compute at a per-element cost
// derived from Table 2 (cost.go), and leaves a final memory that does not
// depend on the number of processes. docs/cashmere-design.md section 7 lists
// their sizes, sharing and synchronisation.
//
// Issue 19's shared-virtual-memory programs on SHRIMP
// (shrimp-design-choices.txt section 3, Table 1) are here too, with costs
// in cycles of its 60 MHz Pentium, and not in the Cashmere registry: Radix
// (SPLASH-2 radix sort), Barnes (SPLASH-2 Barnes-Hut: an octree built under
// cell locks, costzones, tree forces) and Ocean (NewOcean: SOR's red-black
// stencil at Table 1's 130 x 130, standing for SPLASH-2 Ocean). They obey
// the same rules and are checked on the same two backends.
package cashapps
