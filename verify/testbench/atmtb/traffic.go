package atmtb

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/clock"
)

// Traffic is a random remote-memory load (issue 15 section 5, design
// 6.5): every node's process makes Ops operations, each after 0..MaxGap
// CPU cycles of work, to another node drawn at random, the kind drawn by
// the weights: a WRITE of 1..10 words into the source's own area of the
// target's segment (Intr percent of them asking for a notification), a
// READ of 1..10 words from anywhere in the target's data area into the
// requester's reply area, a CAS incrementing one of the target's shared
// counters (the guess is the last value the node saw there; a failed
// swap retries once with the value it got), a block transfer of
// 1..MaxBlockWords words from the node's user buffer, an RPC call
// (host/rpc, section 3.1) of 1..MaxArgs random argument words to the
// target's server, or an illegal operation, each refusal reason at one
// end or the other in turn (sender: a bad descriptor register, a count of
// 0 or 11, bounds, a read-only descriptor, a block pointer into the
// kernel; receiver: a segment not granted to the source, a read-only
// segment written, a revoked segment, an unpinned page, bounds past the
// exported size).
//
// With an RPC weight every node is a server (NewRPCServer: the rpc.once
// checker counts every execution) with one stack of RPCStackBytes (25
// cell slots: calls of 1..223 argument words, 1..25 cells, 1..4 messages
// of N = 8) per other node, and a client bound to every other node's
// server. Its procedure TrafficChecksum returns a checksum of the
// arguments, which the caller checks. A node serves one poll (rpc
// Server.Once) before each of its operations, while it waits in a call
// of its own (rpc Binding.SetYield: section 3.1.3's user-level threads),
// and after its operations until every node's are done.
type Traffic struct {
	Ops                                int
	Write, Read, CAS, Block, RPC       int
	Illegal                            int
	MaxGap, MaxBlockWords, IntrPercent int
}

// DefaultTraffic is the design's mix (6.5): 50% WRITE, 15% READ, 10% CAS,
// 10% block, 10% RPC, 5% illegal (weights), blocks of up to 64 words (7
// cells), up to 2000 CPU cycles (80 µs) of work before each.
func DefaultTraffic(ops int) Traffic {
	return Traffic{Ops: ops, Write: 50, Read: 15, CAS: 10, Block: 10, RPC: 10, Illegal: 5, MaxGap: 2000, MaxBlockWords: 64, IntrPercent: 5}
}

// MaxTrafficWeight bounds each of Traffic's weights. assumed: any larger
// ratio says nothing more (atm-traffic's keys share it).
const MaxTrafficWeight = 1000

// TrafficProc is the traffic servers' one procedure's number:
// TrafficChecksum.
const TrafficProc = 1

// TrafficChecksum is the traffic's remote procedure: a checksum of its
// arguments that depends on each word and its place (h = 31h + a from
// the argument count), so a lost, stale or misplaced argument word shows
// in the result the caller checks. It costs nothing beyond the server
// stub's loads (section 3.1.3: the computation time «is negligible»).
func TrafficChecksum(_ *cpu.Proc, args []uint32) uint32 {
	h := uint32(len(args))
	for _, a := range args {
		h = 31*h + a
	}
	return h
}

// MaxTrafficBlockWords bounds Traffic.MaxBlockWords: a block fits its
// source's area of the target's segment (trafficArea).
const MaxTrafficBlockWords = trafficArea

// The traffic's layout of every node's segment (SegBytes, 16384 words;
// assumed): source s writes and block-transfers into its own area of
// trafficArea words from s·trafficArea; the CAS counters follow; each
// node receives READ replies from target t at replyBase + t·replyWords
// and CAS replies at casReplyBase + t.
const (
	trafficArea   = 3072
	casBase       = MaxNodes * trafficArea
	casCounters   = 64
	replyBase     = casBase + casCounters
	replyWords    = 64
	casReplyBase  = replyBase + MaxNodes*replyWords
	trafficRegs   = MaxNodes  // descriptor registers per illegal kind: reg = kind·trafficRegs + target
	extraSegBase  = 0x28_0000 // below rpc.Defaults' ServerBase (3 MB)
	extraSegBytes = rma.PageBytes
	blockBufWords = 4096
)

