package lcitb

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/crl"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// CRLNodes builds every node's CRL on cl with the regions and a checker.
func CRLNodes(cl *Cluster, costs crl.Costs, regions []crl.Region, check *crl.Checker) ([]*crl.Node, error) {
	mtu := cl.Config.FirmwareConfig().MTU
	var out []*crl.Node
	for _, n := range cl.Nodes {
		c, err := crl.New(cl.Env, n.Host, len(cl.Nodes), mtu, costs, regions, check)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// CRLWriteMiss is CRL's level of Table V: «the cost of a clean write miss
// (a small control message to the home node followed by a reply with
// data)». Node 1 writes region i (b.Size bytes, homed at node 0, cached
// nowhere) in round trip i: rgn_start_write, one store, rgn_end_write;
// node 0 serves.
func CRLWriteMiss(e *env.Env, c Config, costs crl.Costs, b PPSBench) (_ clock.Time, err error) {
	defer named(&err, "crl write miss")
	total := b.Warm + b.Iters
	regions := make([]crl.Region, total)
	for i := range regions {
		regions[i] = crl.Region{Home: 1, Size: max(b.Size, 1)}
	}
	check := crl.NewChecker(regions)
	t, _, err := roundTrips(e, c, b, func(cl *Cluster) (func(*lcilib.Seq, int), func(*lcilib.Seq, int), error) {
		cn, err := CRLNodes(cl, costs, regions, check)
		if err != nil {
			return nil, nil, err
		}
		client := func(s *lcilib.Seq, i int) {
			d := cn[0].StartWrite(s, i)
			d[0] = byte(i)
			cn[0].EndWrite(s, i)
		}
		// The home handles one request per round trip.
		server := func(s *lcilib.Seq, total int) {
			cn[1].Serve(s, func() bool { return cn[1].Handled == uint64(total) })
		}
		return client, server, nil
	})
	return t, err
}

// CRLThroughput is CRL's one-way throughput: node 1 read-misses b.Stream
// regions of b.StreamSize bytes homed at node 0 in turn (each reply is the
// region's data, fragmented at the MTU); the rate is the data over the
// time per miss.
func CRLThroughput(e *env.Env, c Config, costs crl.Costs, b PPSBench) (_ Throughput, err error) {
	defer named(&err, "crl throughput")
	regions := make([]crl.Region, b.Stream)
	for i := range regions {
		regions[i] = crl.Region{Home: 0, Size: b.StreamSize}
	}
	check := crl.NewChecker(regions)
	var cn []*crl.Node
	return oneWay(e, c, b, func(cl *Cluster, done func(int, clock.Time)) (func(*lcilib.Seq, int), func(*lcilib.Seq), error) {
		var err error
		cn, err = CRLNodes(cl, costs, regions, check)
		if err != nil {
			return nil, nil, err
		}
		// The home (node 0) serves one request per region; the reader
		// (node 1) misses.
		send := func(s *lcilib.Seq, i int) {
			if i == 0 {
				cn[0].Serve(s, func() bool { return cn[0].Handled == uint64(b.Stream) })
			}
		}
		recv := func(s *lcilib.Seq) {
			for i := range b.Stream {
				cn[1].StartRead(s, i)
				cn[1].EndRead(s, i)
				done(i, s.Now())
			}
		}
		return send, recv, nil
	})
}

// CRLWork is a randomised CRL workload.
type CRLWork struct {
	// Regions of Size bytes, homed round-robin; Ops operations per node,
	// WritePct of them writes; PauseUs the most a node computes between
	// two operations (µs, random).
	Regions, Size, Ops, WritePct, PauseUs int
}

// CRLResult is what RunCRL saw.
type CRLResult struct {
	Checked, Violations                    int
	ReadMisses, WriteMisses, Invalidations uint64
	// Final is each region's counter as node 0 reads it at the end;
	// Writes the writes each region received.
	Final, Writes []uint64
	Run           env.Result
}

// RunCRL runs w on c.Nodes nodes with the coherence checker: every node
// does w.Ops random reads and writes of random regions (a write adds one
// to the region's counter, its first 8 bytes, and stamps the writer in the
// rest), computing a random pause between two; at the end node 0 reads
// every region. The counters must equal the writes.
func RunCRL(e *env.Env, c Config, costs crl.Costs, w CRLWork) (r CRLResult, err error) {
	defer named(&err, "crl workload")
	if w.Regions < 1 || w.Size < 8 || w.Ops < 1 || w.WritePct < 0 || w.WritePct > 100 || w.PauseUs < 0 {
		return r, fmt.Errorf("%+v: need regions >= 1 of >= 8 bytes, ops >= 1, write_pct 0..100, pause >= 0", w)
	}
	if e == nil {
		e = env.New(env.Options{})
	}
	regions := make([]crl.Region, w.Regions)
	for i := range regions {
		regions[i] = crl.Region{Home: i % c.Nodes, Size: w.Size}
	}
	check := crl.NewChecker(regions)
	r.Writes = make([]uint64, w.Regions)
	r.Final = make([]uint64, w.Regions)
	finished := 0
	var serr error
	var cn []*crl.Node
	_, res, err := runIn(e, c, func(cl *Cluster) {
		var err error
		cn, err = CRLNodes(cl, costs, regions, check)
		if err != nil {
			serr = err
			return
		}
		for k, n := range cl.Nodes {
			rng := e.Rand(fmt.Sprintf("crl.N%d", k))
			n.Host.Run(func(s *lcilib.Seq) {
				for range w.Ops {
					x := rng.IntN(w.Regions)
					if rng.IntN(100) < w.WritePct {
						d := cn[k].StartWrite(s, x)
						binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(d)+1)
						for j := 8; j < len(d); j++ {
							d[j] = byte(k)
						}
						r.Writes[x]++
						cn[k].EndWrite(s, x)
					} else {
						cn[k].StartRead(s, x)
						cn[k].EndRead(s, x)
					}
					if w.PauseUs > 0 {
						s.Compute(int(n.CPU.Clock().Cycles(clock.Time(rng.IntN(w.PauseUs+1)) * clock.Microsecond)))
					}
					cn[k].Poll(s)
				}
				finished++
				for j := range cl.Nodes {
					cl.Nodes[j].CPU.Wake(s.Now())
				}
				if k == 0 {
					cn[0].Serve(s, func() bool { return finished == len(cl.Nodes) })
					for x := range w.Regions {
						d := cn[0].StartRead(s, x)
						r.Final[x] = binary.LittleEndian.Uint64(d)
						cn[0].EndRead(s, x)
					}
					finished++
					for j := range cl.Nodes {
						cl.Nodes[j].CPU.Wake(s.Now())
					}
					return
				}
				cn[k].Serve(s, func() bool { return finished > len(cl.Nodes) })
			})
		}
	})
	if serr != nil {
		return r, serr
	}
	r.Run = res
	r.Checked, r.Violations = check.Checked, check.Violations
	for _, n := range cn {
		r.ReadMisses += n.ReadMisses
		r.WriteMisses += n.WriteMisses
		r.Invalidations += n.Invalidations
	}
	return r, err
}
