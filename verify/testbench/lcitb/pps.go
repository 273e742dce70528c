package lcitb

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// The parallel-programming-system layers of section 6 on an LCI cluster:
// Panda (host/panda), MPI (host/mpi), CRL (host/crl), Orca (host/orca) and
// Multigame (host/multigame), each node's layer over its lcilib.Host, and
// the benchmarks of Tables V and VI.

// PPSBench sizes the PPS benchmarks.
type PPSBench struct {
	// Size is the latency benchmarks' message (user data) size; Warm and
	// Iters the round trips ignored and measured.
	Size, Warm, Iters int
	// StreamSize and Stream are the throughput benchmarks' message size
	// and count.
	StreamSize, Stream int
}

// DefaultPPSBench: 16-byte messages as Tables III and IV (assumed: the
// paper gives no size for Table V; a small message, and the LCI level
// sends the same), 5 + 20 round trips; 40 messages of 64 KB for the
// throughput (assumed: large enough to be fragmented at every level, as
// lci-report's 64 KB throughput).
func DefaultPPSBench() PPSBench {
	return PPSBench{Size: 16, Warm: 5, Iters: 20, StreamSize: 16 << 10, Stream: 16}
}

func (b PPSBench) validate() error {
	if b.Size < 0 || b.Warm < 0 || b.Iters < 2 || b.StreamSize < 1 || b.Stream < 4 {
		return fmt.Errorf("pps bench: size %d, %d warm-up and %d measured round trips, stream of %d x %d bytes: need size >= 0, iters >= 2, stream >= 4 of >= 1 byte",
			b.Size, b.Warm, b.Iters, b.Stream, b.StreamSize)
	}
	return nil
}

// PandaNodes builds every node's Panda on cl.
func PandaNodes(cl *Cluster, cfg panda.Config) ([]*panda.Node, error) {
	mtu := cl.Config.FirmwareConfig().MTU
	var out []*panda.Node
	for _, n := range cl.Nodes {
		p, err := panda.New(cl.Env, n.Host, len(cl.Nodes), mtu, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// roundTrips runs a ping-pong-like driver: client(i) is round trip i on
// node 0, server runs on node 1; the round trip is the mean time between
// the starts of the measured ones.
func roundTrips(e *env.Env, c Config, b PPSBench, setup func(cl *Cluster) (client func(s *lcilib.Seq, i int), server func(s *lcilib.Seq, total int), err error)) (clock.Time, env.Result, error) {
	if err := b.validate(); err != nil {
		return 0, env.Result{}, err
	}
	c.Nodes = max(c.Nodes, 2)
	total := b.Warm + b.Iters
	var starts []clock.Time
	var serr error
	_, res, err := runIn(e, c, func(cl *Cluster) {
		client, server, err := setup(cl)
		if err != nil {
			serr = err
			return
		}
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range total + 1 {
				starts = append(starts, s.Now())
				if i < total {
					client(s, i)
				}
			}
		})
		if server != nil {
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) { server(s, total) })
		}
	})
	if serr != nil {
		return 0, res, serr
	}
	if err != nil {
		return 0, res, err
	}
	if len(starts) != total+1 {
		return 0, res, fmt.Errorf("%d of %d round trips completed", len(starts)-1, total)
	}
	return (starts[total] - starts[b.Warm]) / clock.Time(b.Iters), res, nil
}

// LCIRoundTrip is the LCI level of Table V: a ping-pong of b.Size-byte
// packets, the round trip (twice PingPong's end-to-end latency, measured
// the same way as the PPS levels).
func LCIRoundTrip(e *env.Env, c Config, b PPSBench) (clock.Time, error) {
	t, _, err := LCIRoundTripRun(e, c, b)
	return t, err
}