// Illegal kinds (each uses registers kind·trafficRegs + target, kind ≥ 1).
const (
	illBadReg = iota
	illCount
	illBounds
	illReadOnlyDesc
	illPointer
	illNoGrant   // receiver: ErrSrcVCI
	illROSegment // receiver: ErrRights
	illRevoked   // receiver: ErrDesc
	illUnpinned  // receiver: ErrUnpinned
	illRxBounds  // receiver: ErrBounds
	numIllegal
)

// badReg is the register illBadReg writes through: never loaded (the
// illegal kinds' registers end below it, host/rpc's bindings take theirs
// from the top).
const badReg = numIllegal * trafficRegs

// Validate checks the traffic's parameters; an error names the field.
func (t Traffic) Validate() error {
	switch {
	case t.Ops < 0:
		return fmt.Errorf("atmtb: traffic Ops %d must not be negative", t.Ops)
	case t.Write < 0 || t.Read < 0 || t.CAS < 0 || t.Block < 0 || t.Illegal < 0:
		return fmt.Errorf("atmtb: traffic weights (Write %d, Read %d, CAS %d, Block %d, Illegal %d) must not be negative", t.Write, t.Read, t.CAS, t.Block, t.Illegal)
	case t.RPC < 0 || t.RPC > MaxTrafficWeight:
		return fmt.Errorf("atmtb: traffic RPC weight %d must be in 0..%d", t.RPC, MaxTrafficWeight)
	case t.Write+t.Read+t.CAS+t.Block+t.RPC+t.Illegal == 0:
		return fmt.Errorf("atmtb: traffic weights must not all be 0")
	case t.MaxGap < 0 || t.MaxGap > 1<<24:
		return fmt.Errorf("atmtb: traffic MaxGap %d must be in 0..%d", t.MaxGap, 1<<24)
	case t.MaxBlockWords < 1 || t.MaxBlockWords > MaxTrafficBlockWords:
		return fmt.Errorf("atmtb: traffic MaxBlockWords %d must be in 1..%d", t.MaxBlockWords, MaxTrafficBlockWords)
	case t.IntrPercent < 0 || t.IntrPercent > 100:
		return fmt.Errorf("atmtb: traffic IntrPercent %d must be in 0..100", t.IntrPercent)
	}
	return nil
}

// TrafficRun is a started traffic load; its counts are final once the
// simulation has ended.
type TrafficRun struct {
	cl   *Cluster
	segs []uint8
	// swaps[d][c] counts successful CAS increments of node d's counter c.
	swaps [][]uint32
	// Done counts the node programs that finished.
	Done int
	// CASCalls counts CAS operations issued (each retry one).
	CASCalls uint64
	// RPCCalls counts the RPC calls made, RPCChecked those that returned
	// TrafficChecksum of their arguments (a call that fails or returns
	// another result is an rpc.once violation).
	RPCCalls, RPCChecked uint64
	// servers[d] is node d's RPC server, binds[s][d] node s's binding to
	// it (nil without an RPC weight).
	servers []*RPCServer
	binds   [][]*rpc.Binding
}

// RPCStats returns the servers' counts summed (executions, duplicates
// answered from the cache, acknowledgements, refusals of a protected
// stack) and the clients' re-sent cells and timeouts (Resent and Timeouts
// of both ends added).
func (r *TrafficRun) RPCStats() rpc.Stats {
	var t rpc.Stats
	add := func(s rpc.Stats) {
		t.Calls += s.Calls
		t.Cells += s.Cells
		t.Acks += s.Acks
		t.Resent += s.Resent
		t.DupCalls += s.DupCalls
		t.Timeouts += s.Timeouts
		t.Refused += s.Refused
		t.Bad += s.Bad
	}
	for _, s := range r.servers {
		add(s.Stats())
	}
	for _, bs := range r.binds {
		for _, b := range bs {
			if b != nil {
				st := b.Stats()
				st.Calls, st.Cells, st.Acks = 0, 0, 0 // counted at the servers
				add(st)
			}
		}
	}
	return t
}

