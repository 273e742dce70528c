package lciapps

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/nisim/nisim/host/crl"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/mpi"
	"github.com/nisim/nisim/host/multigame"
	"github.com/nisim/nisim/host/orca"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Options are a run's application-level choices.
type Options struct {
	// Platform is 0 for the PPro, 1 for the P3 (T1's column).
	Platform int
	// MTU is LCI's packet size (Panda and CRL fragment at it).
	MTU int
	// Bcast is MPI_Bcast's algorithm (mpi.BcastPanda, the paper's port,
	// or mpi.BcastBinomial, MPICH's default: section 7.4's «58% worse»).
	Bcast string
	// Async is SOR's «+ async» (section 7.2): the border rows are
	// computed and sent before the rest of the rows.
	Async bool
	// RCPY is SOR on I-rcpy (section 7.2, figure 14): the border rows go
	// by RemoteCopy straight into the neighbours' ghost rows (the host
	// must run I-rcpy); the reduction stays on MPI.
	RCPY bool
	// ColSize is SOR's column size (figure 14's axis), the doubles of a
	// border row: 0 is the paper's 1536. The computation per iteration
	// and the iteration count stay the paper problem's («The amount of
	// computation per iteration was kept constant by reducing the row
	// size accordingly. In addition, the number of iterations was also
	// kept fixed»).
	ColSize int
	// Steps is how many steps every processor runs.
	Steps int
}

// World is an application's skeleton on a cluster's hosts: one program
// per node (Program), the time each node finished each step (Ends).
type World struct {
	spec  Spec
	opt   Options
	hosts []*lcilib.Host
	p     int
	// Ends[k][i] is when node k finished step i.
	Ends [][]clock.Time
	// Packets[k][i] is the data packets node k's PPS had received at the
	// end of step i: Panda's packets, or CRL's requests served and
	// replies to its misses (crl.Node.Handled; one packet each: Barnes's regions are
	// smaller than any MTU, Radix's 1 KB fit one packet of every MTU).
	Packets  [][]uint64
	finished int

	pn    []*panda.Node
	comm  []*mpi.Comm
	orca  []*orca.Node
	crl   []*crl.Node
	mg    []*multigame.Node
	check *crl.Checker
	rng   []*rand.Rand

	// applied[k] counts the vector updates node k applied (LEQ).
	applied []int
	// per is a CRL application's regions per node and step.
	per int
	// badRow, badSum and badGhost are the mutations' switches.
	badRow, badSum, badGhost bool
	// puzzle's aggregation buffers per node and destination, and jobs
	// pushed.
	bufs   [][][]byte
	pushed []uint64
	// sent[k][j] is node k's last RemoteCopy of its border row j (0 up,
	// 1 down; SOR on I-rcpy).
	sent [][2]lcilib.RcpyHandle
}

// Test-only faults (see env.DeclareMutation) that the skeletons' own
// checks (apps.data, apps.reduce) must catch.
var (
	mutRow = env.DeclareMutation("lciapps.badrow",
		"ASP's owner broadcasts row 1 with its first byte flipped (caught by apps.data at every receiver)")
	mutSum = env.DeclareMutation("lciapps.badsum",
		"SOR's node 0 contributes 0 instead of 1 to the convergence reduction (caught by apps.reduce at every node)")
)

// mpiPort, puzzlePort: the Panda ports (MPI's default, Multigame's).
var (
	mpiPort    = mpi.DefaultConfig().Port
	puzzlePort = multigame.DefaultConfig().Port
)

