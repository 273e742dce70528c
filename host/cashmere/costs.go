package cashmere

// Instruction counts of the protocol's bookkeeping, charged as cpu.Steps
// (their instructions at the CPU's CPI). The paper gives no breakdown of
// its handlers; each count is assumed: an estimate of the Alpha
// instructions of the C code the step stands for, with the reason. Every
// load and store of protocol data that lives in memory the model has
// (pages, twins, directory words, bins, locks, the clock) is a real
// access instead and is not in these counts.
const (
	// instrFault: the fault handler's own work besides its accesses:
	// decoding the signal frame, finding the page, reading and updating
	// the second-level directory entry, the permission decision. assumed:
	// about 60 instructions, a few dozen lines of C.
	instrFault = 60
	// instrDirtyInsert: appending a page to a dirty list and setting its
	// bit. assumed: 10 (a load, an add, two stores, a test).
	instrDirtyInsert = 10
	// instrCopyWord: a page copy's time per 8-byte word besides its load
	// and store as the cache model times them: the loop overhead (two
	// adds and a branch) and the stalls of the real machine's copy that
	// the cache model does not reproduce. calibrated: fitted to section
	// 3.1 «The cost of a twinning operation on an 8K page is 199 μs», the
	// one copy-rate parameter issue 18 allows: with the 3 loop
	// instructions alone (assumed before) the twin took 104.9 µs, 78 MB/s
	// against the paper's 41 MB/s; each instruction a word adds 1024
	// cycles (4.39 µs at 233 MHz), so 24 gives 197.2 µs (-0.9%) and 25
	// gives 201.0 µs (+1.0%); 24, the nearer. It times every page copy
	// the protocol makes (the twin, the copy in of a fetched page, the
	// home's reply and whole-page sends, 2LOffMC's applied diffs): the
	// same loop on the same machine.
	instrCopyWord = 24
	// instrDiffWord: the compare of a diff per word besides its two loads
	// (compare, branch, two address increments, count). assumed: 4.
	instrDiffWord = 4
	// instrRelease: per dirty page at a release: the timestamp compare,
	// the sharing-set scan's loop, the list removal. assumed: 40.
	instrRelease = 40
	// instrNotice: sending one write notice besides its stores (queue
	// index arithmetic, space check). assumed: 20.
	instrNotice = 20
	// instrDistribute: moving one global notice to the per-processor
	// lists (bitmap test and set for each local processor with a
	// mapping, timestamp update). assumed: 30.
	instrDistribute = 30
	// instrInvalidate: one per-processor notice at an acquire (dequeue,
	// bitmap clear, timestamp compare). assumed: 15.
	instrInvalidate = 15
	// instrRequest: building a page request or serving one (bin and
	// sequence bookkeeping). assumed: 30.
	instrRequest = 30
	// instrBarrier: a barrier's local bookkeeping (episode, deciding the
	// last writer of each dirty page is in instrRelease). assumed: 30.
	instrBarrier = 30
	// instrShootdown: sending or serving one 2LS shootdown message
	// besides its loads, stores and mprotect (finding the target in the
	// second-level directory, the mailbox's sequence number). assumed: 30,
	// as a page request's bookkeeping (instrRequest).
	instrShootdown = 30
	// spinCycles: the pause between two iterations of a wait loop (a
	// lock, a reply, a barrier), after its poll. assumed: 50 cycles, short
	// against the 5.2 µs (1200-cycle) MC latency so a wait ends within a
	// few percent of its cause, long enough that spinning CPUs do not
	// flood the simulation.
	spinCycles = 50

	// lockBackoff: a global lock loser's backoff unit, times its node
	// number plus one and the rounds lost (mctb.Lock's rule). assumed: 200
	// cycles, about one MC round trip's sixth; the paper says only «backs
	// off».
	lockBackoff = 200
)
