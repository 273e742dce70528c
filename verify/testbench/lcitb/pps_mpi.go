package lcitb

import (
	"bytes"
	"fmt"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/mpi"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// MPINodes builds every node's Panda-ST and MPI communicator on cl.
func MPINodes(cl *Cluster, pc panda.Config, mc mpi.Config) ([]*mpi.Comm, error) {
	pc.MT = false
	pn, err := PandaNodes(cl, pc)
	if err != nil {
		return nil, err
	}
	var out []*mpi.Comm
	for _, p := range pn {
		c, err := mpi.New(p, len(cl.Nodes), mc)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// checkBytes reports data that is not what was sent.
func checkBytes(s *lcilib.Seq, what string, got, want []byte) {
	if !bytes.Equal(got, want) {
		s.Host().Report(s.Now(), "pps.data", "%s: %d bytes arrived, not the %d sent (or different)", what, len(got), len(want))
	}
}

// MPIRoundTrip is MPI's level of Table V: «the cost of a round-trip
// message using the MPI Send/MPI Receive primitives», b.Size bytes each
// way.
func MPIRoundTrip(e *env.Env, c Config, pc panda.Config, mc mpi.Config, b PPSBench) (_ clock.Time, err error) {
	defer named(&err, "mpi round trip")
	t, _, err := roundTrips(e, c, b, func(cl *Cluster) (func(*lcilib.Seq, int), func(*lcilib.Seq, int), error) {
		cm, err := MPINodes(cl, pc, mc)
		if err != nil {
			return nil, nil, err
		}
		client := func(s *lcilib.Seq, i int) {
			cm[0].Send(s, 1, i, pattern(b.Size, i))
			d, st := cm[0].Recv(s, 1, i)
			checkBytes(s, "mpi reply", d, pattern(b.Size, -i))
			if st.Source != 1 || st.Tag != i {
				s.Host().Report(s.Now(), "mpi.match", "reply %d matched source %d tag %d", i, st.Source, st.Tag)
			}
		}
		server := func(s *lcilib.Seq, total int) {
			for i := range total {
				d, _ := cm[1].Recv(s, 0, i)
				checkBytes(s, "mpi request", d, pattern(b.Size, i))
				cm[1].Send(s, 0, i, pattern(b.Size, -i))
			}
		}
		return client, server, nil
	})
	return t, err
}

// MPIThroughput is MPI's one-way throughput: MPI_Send of b.Stream messages
// of b.StreamSize bytes, the receiver posting MPI_Recv for each in turn.
func MPIThroughput(e *env.Env, c Config, pc panda.Config, mc mpi.Config, b PPSBench) (_ Throughput, err error) {
	defer named(&err, "mpi throughput")
	return oneWay(e, c, b, func(cl *Cluster, done func(int, clock.Time)) (func(*lcilib.Seq, int), func(*lcilib.Seq), error) {
		cm, err := MPINodes(cl, pc, mc)
		if err != nil {
			return nil, nil, err
		}
		send := func(s *lcilib.Seq, i int) { cm[0].Send(s, 1, i, pattern(b.StreamSize, i)) }
		recv := func(s *lcilib.Seq) {
			for i := range b.Stream {
				d, _ := cm[1].Recv(s, 0, i)
				checkBytes(s, "mpi stream", d, pattern(b.StreamSize, i))
				done(i, s.Now())
			}
		}
		return send, recv, nil
	})
}

// A Level is one software level of a multicast benchmark (Table VI).
type Level int

// The levels of Table VI's rows.
const (
	// LevelLCI is LCI's multicast (MPI's row) or LCI's fetch-and-add on
	// the sequencer and then its multicast (Orca's row).
	LevelLCI Level = iota
	// LevelPanda is Panda-ST's unordered broadcast (MPI's row) or
	// Panda-MT's totally ordered broadcast (Orca's row).
	LevelPanda
	// LevelPPS is MPI_Bcast (MPI's row) or an operation on a replicated
	// Orca object (Orca's row).
	LevelPPS
)

// Multicaster is a multicast benchmark's software on a cluster: send
// multicasts message i from node 0; the receivers (every other node) run
// recv, which calls arrived(i, now) as message i reaches the node.
type Multicaster func(cl *Cluster, msg func(i int) []byte, arrived func(node, i int, now clock.Time)) (send func(s *lcilib.Seq, i int), recv func(node int, s *lcilib.Seq, total int), err error)

// MulticastLatency is Table VI's latency: node 0 multicasts warm + iters
// messages (msg(i)) one at a time, the next when every other node has the
// previous; the latency is the mean time from the send's start to the
// last arrival.
func MulticastLatency(e *env.Env, c Config, warm, iters int, msg func(i int) []byte, m Multicaster) (_ clock.Time, err error) {
	defer named(&err, "multicast latency")
	total := warm + iters
	got := make([]int, total)
	last := make([]clock.Time, total)
	var sum clock.Time
	var serr error
	_, _, err = runIn(e, c, func(cl *Cluster) {
		root := cl.Nodes[0].Host
		send, recv, err := m(cl, msg, func(node, i int, now clock.Time) {
			got[i]++
			last[i] = max(last[i], now)
			if got[i] == len(cl.Nodes)-1 {
				root.CPU.Wake(now)
			}
		})
		if err != nil {
			serr = err
			return
		}
		for _, n := range cl.Nodes[1:] {
			n.Host.Run(func(s *lcilib.Seq) { recv(n.ID, s, total) })
		}
		root.Run(func(s *lcilib.Seq) {
			for i := range total {
				t0 := s.Now()
				send(s, i)
				s.WaitUntil(func() bool { return got[i] >= len(cl.Nodes)-1 })
				if i >= warm {
					sum += last[i] - t0
				}
			}
		})
	})
	if serr != nil {
		return 0, serr
	}
	if err != nil {
		return 0, err
	}
	for i, n := range got {
		if n != c.Nodes-1 {
			return 0, fmt.Errorf("multicast %d reached %d of %d nodes", i, n, c.Nodes-1)
		}
	}
	return sum / clock.Time(iters), nil
}

// MulticastThroughput is Table VI's throughput: node 0 multicasts count
// messages of size bytes back to back; the rate is the payload after the
// first quarter over the time the slowest receiver took.
func MulticastThroughput(e *env.Env, c Config, size, count int, m Multicaster) (t Throughput, err error) {
	defer named(&err, "multicast throughput")
	got := make([]int, count)
	done := make([]clock.Time, count)
	var serr error
	_, res, err := runIn(e, c, func(cl *Cluster) {
		send, recv, err := m(cl, func(i int) []byte { return pattern(size, i) }, func(node, i int, now clock.Time) {
			got[i]++
			done[i] = max(done[i], now)
		})
		if err != nil {
			serr = err
			return
		}
		for _, n := range cl.Nodes[1:] {
			n.Host.Run(func(s *lcilib.Seq) { recv(n.ID, s, count) })
		}
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range count {
				send(s, i)
			}
		})
	})
	if serr != nil {
		return t, serr
	}
	if err != nil {
		return t, err
	}
	for i, n := range got {
		if n != c.Nodes-1 {
			return t, fmt.Errorf("message %d reached %d of %d nodes", i, n, c.Nodes-1)
		}
	}
	t = steady(done, size)
	t.Run = res
	return t, nil
}

// LCIMulticast is the LCI level: multicast of the message (fragmented at
// the MTU), the receivers copying each packet out; with fetchAdd, each
// multicast is preceded by a fetch-and-add on the last node (Orca's row:
// «The LCI and Panda-MT Numbers for Orca also Include a Fetch-and-Add
// Request»).
func LCIMulticast(fetchAdd bool) Multicaster {
	return func(cl *Cluster, msg func(int) []byte, arrived func(int, int, clock.Time)) (func(*lcilib.Seq, int), func(int, *lcilib.Seq, int), error) {
		mtu := cl.Config.FirmwareConfig().MTU
		seq := len(cl.Nodes) - 1
		send := func(s *lcilib.Seq, i int) {
			if fetchAdd {
				s.FetchAndAdd(seq, 1)
			}
			s.MulticastMessage(msg(i), uint32(i))
		}
		recv := func(node int, s *lcilib.Seq, total int) {
			for i := range total {
				data := msg(i)
				per := max(1, (len(data)+mtu-1)/mtu)
				for k := range per {
					s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
						checkData(s, m, data[k*mtu:min((k+1)*mtu, len(data))])
						s.Compute(s.Host().CopyCycles(len(m.Data), false))
						if k == per-1 {
							arrived(node, i, s.Now())
						}
					})
				}
			}
		}
		return send, recv, nil
	}
}