// New builds app's skeleton on hosts (every node of a cluster) in e; the
// random choices (Awari's, Barnes's, Radix's and Puzzle's destinations)
// come from e's seed.
func New(e *env.Env, app string, hosts []*lcilib.Host, opt Options) (*World, error) {
	spec, err := Lookup(app)
	if err != nil {
		return nil, err
	}
	p := len(hosts)
	if p < 2 || opt.Steps < 1 || opt.MTU < 1 || (opt.Platform != 0 && opt.Platform != 1) {
		return nil, fmt.Errorf("lciapps: %d nodes, %d steps, MTU %d, platform %d: need 2 nodes, 1 step, an MTU, platform 0 or 1", p, opt.Steps, opt.MTU, opt.Platform)
	}
	if opt.Async && app != SOR {
		return nil, fmt.Errorf("lciapps: +async is SOR's (section 7.2), not %s's", app)
	}
	if (opt.RCPY || opt.ColSize != 0) && app != SOR {
		return nil, fmt.Errorf("lciapps: I-rcpy transfers and a column size are SOR's (section 7.2, figure 14), not %s's", app)
	}
	if opt.ColSize < 0 || opt.ColSize > SORMaxColSize || opt.ColSize > 0 && sorRows*sorRows/opt.ColSize < p {
		return nil, fmt.Errorf("lciapps: SOR column size %d on %d nodes: need 1 to %d and at least one row of %d x %d per node", opt.ColSize, p, SORMaxColSize, sorRows, sorRows)
	}
	w := &World{spec: spec, opt: opt, hosts: hosts, p: p, Ends: make([][]clock.Time, p), Packets: make([][]uint64, p),
		badRow: e.Mutation(mutRow) != 0, badSum: e.Mutation(mutSum) != 0, badGhost: e.Mutation(mutGhost) != 0}
	for k := range p {
		w.rng = append(w.rng, e.Rand(fmt.Sprintf("lciapps.%s.N%d", app, k)))
	}
	pc := panda.Config{Costs: panda.DefaultCosts()}
	if spec.PPS == "Orca" {
		pc.MT, pc.Sequencer = true, p-1
	}
	if spec.PPS != "CRL" {
		for _, h := range hosts {
			n, err := panda.New(e, h, p, opt.MTU, pc)
			if err != nil {
				return nil, err
			}
			w.pn = append(w.pn, n)
		}
	}
	switch spec.PPS {
	case "MPI":
		mc := mpi.DefaultConfig()
		if opt.Bcast != "" {
			mc.Bcast = opt.Bcast
		}
		for _, n := range w.pn {
			c, err := mpi.New(n, p, mc)
			if err != nil {
				return nil, err
			}
			w.comm = append(w.comm, c)
		}
	case "Orca":
		if err := w.newOrca(); err != nil {
			return nil, err
		}
	case "CRL":
		if err := w.newCRL(e); err != nil {
			return nil, err
		}
	case "Multigame":
		mc := multigame.DefaultConfig()
		for _, n := range w.pn {
			g, err := multigame.New(n, p, mc)
			if err != nil {
				return nil, err
			}
			w.mg = append(w.mg, g)
		}
		w.bufs = make([][][]byte, p)
		for k := range w.bufs {
			w.bufs[k] = make([][]byte, p)
		}
		w.pushed = make([]uint64, p)
		w.prefill(e)
	}
	if opt.RCPY {
		w.sent = make([][2]lcilib.RcpyHandle, p)
	}
	return w, nil
}

func (w *World) newOrca() error {
	// LEQ: one replicated vector per processor and a replicated counter
	// (the convergence synchronisation); Awari: one object per processor,
	// owned by it (its share of the database), updated by RPC.
	var objs []orca.Object
	for k := range w.p {
		objs = append(objs, orca.Object{Owner: k, Replicated: w.spec.Name == LEQ})
	}
	if w.spec.Name == LEQ {
		objs = append(objs, orca.Object{Replicated: true})
	}
	w.applied = make([]int, w.p)
	for k, n := range w.pn {
		o, err := orca.New(n, orca.DefaultCosts(), objs)
		if err != nil {
			return err
		}
		o.Applied = func(_ *lcilib.Seq, obj, _ int, _ uint32) {
			if obj < w.p {
				w.applied[k]++
			}
		}
		w.orca = append(w.orca, o)
	}
	return nil
}

func (w *World) newCRL(e *env.Env) error {
	// Every read or write of a step is a miss on a region nobody has
	// touched: region i of node k's step j is homed at a random other
	// node.
	w.per = BarnesReads
	if w.spec.Name == Radix {
		w.per = 1
	}
	regions := make([]crl.Region, w.p*w.opt.Steps*w.per)
	for k := range w.p {
		rng := e.Rand(fmt.Sprintf("lciapps.%s.regions.N%d", w.spec.Name, k))
		for i := range w.opt.Steps * w.per {
			home := rng.IntN(w.p - 1)
			if home >= k {
				home++
			}
			size := radixRegionBytes
			if w.spec.Name == Barnes {
				// «Tree nodes and bodies are represented as small CRL
				// regions (88-108 bytes)».
				size = 88 + rng.IntN(21)
			}
			regions[w.region(k, i)] = crl.Region{Home: home, Size: size}
		}
	}
	w.check = crl.NewChecker(regions)
	for _, h := range w.hosts {
		c, err := crl.New(e, h, w.p, w.opt.MTU, crl.DefaultCosts(), regions, w.check)
		if err != nil {
			return err
		}
		w.crl = append(w.crl, c)
	}
	return nil
}

