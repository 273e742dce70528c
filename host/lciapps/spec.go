// Package lciapps holds skeletons of the applications of section 7 of
// lci-myrinet-cluster-protocols.txt («7. APPLICATION PERFORMANCE», Table
// VII): ASP, QR and SOR on MPI, LEQ and Awari on Orca, Barnes and Radix on
// CRL, Puzzle-4 and Puzzle-64 on Multigame's job pushing over Panda-ST.
//
// The paper's runs take 0.7 to 5 s of real time (Barnes about 3 million
// packets), beyond what a cycle-level model runs in a test. So each
// application is a skeleton: the communication pattern the paper
// describes for it, with the paper's message sizes, and between the
// messages the computation charged from that platform's sequential run
// time T1 (Table VII) divided by the paper problem's step count (and, for
// the applications whose step is a global iteration, by the processor
// count). A run executes a few steps; the time per step over a window
// after warm-up, relative to I-sdma's, is what section 7's figures 12 to
// 16 show (normalised run times). What a skeleton leaves out is listed in
// each Spec's Omits.
//
// The programs run on each node's lcilib.Host as sequential host code
// (the cycle-level CPU model): the PPS layers' costs, LCI's library and the
// NI's firmware give the communication its time; the computation is a
// charge of CPU cycles, split into slices with a poll between two (the
// applications poll, section 7.4: «we augmented ASP with application-level
// polling statements»).
package lciapps

import (
	"fmt"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
)

// The applications of Table VII.
const (
	ASP      = "asp"
	Awari    = "awari"
	Barnes   = "barnes"
	LEQ      = "leq"
	Puzzle4  = "puzzle4"
	Puzzle64 = "puzzle64"
	QR       = "qr"
	Radix    = "radix"
	SOR      = "sor"
)

// Names are the applications in Table VII's order.
var Names = []string{ASP, Awari, Barnes, LEQ, Puzzle4, Puzzle64, QR, Radix, SOR}

// Spec is one application's row of Table VII and its skeleton's step.
type Spec struct {
	Name, Title string
	// PPS and Pattern are Table VII's columns.
	PPS, Pattern string
	// T1 is the sequential run time in seconds on the PPro and the P3
	// (Table VII, I-sdma).
	T1 [2]float64
	// Units is how many skeleton steps the paper's problem has. With
	// Global, a step is one iteration of the whole program, its
	// computation shared by the processors (T1/Units/P each); otherwise
	// a step is one unit of work of every processor, the units shared out
	// (each processor does Units/P of them, T1/Units each).
	Units  float64
	Global bool
	// Derivation is the source of Units: `derived:` with the arithmetic,
	// or `assumed:` with the reason.
	Derivation string
	// Omits is what the skeleton leaves out.
	Omits string
}