// Operations is the run's operations (issue 15 design 6.5): cells a
// sender issued as a WRITE, READ request, CAS request (not its resends)
// or block cell, and traps the sender refused. Each is checked at its
// target, refused with a reason or lost to a counted fault.
func (r *TrafficRun) Operations() uint64 {
	s := r.cl.Ref.Stats()
	n := s.Issued[rma.OpWrite] + s.Issued[rma.OpReadReq] + s.Issued[rma.OpBlock] + s.Issued[rma.OpCASReq] - s.Retransmits
	for _, v := range s.RefusedSend {
		n += v
	}
	return n
}

// StartTraffic connects the segments (Connect), sets up the illegal
// operations' descriptors and segments, and gives every node's CPU its
// program of t. Each node draws from its own stream of the Env's seed
// (Env.Rand "atm-traffic.n<i>"), so a seed gives the same run every time.
// At Finish it checks every CAS counter against the increments that
// swapped (rma.cas).
func StartTraffic(cl *Cluster, t Traffic) (*TrafficRun, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	segs, err := Connect(cl)
	if err != nil {
		return nil, err
	}
	n := len(cl.Nodes)
	ref := cl.Ref
	tr := &TrafficRun{cl: cl, segs: segs, swaps: make([][]uint32, n)}
	// The receiver-side illegal segments: per node, one not granted to
	// anyone, one read-only, one revoked, one with page 0 unpinned.
	extra := make([][numIllegal]uint8, n)
	for d, nd := range cl.Nodes {
		tr.swaps[d] = make([]uint32, casCounters)
		k := nd.Kernel
		var all []int
		for j := range n {
			if j != d {
				all = append(all, j)
			}
		}
		for i, kind := range []int{illNoGrant, illROSegment, illRevoked, illUnpinned} {
			rights := rma.RightRead | rma.RightWrite
			grant := all
			switch kind {
			case illNoGrant:
				grant = nil
			case illROSegment:
				rights = rma.RightRead
			}
			s, err := k.Export(extraSegBase+uint64(i)*extraSegBytes, extraSegBytes, rights, grant...)
			if err != nil {
				return nil, fmt.Errorf("atmtb: traffic: node %d: %w", d, err)
			}
			extra[d][kind] = s
			switch kind {
			case illRevoked:
				if err := k.Revoke(s); err != nil {
					return nil, err
				}
				ref.Revoke(d, s)
			case illUnpinned:
				if err := k.Unpin(s, 0); err != nil {
					return nil, err
				}
				ref.Unpin(d, s, 0)
			}
		}
	}
	for s, nd := range cl.Nodes {
		k := nd.Kernel
		for d := range n {
			if d == s {
				continue
			}
			rw := rma.RightRead | rma.RightWrite
			imports := []struct {
				kind  int
				seg   uint8
				bytes int
				r     rma.Rights
			}{
				{illBounds, segs[d], SegBytes, rw},
				{illReadOnlyDesc, segs[d], SegBytes, rma.RightRead},
				{illNoGrant, extra[d][illNoGrant], extraSegBytes, rw},
				{illROSegment, extra[d][illROSegment], extraSegBytes, rw},
				{illRevoked, extra[d][illRevoked], extraSegBytes, rw},
				{illUnpinned, extra[d][illUnpinned], extraSegBytes, rw},
				// A descriptor claiming twice the exported size: the
				// sender's bounds check passes, the receiver's refuses.
				{illRxBounds, segs[d], 2 * SegBytes, rw},
			}
			for _, im := range imports {
				if err := k.Import(im.kind*trafficRegs+d, d, im.seg, im.bytes, im.r); err != nil {
					return nil, fmt.Errorf("atmtb: traffic: node %d: %w", s, err)
				}
			}
		}
	}
	if t.RPC > 0 {
		if err := tr.startRPC(); err != nil {
			return nil, err
		}
	}
	for s, nd := range cl.Nodes {
		if _, ok := nd.Kernel.Desc(badReg); ok {
			return nil, fmt.Errorf("atmtb: traffic: node %d's register %d, the never-loaded one, holds a descriptor", s, badReg)
		}
	}
	for s, nd := range cl.Nodes {
		rng := cl.Env.Rand(fmt.Sprintf("atm-traffic.n%d", s))
		// The block transfers' user buffer: random words, in memory before
		// the run.
		buf := make([]byte, 4*blockBufWords)
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		if err := nd.Memory().Storage().Write(SrcBase, buf); err != nil {
			return nil, fmt.Errorf("atmtb: traffic: node %d: %w", s, err)
		}
		nd.CPUs[0].Run(cpu.Go(tr.program(t, s, rng)))
	}
	cl.OnFinish(tr.finish)
	return tr, nil
}