// region is node k's i-th region.
func (w *World) region(k, i int) int { return k*w.opt.Steps*w.per + i }

// CRLChecker is the coherence checker of a CRL application (nil
// otherwise).
func (w *World) CRLChecker() *crl.Checker { return w.check }

// Jobs are Puzzle's jobs pushed and received, summed over the nodes.
func (w *World) Jobs() (pushed, received uint64) {
	for k := range w.mg {
		pushed += w.pushed[k]
		received += w.mg[k].Received
	}
	return
}

// packets are node k's data packets received so far (Packets).
func (w *World) packets(k int) uint64 {
	if w.crl != nil {
		c := w.crl[k]
		return c.Handled
	}
	return w.pn[k].Packets
}

// poll is one poll of node k's PPS.
func (w *World) poll(k int, s *lcilib.Seq) {
	if w.crl != nil {
		w.crl[k].Poll(s)
		return
	}
	w.pn[k].Poll(s)
}

// compute charges t of computation on node k in slices of PollSlice, a
// poll after each but the last.
func (w *World) compute(k int, s *lcilib.Seq, t clock.Time) {
	clk := w.hosts[k].CPU.Clock()
	for t > 0 {
		d := min(t, PollSlice)
		s.Compute(int(clk.Cycles(d)))
		t -= d
		if t > 0 {
			w.poll(k, s)
		}
	}
}

// wait polls node k's PPS until cond holds.
func (w *World) wait(k int, s *lcilib.Seq, cond func() bool) {
	switch {
	case w.crl != nil:
		w.crl[k].Serve(s, cond)
	case w.orca != nil:
		w.orca[k].Serve(s, cond)
	default:
		w.pn[k].WaitUntil(s, cond)
	}
}

// wakeAll wakes every node's CPU (a condition others wait on changed).
func (w *World) wakeAll(now clock.Time) {
	for _, h := range w.hosts {
		h.CPU.Wake(now)
	}
}

// Program is node k's program: its steps, then serving the others until
// every node has finished (so the run ends with nothing in flight).
func (w *World) Program(k int) func(s *lcilib.Seq) {
	return func(s *lcilib.Seq) {
		for i := range w.opt.Steps {
			w.step(k, s, i)
			w.Ends[k] = append(w.Ends[k], s.Now())
			w.Packets[k] = append(w.Packets[k], w.packets(k))
		}
		if w.mg != nil {
			// Push what the buffers hold.
			for dst := range w.bufs[k] {
				if len(w.bufs[k][dst]) > 0 {
					w.push(k, s, dst)
				}
			}
		}
		w.finished++
		w.wakeAll(s.Now())
		w.wait(k, s, func() bool {
			if w.mg != nil {
				sent, got := w.Jobs()
				return w.finished >= w.p && sent == got
			}
			return w.finished >= w.p
		})
		w.wakeAll(s.Now())
	}
}

func (w *World) step(k int, s *lcilib.Seq, i int) {
	switch w.spec.Name {
	case ASP:
		w.asp(k, s, i)
	case QR:
		w.qr(k, s, i)
	case SOR:
		w.sor(k, s, i)
	case LEQ:
		w.leq(k, s, i)
	case Awari:
		w.awari(k, s, i)
	case Barnes:
		w.barnes(k, s, i)
	case Radix:
		w.radix(k, s, i)
	case Puzzle4, Puzzle64:
		w.puzzle(k, s, i)
	}
}

// pattern is message i's content of n bytes from node src.
func pattern(n, src, i int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(src*31 + i*7 + j*13 + 1)
	}
	return b
}

// expect reports data that is not what its sender sent.
func expect(s *lcilib.Seq, what string, got, want []byte) {
	if !bytes.Equal(got, want) {
		s.Host().Report(s.Now(), "apps.data", "%s: %d bytes arrived, not the %d sent (or different)", what, len(got), len(want))
	}
}

// asp is iteration i: its row's owner (rows are dealt out in contiguous
// blocks of 1024/P; «The algorithm iterates over all of this processor's
// rows before switching to another processor's rows») broadcasts the 4 KB
// row, every processor updates its rows. The owner sends its next row as
// soon as its update is done, so its broadcasts run ahead of the
// receivers (pipelined), as far as flow control lets them.
func (w *World) asp(k int, s *lcilib.Seq, i int) {
	owner := min(i/((aspRows+w.p-1)/w.p), w.p-1)
	var row []byte
	if k == owner {
		row = pattern(aspRowBytes, owner, i)
		if w.badRow && i == 1 {
			row[0] ^= 1
		}
	}
	got := w.comm[k].Bcast(s, owner, row)
	expect(s, "asp row", got, pattern(aspRowBytes, owner, i))
	w.compute(k, s, w.spec.Compute(w.opt.Platform, w.p))
}