// specs are the skeletons (lci-myrinet-cluster-protocols.txt section 7,
// Table VII: T1 in seconds on the PPro and the P3).
var specs = []Spec{
	{Name: ASP, Title: "ASP", PPS: "MPI", Pattern: "pipelined broadcast", T1: [2]float64{63.3, 17.8},
		Units: 1024, Global: true,
		Derivation: "derived: «in this paper we use 1024 nodes. In each iteration, one processor broadcasts a 4-Kbyte matrix row»: 1024 iterations, each the broadcast of row k (1024 x 4-byte distances = 4 KB) by its owner and every processor's update of its 1024/P rows",
		Omits:      "the update's data (the compute is a charge); ASP's superlinear cache effects (T1 is divided evenly)"},
	{Name: Awari, Title: "Awari", PPS: "Orca", Pattern: "arbitrary RPC", T1: [2]float64{452.4, 85.8},
		Units:      awariRPCs,
		Derivation: fmt.Sprintf("assumed: the paper gives no RPC count; the 13-stone database has C(24,11) = 2,496,144 positions, we take %d remote updates per position («a single update may result in several remote update operations») aggregated %d per RPC: 2,496,144 x %d / %d = %d RPCs, one per processor per step", awariRemote, awariAggregate, awariRemote, awariAggregate, awariRPCs),
		Omits:      "the retrograde analysis itself, its load imbalance and termination detection"},
	{Name: Barnes, Title: "Barnes", PPS: "CRL", Pattern: "arbitrary RPC", T1: [2]float64{80.5, 15.5},
		Units:      barnesBodies * barnesTimeSteps,
		Derivation: fmt.Sprintf("assumed: «a configuration of 16,384 bodies» over %d time steps (the paper gives none): 16,384 x %d = %d body-force computations, one per processor per step, each with %d reads of 88-108-byte regions (calibrated, BarnesReads)", barnesTimeSteps, barnesTimeSteps, barnesBodies*barnesTimeSteps, BarnesReads),
		Omits:      "the tree build and body update phases; CRL's caching of tree cells across bodies (every read misses)"},
	{Name: LEQ, Title: "LEQ", PPS: "Orca", Pattern: "simultaneous broadcast", T1: [2]float64{643.1, 212.5},
		Units: leqIterations, Global: true,
		Derivation: fmt.Sprintf("assumed: the paper gives no iteration count for its 1000 equations; an iteration streams the 1000 x 1000 matrix of doubles (8 MB, no cache holds it) from memory once, a 32-byte line (4 doubles) per PPro load latency of 236 ns: 10^6 x 59 ns = 59 ms, and 643.1 s / 59 ms = %d iterations (the same count on the P3: one problem)", leqIterations),
		Omits:      "the solver's data (a 128-byte broadcast stands for each processor's part of x); the convergence test's value"},
	{Name: Puzzle4, Title: "Puzzle-4", PPS: "Multigame", Pattern: "small unicast", T1: [2]float64{209.0, 39.4},
		Units:      puzzleJobs,
		Derivation: fmt.Sprintf("assumed: the paper gives no job count; %d jobs (2^24) make a job 12.5 µs on the PPro, the order of host/multigame's assumed 10 µs per position; a step is PuzzleStepJobs x (P-1) jobs per processor", puzzleJobs),
		Omits:      "the IDA* search and its iterations (jobs go to uniformly random processors, as host/multigame's hash owners)"},
	{Name: Puzzle64, Title: "Puzzle-64", PPS: "Multigame", Pattern: "large unicast", T1: [2]float64{209.0, 39.4},
		Units:      puzzleJobs,
		Derivation: "assumed: as Puzzle-4 («Both programs solve the same problem»)",
		Omits:      "as Puzzle-4"},
	{Name: QR, Title: "QR", PPS: "MPI", Pattern: "broadcast + reduce", T1: [2]float64{58.7, 14.8},
		Units: qrN, Global: true,
		Derivation: "derived: «a matrix of 1024 x 1024 doubles»: 1024 iterations; iteration k's work is proportional to (1024-k)^2, so its share of T1 is 3(1024-k)^2/1024^3 (the sum over k is 1); the window starts at k = 512, where H is 512 doubles (4 KB)",
		Omits:      "the pivot's choice (the owner is column k's, k mod P, so the sender changes every iteration as with pivoting)"},
	{Name: Radix, Title: "Radix", PPS: "CRL", Pattern: "arbitrary RPC", T1: [2]float64{4.6, 1.0},
		Units:      radixRegionMoves,
		Derivation: fmt.Sprintf("derived: «3,000,000 integers, with a radix of 128»: 32-bit keys take ceil(32/7) = %d passes, each moving 3,000,000 x 4 bytes = %d 1-KB regions: %d region writes, one per processor per step", radixPasses, radixRegions, radixRegionMoves),
		Omits:      "the histogram and the barriers between passes («the barriers it uses during every iteration exploit multicast», about 10% of its packets)"},
	{Name: SOR, Title: "SOR", PPS: "MPI", Pattern: "neighbour exchange", T1: [2]float64{27.9, 13.7},
		Units: sorIterations, Global: true,
		Derivation: fmt.Sprintf("assumed: the paper gives no iteration count; SOR «sequentially completely thrashes its cache»: a red and a black pass over 1536 x 1536 doubles, a 32-byte line per load latency (PPro 236 ns, P3 113 ns): 2 x 2.36M x 59 ns = 278 ms and 2 x 2.36M x 28 ns = 133 ms, 27.9/0.278 = 100 and 13.7/0.133 = 103: %d iterations", sorIterations),
		Omits:      "the relaxation's data (the rows exchanged are patterns of their sizes)"},
}