// startRPC gives every node a server with one stack per other node and
// binds every node to every other node's server, each binding yielding to
// its own node's server while it waits.
func (tr *TrafficRun) startRPC() error {
	cl := tr.cl
	n := len(cl.Nodes)
	procs := map[uint16]rpc.Proc{TrafficProc: TrafficChecksum}
	for d := range n {
		srv, err := NewRPCServer(cl, d, n-1, RPCStackBytes, procs)
		if err != nil {
			return fmt.Errorf("atmtb: traffic: node %d: %w", d, err)
		}
		tr.servers = append(tr.servers, srv)
	}
	tr.binds = make([][]*rpc.Binding, n)
	for s := range n {
		tr.binds[s] = make([]*rpc.Binding, n)
		for d := range n {
			if d == s {
				continue
			}
			b, err := rpc.Bind(cl.Nodes[s].Kernel, cl.Config.RPC, d, tr.servers[d].Server)
			if err != nil {
				return fmt.Errorf("atmtb: traffic: node %d: %w", s, err)
			}
			b.SetYield(tr.servers[s].Once)
			tr.binds[s][d] = b
		}
	}
	return nil
}

// call makes one RPC call from node s to node d's server with random
// arguments and checks its result: a call that fails (MaxTries re-sends
// unanswered: lost) or returns something other than the arguments'
// checksum is an rpc.once violation.
func (tr *TrafficRun) call(p *cpu.Proc, s, d int, rng *rand.Rand) {
	b := tr.binds[s][d]
	args := randWords(rng, 1+rng.IntN(b.MaxArgs()))
	tr.RPCCalls++
	got, err := tr.servers[d].Call(b, p, TrafficProc, args)
	path := fmt.Sprintf("N%d.RPCCheck", s)
	switch want := TrafficChecksum(nil, args); {
	case err != nil:
		tr.cl.Env.Report(p.Now(), path, RuleRPC, "call %#x to node %d with %d arguments lost: %v", b.LastCall(), d, len(args), err)
	case got != want:
		tr.cl.Env.Report(p.Now(), path, RuleRPC, "call %#x to node %d returned %#x, the checksum of its %d arguments is %#x", b.LastCall(), d, got, len(args), want)
	default:
		tr.RPCChecked++
	}
}