// LCIRoundTripRun is LCIRoundTrip with its run's result.
func LCIRoundTripRun(e *env.Env, c Config, b PPSBench) (_ clock.Time, _ env.Result, err error) {
	defer named(&err, "lci round trip")
	return roundTrips(e, c, b, func(cl *Cluster) (func(*lcilib.Seq, int), func(*lcilib.Seq, int), error) {
		client := func(s *lcilib.Seq, i int) {
			s.Send(1, pattern(b.Size, i), uint32(i))
			s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) { checkData(s, m, pattern(b.Size, -i)) })
		}
		server := func(s *lcilib.Seq, total int) {
			for i := range total {
				s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) { checkData(s, m, pattern(b.Size, i)) })
				s.Send(0, pattern(b.Size, -i), uint32(i))
			}
		}
		return client, server, nil
	})
}

// pandaPort is the benchmarks' Panda port.
const pandaPort = 1

// checkPanda reports a Panda message whose data is not what was sent.
func checkPanda(s *lcilib.Seq, m *panda.Message, want []byte) {
	if !bytes.Equal(m.Data, want) {
		s.Host().Report(s.Now(), "panda.data", "message from %d on port %d: %d bytes arrived, not the %d sent (or different)", m.Src, m.Port, len(m.Data), len(want))
	}
}

// PandaRoundTrip is Panda's level of Table V: with cfg.MT false (Panda-ST,
// MPI's row) a message-passing ping-pong, the client polling for the
// answer; with MT (Panda-MT, Orca's row) a null RPC of b.Size bytes each
// way.
func PandaRoundTrip(e *env.Env, c Config, cfg panda.Config, b PPSBench) (_ clock.Time, err error) {
	defer named(&err, "panda round trip")
	t, _, err := roundTrips(e, c, b, func(cl *Cluster) (func(*lcilib.Seq, int), func(*lcilib.Seq, int), error) {
		pn, err := PandaNodes(cl, cfg)
		if err != nil {
			return nil, nil, err
		}
		if cfg.MT {
			pn[1].Serve(pandaPort, func(s *lcilib.Seq, req *panda.Message) [][]byte {
				checkPanda(s, req, pattern(b.Size, int(req.Arg)))
				return [][]byte{pattern(b.Size, -int(req.Arg))}
			})
			client := func(s *lcilib.Seq, i int) {
				// The RPC ids are 1, 2, ...: round trip i is id i+1.
				rep := pn[0].RPC(s, 1, pandaPort, pattern(b.Size, i+1))
				checkPanda(s, rep, pattern(b.Size, -(i+1)))
			}
			server := func(s *lcilib.Seq, total int) {
				pn[1].WaitUntil(s, func() bool { return pn[1].Delivered == uint64(total) })
			}
			return client, server, nil
		}
		got := [2]int{}
		for k := range 2 {
			pn[k].Handle(pandaPort, func(s *lcilib.Seq, m *panda.Message) {
				sign := 1
				if k == 0 {
					sign = -1
				}
				checkPanda(s, m, pattern(b.Size, sign*got[k]))
				got[k]++
			})
		}
		client := func(s *lcilib.Seq, i int) {
			pn[0].Send(s, 1, pandaPort, pattern(b.Size, i))
			pn[0].WaitUntil(s, func() bool { return got[0] > i })
		}
		server := func(s *lcilib.Seq, total int) {
			for i := range total {
				pn[1].WaitUntil(s, func() bool { return got[1] > i })
				pn[1].Send(s, 0, pandaPort, pattern(b.Size, -i))
			}
		}
		return client, server, nil
	})
	return t, err
}

// LCIThroughput is the LCI level's one-way throughput of Table V: Stream
// of b.Stream messages of b.StreamSize bytes with the receiver's copy.
func LCIThroughput(e *env.Env, c Config, b PPSBench) (Throughput, error) {
	return Stream(e, c, Bench{Size: b.StreamSize, Warm: 0, Iters: 2, Stream: b.Stream}, true)
}