// The step counts' inputs (see each Spec's Derivation).
const (
	qrN = 1024
	// awariRemote and awariAggregate: assumed (see Awari's Derivation).
	awariRemote, awariAggregate = 4, 16
	awariRPCs                   = 2496144 * awariRemote / awariAggregate
	// awariUpdateBytes is one aggregated update: assumed 8 bytes (a
	// board index and its value).
	awariUpdateBytes = 8
	barnesBodies     = 16384
	// barnesTimeSteps: assumed 4 (the paper gives none).
	barnesTimeSteps = 4
	// leqIterations: assumed (see LEQ's Derivation); leqVectorBytes:
	// «their 128-byte partial solution vectors».
	leqIterations  = 10900
	leqVectorBytes = 128
	// puzzleJobs: assumed (see Puzzle-4's Derivation).
	puzzleJobs = 1 << 24
	// radixPasses and radixRegions: derived (see Radix's Derivation).
	radixPasses  = 5
	radixRegions = 3000000 * 4 / 1024
	// radixRegionMoves: every region written once per pass.
	radixRegionMoves = radixPasses * radixRegions
	// radixRegionBytes: «1-Kbyte CRL regions».
	radixRegionBytes = 1024
	// sorIterations: assumed (see SOR's Derivation); sorRowBytes: a row of
	// the 1536 x 1536 matrix of doubles, «border rows (12 Kbyte)».
	sorIterations = 100
	sorRows       = 1536
	sorRowBytes   = sorRows * 8
	// aspRowBytes: a row of 1024 4-byte distances, «a 4-Kbyte matrix
	// row».
	aspRows     = 1024
	aspRowBytes = aspRows * 4
)

// BarnesReads is the remote region reads of one body's force
// computation. calibrated: 9, fitted to Barnes's «≈ 10,000
// packets/s/processor» (section 7) on the PPro, I-sdma, 8 nodes: the
// packets the hosts receive (requests and replies, both data packets of
// LCI) per second of the window per processor; see docs/lci-validation.md
// «LCI applications» for the measured rate.
const BarnesReads = 9

// PuzzleStepJobs is Puzzle's jobs per step and destination. assumed: 16
// (a Puzzle-64 buffer fills every 4 steps, a Puzzle-4 buffer 4 times a
// step; the buffers start in their steady state, World.prefill), the
// smallest step that keeps the 8-node CI run of every variant short.
const PuzzleStepJobs = 16

// PollSlice is the computation between two polls. assumed: 50 µs, the
// applications' polling (Panda-ST and CRL poll, ASP's MPI_Iprobe
// statements of section 7.4); the paper gives no interval.
const PollSlice = 50 * clock.Microsecond

// Lookup returns the spec of app, or an error naming the applications.
func Lookup(app string) (Spec, error) {
	i := slices.IndexFunc(specs, func(s Spec) bool { return s.Name == app })
	if i < 0 {
		return Spec{}, fmt.Errorf("unknown application %q (have %v)", app, Names)
	}
	return specs[i], nil
}

// Compute is the computation of one step of the spec on a platform (0
// PPro, 1 P3) with p processors, in picoseconds.
func (s Spec) Compute(platform, p int) clock.Time {
	t := s.T1[platform] / s.Units
	if s.Global {
		t /= float64(p)
	}
	return clock.Time(t * float64(clock.Second))
}