// program is node s's process.
func (tr *TrafficRun) program(t Traffic, s int, rng *rand.Rand) func(p *cpu.Proc) {
	cl := tr.cl
	n := len(cl.Nodes)
	k := cl.Nodes[s].Kernel
	own := int(tr.segs[s])
	// guess[d][c] is the last value this node saw in node d's counter c.
	guess := make([][]uint32, n)
	for d := range guess {
		guess[d] = make([]uint32, casCounters)
	}
	total := t.Write + t.Read + t.CAS + t.Block + t.RPC + t.Illegal
	illegal := rng.IntN(numIllegal)
	var srv *RPCServer
	if tr.servers != nil {
		srv = tr.servers[s]
	}
	return func(p *cpu.Proc) {
		for range t.Ops {
			if srv != nil {
				srv.Once(p)
			}
			if t.MaxGap > 0 {
				if g := rng.IntN(t.MaxGap + 1); g > 0 {
					p.Compute(g)
				}
			}
			d := rng.IntN(n - 1)
			if d >= s {
				d++
			}
			w := rng.IntN(total)
			switch {
			case w < t.Write:
				cnt := 1 + rng.IntN(rma.MaxWords)
				off := s*trafficArea + rng.IntN(trafficArea-cnt+1)
				k.Write(p, d, off, cnt, rng.IntN(100) < t.IntrPercent, randWords(rng, cnt))
			case w < t.Write+t.Read:
				cnt := 1 + rng.IntN(rma.MaxWords)
				off := rng.IntN(casBase - cnt + 1)
				k.Read(p, d, off, cnt, own, replyBase+d*replyWords+rng.IntN(replyWords-cnt+1), false)
			case w < t.Write+t.Read+t.CAS:
				c := rng.IntN(casCounters)
				for range 2 {
					tr.CASCalls++
					g := guess[d][c]
					seen, swapped := k.CAS(p, d, casBase+c, g, g+1, own, casReplyBase+d)
					if swapped {
						tr.swaps[d][c]++
						guess[d][c] = g + 1
						break
					}
					// Retry once from the value seen (0 if the kernel gave
					// up: harmless, the next swap fails and learns it).
					guess[d][c] = seen
				}
			case w < t.Write+t.Read+t.CAS+t.Block:
				cnt := 1 + rng.IntN(t.MaxBlockWords)
				off := s*trafficArea + rng.IntN(trafficArea-cnt+1)
				src := SrcBase + 4*uint64(rng.IntN(blockBufWords-cnt+1))
				k.Block(p, d, off, src, cnt, false)
			case w < t.Write+t.Read+t.CAS+t.Block+t.RPC:
				tr.call(p, s, d, rng)
			default:
				tr.illegalOp(p, k, illegal, s, d, rng)
				illegal = (illegal + 1) % numIllegal
			}
		}
		tr.Done++
		// Serve the others' calls until every node's operations are done.
		for srv != nil && tr.Done < n {
			srv.Once(p)
		}
	}
}

// illegalOp issues one illegal operation of kind to node d.
func (tr *TrafficRun) illegalOp(p *cpu.Proc, k *rma.Kernel, kind, s, d int, rng *rand.Rand) {
	reg := kind*trafficRegs + d
	vals := randWords(rng, rma.MaxWords)
	switch kind {
	case illBadReg:
		// A register never loaded.
		k.Write(p, badReg, 0, 1, false, vals[:1])
	case illCount:
		k.Write(p, d, s*trafficArea, rma.MaxWords+1, false, vals)
	case illBounds:
		k.Write(p, reg, SegBytes/4-1, 2, false, vals[:2])
	case illReadOnlyDesc:
		k.Write(p, reg, s*trafficArea, 1, false, vals[:1])
	case illPointer:
		// A block pointer into the kernel's memory.
		k.Block(p, d, s*trafficArea, tr.cl.Config.KernelBase, 4, false)
	case illRxBounds:
		k.Write(p, reg, SegBytes/4+rng.IntN(SegBytes/4-rma.MaxWords), 1+rng.IntN(rma.MaxWords), false, vals)
	default:
		k.Write(p, reg, rng.IntN(extraSegBytes/4-rma.MaxWords), 1+rng.IntN(rma.MaxWords), false, vals)
	}
}

// randWords returns n random words.
func randWords(rng *rand.Rand, n int) []uint32 {
	w := make([]uint32, n)
	for i := range w {
		w[i] = rng.Uint32()
	}
	return w
}

// finish checks every node's CAS counters: each holds the increments
// that swapped (every swap moved it from the guess to the guess + 1).
func (tr *TrafficRun) finish(now clock.Time) {
	for d, nd := range tr.cl.Nodes {
		b, err := nd.Memory().Storage().Bytes(SegBase+4*casBase, 4*casCounters)
		if err != nil {
			continue
		}
		for c, want := range tr.swaps[d] {
			if got := binary.LittleEndian.Uint32(b[4*c:]); got != want {
				tr.cl.Env.Report(now, fmt.Sprintf("N%d.ATMCheck", d), RuleCAS, "CAS counter %d holds %d at the end, %d increments swapped", c, got, want)
				return
			}
		}
	}
	if tr.Done != len(tr.cl.Nodes) {
		tr.cl.Env.Report(now, "ATM.Check", RuleCells, "%d of %d traffic programs never finished", len(tr.cl.Nodes)-tr.Done, len(tr.cl.Nodes))
	}
}