// oneWay runs a one-way stream: send(s, i) on node 0 sends message i,
// recv on node 1 calls done(i, now) as message i completes.
func oneWay(e *env.Env, c Config, b PPSBench, setup func(cl *Cluster, done func(i int, now clock.Time)) (send func(s *lcilib.Seq, i int), recv func(s *lcilib.Seq), err error)) (t Throughput, err error) {
	if err := b.validate(); err != nil {
		return t, err
	}
	c.Nodes = max(c.Nodes, 2)
	var times []clock.Time
	var serr error
	_, res, err := runIn(e, c, func(cl *Cluster) {
		send, recv, err := setup(cl, func(i int, now clock.Time) {
			if i == len(times) {
				times = append(times, now)
			}
		})
		if err != nil {
			serr = err
			return
		}
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range b.Stream {
				send(s, i)
			}
		})
		cl.Nodes[1].Host.Run(recv)
	})
	if serr != nil {
		return t, serr
	}
	if err != nil {
		return t, err
	}
	if len(times) != b.Stream {
		return t, fmt.Errorf("%d of %d messages received", len(times), b.Stream)
	}
	t = steady(times, b.StreamSize)
	t.Run = res
	return t, nil
}

// PandaThroughput is Panda's one-way throughput: node 0 sends b.Stream
// messages of b.StreamSize bytes to node 1, which polls (Panda copies
// every fragment out as it arrives).
func PandaThroughput(e *env.Env, c Config, cfg panda.Config, b PPSBench) (_ Throughput, err error) {
	defer named(&err, "panda throughput")
	return oneWay(e, c, b, func(cl *Cluster, done func(int, clock.Time)) (func(*lcilib.Seq, int), func(*lcilib.Seq), error) {
		pn, err := PandaNodes(cl, cfg)
		if err != nil {
			return nil, nil, err
		}
		got := 0
		pn[1].Handle(pandaPort, func(s *lcilib.Seq, m *panda.Message) {
			checkPanda(s, m, pattern(b.StreamSize, got))
			done(got, s.Now())
			got++
		})
		send := func(s *lcilib.Seq, i int) { pn[0].Send(s, 1, pandaPort, pattern(b.StreamSize, i)) }
		recv := func(s *lcilib.Seq) { pn[1].WaitUntil(s, func() bool { return got == b.Stream }) }
		return send, recv, nil
	})
}

// OrderedResult is what RunOrdered saw.
type OrderedResult struct {
	// Delivered is the ordered broadcasts each node delivered.
	Delivered []int
	// Checked and Violations are the order checker's counts.
	Checked, Violations int
	Run                 env.Result
}

// RunOrdered runs concurrent totally ordered broadcasts on c.Nodes nodes
// with Panda (cfg): every node, the sequencer (the last node) too (its
// numbers come from its own NI), sends per ordered broadcasts of size
// bytes, all at once, and every node polls until it has delivered all of
// them; cfg.Order is set to a fresh checker.
func RunOrdered(e *env.Env, c Config, cfg panda.Config, per, size int) (r OrderedResult, err error) {
	defer named(&err, "ordered broadcast")
	if c.Nodes < 3 || per < 1 || size < 0 {
		return r, fmt.Errorf("%d nodes, %d broadcasts each of %d bytes: need 3 nodes and 1 broadcast", c.Nodes, per, size)
	}
	oc := panda.NewOrderChecker()
	cfg.Order = oc
	cfg.Sequencer = c.Nodes - 1
	want := c.Nodes * per
	var serr error
	_, res, err := runIn(e, c, func(cl *Cluster) {
		pn, perr := PandaNodes(cl, cfg)
		if perr != nil {
			serr = perr
			return
		}
		for k, n := range cl.Nodes {
			// Each origin's broadcasts are delivered in the order it sent
			// them (its sequence numbers grow): the i-th from src is
			// src's message i.
			from := make([]int, c.Nodes)
			pn[k].Handle(pandaPort, func(s *lcilib.Seq, m *panda.Message) {
				checkPanda(s, m, pattern(size, m.Src*1000+from[m.Src]))
				from[m.Src]++
			})
			n.Host.Run(func(s *lcilib.Seq) {
				for i := range per {
					pn[k].OrderedBroadcast(s, pandaPort, pattern(size, k*1000+i))
					pn[k].Poll(s)
				}
				pn[k].WaitUntil(s, func() bool { return oc.Count(k) == want })
			})
		}
	})
	if serr != nil {
		return r, serr
	}
	r.Run = res
	for k := range c.Nodes {
		r.Delivered = append(r.Delivered, oc.Count(k))
	}
	r.Checked, r.Violations = oc.Checked, oc.Violations
	return r, err
}