// PandaMulticast is the Panda level: Panda-ST's unordered broadcast, or
// with ordered Panda-MT's totally ordered broadcast (the last node is the
// sequencer).
func PandaMulticast(cfg panda.Config, ordered bool) Multicaster {
	return func(cl *Cluster, msg func(int) []byte, arrived func(int, int, clock.Time)) (func(*lcilib.Seq, int), func(int, *lcilib.Seq, int), error) {
		cfg.MT = ordered
		cfg.Sequencer = len(cl.Nodes) - 1
		pn, err := PandaNodes(cl, cfg)
		if err != nil {
			return nil, nil, err
		}
		got := make([]int, len(cl.Nodes))
		for k := range pn {
			pn[k].Handle(pandaPort, func(s *lcilib.Seq, m *panda.Message) {
				checkPanda(s, m, msg(got[k]))
				if k != 0 {
					arrived(k, got[k], s.Now())
				}
				got[k]++
			})
		}
		send := func(s *lcilib.Seq, i int) {
			if ordered {
				pn[0].OrderedBroadcast(s, pandaPort, msg(i))
			} else {
				pn[0].Broadcast(s, pandaPort, msg(i))
			}
		}
		recv := func(node int, s *lcilib.Seq, total int) {
			pn[node].WaitUntil(s, func() bool { return got[node] == total })
		}
		return send, recv, nil
	}
}

// MPIBcast is the MPI level: MPI_Bcast from rank 0 (mc.Bcast: over
// Panda's broadcast, or MPICH's binomial tree).
func MPIBcast(pc panda.Config, mc mpi.Config) Multicaster {
	return func(cl *Cluster, msg func(int) []byte, arrived func(int, int, clock.Time)) (func(*lcilib.Seq, int), func(int, *lcilib.Seq, int), error) {
		cm, err := MPINodes(cl, pc, mc)
		if err != nil {
			return nil, nil, err
		}
		send := func(s *lcilib.Seq, i int) { cm[0].Bcast(s, 0, msg(i)) }
		recv := func(node int, s *lcilib.Seq, total int) {
			for i := range total {
				d := cm[node].Bcast(s, 0, nil)
				checkBytes(s, "mpi bcast", d, msg(i))
				arrived(node, i, s.Now())
			}
		}
		return send, recv, nil
	}
}