// qr is iteration 512 + i: column k's owner (k mod P) broadcasts the
// Householder vector (1024 - k doubles), every processor updates its
// columns, then a reduce-to-all of two integers and two doubles (four
// 8-byte words) picks the next pivot.
func (w *World) qr(k int, s *lcilib.Seq, i int) {
	col := qrN/2 + i
	owner := col % w.p
	n := (qrN - col) * 8
	var h []byte
	if k == owner {
		h = pattern(n, owner, i)
	}
	got := w.comm[k].Bcast(s, owner, h)
	expect(s, "qr householder vector", got, pattern(n, owner, i))
	rest := float64(qrN - col)
	share := 3 * rest * rest / (qrN * qrN)
	w.compute(k, s, clock.Time(float64(w.spec.Compute(w.opt.Platform, w.p))*share))
	sum := w.comm[k].Allreduce(s, []int64{int64(k), 1, int64(i), 2})
	want := int64(w.p * (w.p - 1) / 2)
	if len(sum) != 4 || sum[0] != want || sum[1] != int64(w.p) {
		s.Host().Report(s.Now(), "apps.reduce", "qr iteration %d: reduce-to-all gave %v, want [%d %d ...]", i, sum, want, w.p)
	}
}

// sor is iteration i: the border rows (12 KB each at the paper's column
// size) go to the neighbours, theirs arrive, the rows are relaxed, a
// one-element reduction decides convergence. With Async the border rows
// are relaxed first and sent before the rest («a node can send the
// columns that are needed by its neighbors during the next iteration
// before computing its remaining columns», section 7.2). With RCPY the
// rows go by RemoteCopy (sorRcpySend, sorRcpyRecv) instead of MPI_Send
// and MPI_Recv; the reduction stays on MPI.
func (w *World) sor(k int, s *lcilib.Seq, i int) {
	var nbrs []int
	if k > 0 {
		nbrs = append(nbrs, k-1)
	}
	if k < w.p-1 {
		nbrs = append(nbrs, k+1)
	}
	n := w.sorRowBytes()
	send := func() {
		for _, d := range nbrs {
			if w.opt.RCPY {
				w.sorRcpySend(k, s, d, i)
				continue
			}
			w.comm[k].Send(s, d, i, pattern(n, k, i))
		}
	}
	recv := func() {
		for _, d := range nbrs {
			if w.opt.RCPY {
				w.sorRcpyRecv(k, s, d, i)
				continue
			}
			got, _ := w.comm[k].Recv(s, d, i)
			expect(s, "sor border row", got, pattern(n, d, i))
		}
	}
	c := w.spec.Compute(w.opt.Platform, w.p)
	if w.opt.Async {
		// The node's share of the grid is rows lines of the column size
		// (sorRows x sorRows doubles in all, whatever the column size);
		// its border lines are nbrs of them.
		rows := max(sorRows*sorRows/w.colSize()/w.p, 1)
		border := c * clock.Time(min(len(nbrs), rows)) / clock.Time(rows)
		w.compute(k, s, border)
		send()
		w.compute(k, s, c-border)
		recv()
	} else {
		send()
		recv()
		w.compute(k, s, c)
	}
	one := int64(1)
	if w.badSum && k == 0 {
		one = 0
	}
	if v := w.comm[k].Allreduce(s, []int64{one}); len(v) != 1 || v[0] != int64(w.p) {
		s.Host().Report(s.Now(), "apps.reduce", "sor iteration %d: reduction gave %v, want [%d]", i, v, w.p)
	}
}

// leq is iteration i: every processor computes its part of x, then all
// broadcast their 128-byte parts at once (totally ordered, as updates of
// replicated Orca objects), wait for everybody's, and synchronise on a
// replicated counter to decide convergence. Every processor takes part,
// the last node too, Panda's sequencer, whose ordered broadcasts fetch
// their numbers from its own NI («can be accessed by any host», section
// 4.3).
func (w *World) leq(k int, s *lcilib.Seq, i int) {
	o := w.orca[k]
	w.compute(k, s, w.spec.Compute(w.opt.Platform, w.p))
	o.Invoke(s, k, orca.OpPut, 0, pattern(leqVectorBytes, k, i))
	w.wait(k, s, func() bool { return w.applied[k] >= w.p*(i+1) })
	o.Invoke(s, w.p, orca.OpAdd, 1, nil)
	w.wait(k, s, func() bool { return o.Value(w.p) >= int64(w.p*(i+1)) })
}

