package lcitb

import (
	"errors"
	"fmt"
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/link"
	"math/rand/v2"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Traffic is a randomised workload: every node performs Ops operations,
// each a unicast to a random other node, a multicast to all, or a
// fetch-and-add on a random other node's variable, with payloads of 0 to
// MaxSize bytes, polling for arrivals between its operations and, at the
// end, until everything sent to it has arrived.
type Traffic struct {
	Ops     int
	MaxSize int
	// McastPct and FAPct are the percentages of multicasts and
	// fetch-and-adds among the operations.
	McastPct, FAPct int
	// HotPct is the percentage of the unicasts and fetch-and-adds of
	// nodes other than 0 that go to node 0 instead of a random other node:
	// many senders to one receiver, whose receive side backs up, so that
	// each sender's window towards it fills (0: uniform destinations).
	HotPct int
	// HotPause is how long node 0's processor computes after each of its
	// operations before it polls for arrivals: a busy receiver, whose host
	// receive slots and then NI receive buffers fill while its senders go
	// on, so that their windows towards it fill (0: it polls at once).
	HotPause clock.Time
}

// TrafficResult is what a randomised run delivered; every check of
// RunTraffic held for it.
type TrafficResult struct {
	// Unicasts, Multicasts and FetchAdds are the operations planned.
	Unicasts, Multicasts, FetchAdds uint64
	// UnicastsDone, MulticastsDone and FetchAddsDone are the operations
	// the run carried out, as it observed them: unicasts handed to the
	// receiver's upcall, multicasts handed to the upcall of every member,
	// fetch-and-adds whose old value came back to the caller.
	UnicastsDone, MulticastsDone, FetchAddsDone uint64
	// Deliveries counts packets handed to upcalls.
	Deliveries uint64
	// Rx sums the NIs' retransmission counters (I-nirx); Corrupted and
	// Dropped are the packets the links corrupted and lost.
	Rx                 lci.RxStats
	Corrupted, Dropped uint64
	// Coverage is how often each row of each firmware module's table
	// fired, summed over the cluster's NIs.
	Coverage []firmware.Coverage
	Run      env.Result
}

// Completed returns the operations the run carried out (see UnicastsDone).
func (r TrafficResult) Completed() uint64 { return r.UnicastsDone + r.MulticastsDone + r.FetchAddsDone }

// trafficOp is one planned operation.
type trafficOp struct {
	kind uint8 // lci.TypeData, TypeMcast or TypeFAReq
	dst  int
	size int
}

// RunTraffic runs t on the cluster c in e (nil: a fresh one), drawing the
// operations from e's random streams (the run's seed), with checkers on
// top of the model's own (conservation in the NI's credits, the window,
// the watchdog):
//   - every unicast and multicast arrives exactly once, intact;
//   - in FIFO order per sender and receiver (and per root for multicasts):
//     «Packets are delivered in FIFO order» (section 2);
//   - every member receives every multicast;
//   - the values fetch-and-add returns for a variable are all different,
//     and they are exactly 0 .. n-1 for n additions of 1;
//   - no packet reaches an upcall twice (lci.dup: a retransmitting
//     variant resends what it believes lost, and the receiver must drop
//     what it already has);
//   - at the end every NI is quiescent (lci.quiescent): every receive
//     and send buffer free, nothing unacknowledged, no acknowledgment or
//     retransmission request owed;
//   - in I-hrx, every host's library too (nothing unacknowledged, no
//     acknowledgment owed, every send buffer free);
//   - in I-nirx and I-hrx, each NI dropped for a bad CRC exactly the packets its
//     incoming link delivered with a failed check (lci.crcsum: the link's
//     BadPackets).
func RunTraffic(e *env.Env, c Config, t Traffic) (TrafficResult, error) {
	var r TrafficResult
	if t.Ops < 1 || t.MaxSize < 0 || t.MaxSize > c.FirmwareConfig().MTU || t.McastPct < 0 || t.FAPct < 0 || t.McastPct+t.FAPct > 100 ||
		t.HotPct < 0 || t.HotPct > 100 || t.HotPause < 0 {
		return r, fmt.Errorf("lci traffic: %d operations, sizes up to %d (MTU %d), %d%% multicasts, %d%% F&A, %d%% to node 0, node 0 pausing %v: need ops >= 1, 0 <= size <= MTU, multicast and F&A percentages adding up to at most 100, a hot percentage of 0 to 100, a pause >= 0",
			t.Ops, t.MaxSize, c.FirmwareConfig().MTU, t.McastPct, t.FAPct, t.HotPct, t.HotPause)
	}
	if e == nil {
		e = env.New(env.Options{})
	}
	if c.Reliability == lci.HostRetransmit {
		// I-hrx: a node whose process has done its operations still
		// serves the others' fetch-and-adds and acknowledges their
		// packets: the polling watchdog's signal runs its library.
		c.Interrupts = true
	}
	n := c.Nodes
	// Plan: node i's operations, and what each node must receive.
	plans := make([][]trafficOp, n)
	expect := make([]int, n)
	for i := range n {
		rng := e.Rand(fmt.Sprintf("lci.traffic[%d]", i))
		for range t.Ops {
			op := trafficOp{kind: lci.TypeData, dst: other(rng, i, n), size: rng.IntN(t.MaxSize + 1)}
			if t.HotPct > 0 && i != 0 && rng.IntN(100) < t.HotPct {
				op.dst = 0
			}
			switch x := rng.IntN(100); {
			case x < t.McastPct:
				op.kind, op.dst = lci.TypeMcast, i
			case x < t.McastPct+t.FAPct:
				op.kind, op.size = lci.TypeFAReq, 4
			}
			plans[i] = append(plans[i], op)
			switch op.kind {
			case lci.TypeData:
				expect[op.dst]++
				r.Unicasts++
			case lci.TypeMcast:
				for k := range n {
					if k != i {
						expect[k]++
					}
				}
				r.Multicasts++
			case lci.TypeFAReq:
				r.FetchAdds++
			}
		}
	}
	// Checks.
	nextUni := make([][]uint32, n) // [receiver][sender] next sequence
	nextMc := make([][]uint32, n)  // [receiver][root]
	sentUni := make([][]uint32, n) // [sender][receiver] sequences used
	sentMc := make([]uint32, n)    // [root]
	faVals := make([]map[uint32]bool, n)
	got := make([]int, n)
	for i := range n {
		nextUni[i] = make([]uint32, n)
		nextMc[i] = make([]uint32, n)
		sentUni[i] = make([]uint32, n)
		faVals[i] = map[uint32]bool{}
	}
	var hosts []*lcilib.Host
	cl, err := Build(e, c)
	if err != nil {
		return r, err
	}
	for _, nd := range cl.Nodes {
		hosts = append(hosts, nd.Host)
	}
	handler := func(s *lcilib.Seq, m *lcilib.Msg) {
		me := s.Host().Node()
		got[me]++
		r.Deliveries++
		var next *uint32
		dst := me
		switch m.Type {
		case lci.TypeData:
			next = &nextUni[me][m.Src]
			r.UnicastsDone++
		case lci.TypeMcast:
			next = &nextMc[me][m.Src]
			dst = -1
		default:
			s.Host().Report(s.Now(), "lci.traffic", "unexpected packet type %d from %d", m.Type, m.Src)
			return
		}
		switch want := *next + 1; {
		case m.Seq == want:
			*next = want
		case m.Seq < want:
			s.Host().Report(s.Now(), "lci.dup", "packet %d (type %d) from node %d reached the upcall again (%d was due)", m.Seq, m.Type, m.Src, want)
			if m.Type == lci.TypeData {
				r.UnicastsDone--
			}
			return
		default:
			s.Host().Report(s.Now(), "lci.order", "packet %d (type %d) from node %d arrived where %d was due: lost or out of order", m.Seq, m.Type, m.Src, want)
			*next = m.Seq
		}
		checkData(s, m, trafficData(m.Type, m.Src, dst, m.Seq, int(m.Tag)))
	}
	for i, h := range hosts {
		h.SetUpcall(handler)
		h.Run(func(s *lcilib.Seq) {
			for _, op := range plans[i] {
				switch op.kind {
				case lci.TypeData:
					sentUni[i][op.dst]++
					s.Send(op.dst, trafficData(lci.TypeData, i, op.dst, sentUni[i][op.dst], op.size), uint32(op.size))
				case lci.TypeMcast:
					sentMc[i]++
					s.Multicast(trafficData(lci.TypeMcast, i, -1, sentMc[i], op.size), uint32(op.size))
				case lci.TypeFAReq:
					old := s.FetchAndAdd(op.dst, 1)
					if faVals[op.dst][old] {
						h.Report(s.Now(), "lci.fetchadd", "node %d's variable handed out %d twice", op.dst, old)
					}
					faVals[op.dst][old] = true
					r.FetchAddsDone++
				}
				if i == 0 && t.HotPause > 0 {
					s.Compute(int(h.CPU.Clock().Cycles(t.HotPause)))
				}
				s.TryRecv(handler)
			}
			// Then poll until everything due has arrived.
			for got[i] < expect[i] {
				s.Recv(handler)
			}
		})
	}
	r.Run, err = e.Run()
	cl.Close()
	// A multicast is done when its last member has it: per root, the
	// fewest any member received.
	for k := range n {
		done := -1
		for i := range n {
			if i != k && (done < 0 || int(nextMc[i][k]) < done) {
				done = int(nextMc[i][k])
			}
		}
		r.MulticastsDone += uint64(max(done, 0))
	}
	for k := range cl.Nodes[0].FW.Machines() {
		var same []*firmware.Machine
		for _, nd := range cl.Nodes {
			same = append(same, nd.FW.Machines()[k])
		}
		r.Coverage = append(r.Coverage, firmware.MergeCoverage(same...)...)
	}
	var errs []error
	for i, nd := range cl.Nodes {
		rs := nd.FW.RxStats()
		if c.Reliability == lci.HostRetransmit {
			// The library runs the protocol; the NI drops.
			hs := nd.Host.HrxStats()
			rs.Sent, rs.Retransmitted, rs.Timeouts, rs.AcksSent = hs.Sent, hs.Retransmitted, hs.Timeouts, hs.AcksSent
			rs.OutOfOrder, rs.Duplicates = hs.OutOfOrder, hs.Duplicates
			if ok, st := nd.Host.Quiescent(); !ok {
				errs = append(errs, fmt.Errorf("lci.quiescent: node %d's library is not quiescent at the end: %s", i, st))
			}
		}
		r.Rx.Add(rs)
		if !nd.FW.Idle() {
			errs = append(errs, fmt.Errorf("lci.quiescent: node %d's NI is not quiescent at the end: %s", i, nd.FW.State()))
		}
		if c.Reliability != lci.NoRetransmit {
			if bad := nd.In.Stats().BadPackets; rs.CRCDrops != bad {
				errs = append(errs, fmt.Errorf("lci.crcsum: node %d's NI dropped %d packets for a bad CRC, its link %s delivered %d", i, rs.CRCDrops, nd.In.Name(), bad))
			}
		}
	}
	for _, l := range cl.Net.Links {
		for _, side := range []link.Side{link.A, link.B} {
			st := l.From(side).Stats()
			r.Corrupted += st.Corrupted
			r.Dropped += st.Dropped
		}
	}
	if err != nil {
		return r, errors.Join(append([]error{err}, errs...)...)
	}
	if len(errs) > 0 {
		return r, errors.Join(errs...)
	}
	for i := range n {
		if got[i] != expect[i] {
			return r, fmt.Errorf("node %d received %d packets, %d were sent to it", i, got[i], expect[i])
		}
		for k := range n {
			if nextUni[i][k] != sentUni[k][i] {
				return r, fmt.Errorf("node %d received %d unicasts from node %d, which sent %d", i, nextUni[i][k], k, sentUni[k][i])
			}
			if k != i && nextMc[i][k] != sentMc[k] {
				return r, fmt.Errorf("node %d received %d multicasts from node %d, which sent %d", i, nextMc[i][k], k, sentMc[k])
			}
		}
		// n additions of 1 hand out exactly 0 .. n-1.
		for v := range uint32(len(faVals[i])) {
			if !faVals[i][v] {
				return r, fmt.Errorf("node %d's fetch-and-add variable: %d additions but %d never handed out", i, len(faVals[i]), v)
			}
		}
		got := cl.Nodes[i].FW.FetchAddValue()
		if c.Reliability == lci.HostRetransmit {
			got = cl.Nodes[i].Host.FetchAddValue() // the host serves it
		}
		if got != uint32(len(faVals[i])) {
			return r, fmt.Errorf("node %d's fetch-and-add variable is %d after %d additions", i, got, len(faVals[i]))
		}
	}
	return r, nil
}

// other draws a node other than i.
func other(rng *rand.Rand, i, n int) int {
	d := rng.IntN(n - 1)
	if d >= i {
		d++
	}
	return d
}

// trafficData is a packet's content, a function of who sent it where and
// its sequence, so the receiver can check it.
func trafficData(typ uint8, src, dst int, seq uint32, size int) []byte {
	b := make([]byte, size)
	x := uint32(typ)*0x9e3779b1 ^ uint32(src)*0x85ebca6b ^ uint32(dst+1)*0xc2b2ae35 ^ seq*0x27d4eb2f
	for k := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[k] = byte(x)
	}
	return b
}
