package lcitb

import (
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/orca"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// OrcaNodes builds every node's Panda-MT and Orca runtime on cl, with the
// objects; the sequencer of ordered broadcasts is the last node.
func OrcaNodes(cl *Cluster, pc panda.Config, costs orca.Costs, objects []orca.Object) ([]*orca.Node, error) {
	pc.MT = true
	pc.Sequencer = len(cl.Nodes) - 1
	pn, err := PandaNodes(cl, pc)
	if err != nil {
		return nil, err
	}
	var out []*orca.Node
	for _, p := range pn {
		o, err := orca.New(p, costs, objects)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// OrcaRoundTrip is Orca's level of Table V: «the cost of a null operation
// on a remote, non-replicated object, which results in an RPC». Node 0
// reads an object node 1 owns.
func OrcaRoundTrip(e *env.Env, c Config, pc panda.Config, costs orca.Costs, b PPSBench) (_ clock.Time, err error) {
	defer named(&err, "orca round trip")
	t, _, err := roundTrips(e, c, b, func(cl *Cluster) (func(*lcilib.Seq, int), func(*lcilib.Seq, int), error) {
		on, err := OrcaNodes(cl, pc, costs, []orca.Object{{Owner: 1}})
		if err != nil {
			return nil, nil, err
		}
		client := func(s *lcilib.Seq, i int) {
			if v := on[0].Invoke(s, 0, orca.OpRead, 0, nil); v != 0 {
				s.Host().Report(s.Now(), "orca.result", "null operation %d returned %d", i, v)
			}
		}
		server := func(s *lcilib.Seq, total int) {
			on[1].Serve(s, func() bool { return on[1].Served == uint64(total) })
		}
		return client, server, nil
	})
	return t, err
}

// OrcaThroughput is Orca's one-way throughput: node 0 performs b.Stream
// operations with a b.StreamSize-byte parameter (OpPut) on an object node
// 1 owns, one after the other (each an RPC with an 8-byte reply).
func OrcaThroughput(e *env.Env, c Config, pc panda.Config, costs orca.Costs, b PPSBench) (_ Throughput, err error) {
	defer named(&err, "orca throughput")
	return oneWay(e, c, b, func(cl *Cluster, done func(int, clock.Time)) (func(*lcilib.Seq, int), func(*lcilib.Seq), error) {
		on, err := OrcaNodes(cl, pc, costs, []orca.Object{{Owner: 1}})
		if err != nil {
			return nil, nil, err
		}
		send := func(s *lcilib.Seq, i int) {
			if v := on[0].Invoke(s, 0, orca.OpPut, 0, pattern(b.StreamSize, i)); v != int64(b.StreamSize) {
				s.Host().Report(s.Now(), "orca.result", "put %d returned %d", i, v)
			}
			done(i, s.Now())
		}
		recv := func(s *lcilib.Seq) {
			on[1].Serve(s, func() bool { return on[1].Served == uint64(b.Stream) })
		}
		return send, recv, nil
	})
}

// OrcaMulticast is Orca's level of Table VI: «an operation on a replicated
// object (which results in an F&A operation followed by a broadcast)»,
// node 0 updating (OpPut of the message) a replicated object; a node's
// arrival is when it has applied the update.
func OrcaMulticast(pc panda.Config, costs orca.Costs) Multicaster {
	return func(cl *Cluster, msg func(int) []byte, arrived func(int, int, clock.Time)) (func(*lcilib.Seq, int), func(int, *lcilib.Seq, int), error) {
		on, err := OrcaNodes(cl, pc, costs, []orca.Object{{Replicated: true}})
		if err != nil {
			return nil, nil, err
		}
		got := make([]int, len(cl.Nodes))
		for k := range on {
			on[k].Applied = func(s *lcilib.Seq, _ int, _ int, _ uint32) {
				checkBytes(s, "orca replica", on[k].Data(0), msg(got[k]))
				if k != 0 {
					arrived(k, got[k], s.Now())
				}
				got[k]++
			}
		}
		send := func(s *lcilib.Seq, i int) { on[0].Invoke(s, 0, orca.OpPut, 0, msg(i)) }
		recv := func(node int, s *lcilib.Seq, total int) {
			on[node].Serve(s, func() bool { return got[node] == total })
		}
		return send, recv, nil
	}
}