// awari is step i: compute, then one RPC carrying aggregated updates to a
// random other processor's share of the database.
func (w *World) awari(k int, s *lcilib.Seq, i int) {
	w.compute(k, s, w.spec.Compute(w.opt.Platform, w.p))
	dst := w.rng[k].IntN(w.p - 1)
	if dst >= k {
		dst++
	}
	n := awariAggregate * awariUpdateBytes
	if v := w.orca[k].Invoke(s, dst, orca.OpPut, 0, pattern(n, k, i)); v != int64(n) {
		s.Host().Report(s.Now(), "apps.rpc", "awari step %d: update RPC to %d returned %d, want %d", i, dst, v, n)
	}
}

// barnes is one body's force computation: BarnesReads reads of regions at
// arbitrary owners, the computation spread between them.
func (w *World) barnes(k int, s *lcilib.Seq, i int) {
	c := w.spec.Compute(w.opt.Platform, w.p) / clock.Time(BarnesReads+1)
	for r := range BarnesReads {
		w.compute(k, s, c)
		x := w.region(k, i*BarnesReads+r)
		w.crl[k].StartRead(s, x)
		w.crl[k].EndRead(s, x)
		w.poll(k, s)
	}
	w.compute(k, s, c)
}

// radix is one region of the permutation phase: compute, then write a 1 KB
// region of another processor's partition (a write miss: the region comes
// from its home).
func (w *World) radix(k int, s *lcilib.Seq, i int) {
	w.compute(k, s, w.spec.Compute(w.opt.Platform, w.p))
	x := w.region(k, i)
	d := w.crl[k].StartWrite(s, x)
	binary.LittleEndian.PutUint64(d, uint64(k)<<32|uint64(i))
	w.crl[k].EndWrite(s, x)
	w.poll(k, s)
}

// puzzle is PuzzleStepJobs x (P-1) jobs: each computed, its 32-byte
// descriptor added to the buffer of a random other processor, which is
// pushed when it holds 4 (Puzzle-4) or 64 (Puzzle-64) jobs; a poll after
// every job. Buffers carry over from step to step (and start prefilled).
func (w *World) puzzle(k int, s *lcilib.Seq, i int) {
	agg := w.aggregate()
	c := w.spec.Compute(w.opt.Platform, w.p)
	jobs := PuzzleStepJobs * (w.p - 1)
	for j := range jobs {
		s.Compute(int(w.hosts[k].CPU.Clock().Cycles(c)))
		dst := w.rng[k].IntN(w.p - 1)
		if dst >= k {
			dst++
		}
		w.bufs[k][dst] = append(w.bufs[k][dst], multigame.Descriptor(k, i*jobs+j)...)
		if len(w.bufs[k][dst]) == agg*multigame.JobBytes {
			w.push(k, s, dst)
		}
		w.pn[k].Poll(s)
	}
}

// prefill starts every aggregation buffer in its steady state: under
// uniformly random destinations a buffer's fill is uniform over 0 to the
// aggregation minus one jobs, so each starts with a random number of them
// (jobs of the search before the window), and Puzzle-64 pushes from the
// first step on instead of after 64 x (P-1) jobs.
func (w *World) prefill(e *env.Env) {
	agg := w.aggregate()
	for k := range w.p {
		rng := e.Rand(fmt.Sprintf("lciapps.%s.prefill.N%d", w.spec.Name, k))
		for dst := range w.p {
			if dst == k {
				continue
			}
			for j := range rng.IntN(agg) {
				w.bufs[k][dst] = append(w.bufs[k][dst], multigame.Descriptor(k, 1<<30+dst<<12+j)...)
			}
		}
	}
}

// aggregate is Puzzle's jobs per message: «Puzzle-4 aggregates at most 4
// jobs before pushing them to another processor; Puzzle-64 accumulates up
// to 64 jobs».
func (w *World) aggregate() int {
	if w.spec.Name == Puzzle64 {
		return 64
	}
	return 4
}

func (w *World) push(k int, s *lcilib.Seq, dst int) {
	w.pushed[k] += uint64(len(w.bufs[k][dst]) / multigame.JobBytes)
	w.pn[k].Send(s, dst, puzzlePort, w.bufs[k][dst])
	w.bufs[k][dst] = nil
}
