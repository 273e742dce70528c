package lcitb

import (
	"fmt"
	"github.com/nisim/nisim/host/lcilib"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Broadcast measures section 5.4's broadcast latency in e (nil: a fresh
// one): «the time it takes to reach the last receiver». Node 0 multicasts
// b.Warm + b.Iters messages of b.Size bytes (one packet) to all c.Nodes
// nodes, one at a time: the next leaves when every node has the previous
// one. Receivers do not copy («the latency tests without»). Every node
// must receive every multicast, with its data intact, in order.
func Broadcast(e *env.Env, c Config, b Bench) (_ clock.Time, res env.Result, err error) {
	defer named(&err, "broadcast latency")
	if err := b.validate(c.FirmwareConfig().MTU, false); err != nil {
		return 0, env.Result{}, err
	}
	total := b.Warm + b.Iters
	got := make([]int, total)
	last := make([]clock.Time, total)
	var sum clock.Time
	_, res, err = runIn(e, c, func(cl *Cluster) {
		root := cl.Nodes[0].Host
		for _, n := range cl.Nodes[1:] {
			n.Host.Run(func(s *lcilib.Seq) {
				for i := range total {
					s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
						checkData(s, m, pattern(b.Size, i))
						if m.Src != 0 || m.Tag != uint32(i) {
							s.Host().Report(s.Now(), "lci.mcast", "expected multicast %d from node 0, got tag %d from node %d", i, m.Tag, m.Src)
						}
						got[i]++
						last[i] = s.Now()
						if got[i] == len(cl.Nodes)-1 {
							root.CPU.Wake(s.Now())
						}
					})
				}
			})
		}
		root.Run(func(s *lcilib.Seq) {
			for i := range total {
				t0 := s.Now()
				s.Multicast(pattern(b.Size, i), uint32(i))
				s.WaitUntil(func() bool { return got[i] >= len(cl.Nodes)-1 })
				if i >= b.Warm {
					sum += last[i] - t0
				}
			}
		})
	})
	if err != nil {
		return 0, res, err
	}
	for i, n := range got {
		if n != c.Nodes-1 {
			return 0, res, fmt.Errorf("multicast %d reached %d of %d nodes", i, n, c.Nodes-1)
		}
	}
	return sum / clock.Time(b.Iters), res, nil
}

// BroadcastStream measures section 5.4's broadcast throughput in e (nil:
// a fresh one), «the sender's outgoing data rate»: node 0 multicasts
// b.Stream messages of b.Size bytes back to back; every receiver copies
// the data out when recvCopy is set («The throughput tests are with
// receiver copy»). The rate is the payload of the messages after the first
// quarter over the time the slowest receiver took to get them.
func BroadcastStream(e *env.Env, c Config, b Bench, recvCopy bool) (t Throughput, err error) {
	defer named(&err, "broadcast throughput")
	if err := b.validate(c.FirmwareConfig().MTU, true); err != nil {
		return t, err
	}
	mtu := c.FirmwareConfig().MTU
	got := make([]int, b.Stream)
	done := make([]clock.Time, b.Stream)
	_, res, err := runIn(e, c, func(cl *Cluster) {
		big := b.Size > c.Platform.L2Bytes()
		for _, n := range cl.Nodes[1:] {
			n.Host.Run(func(s *lcilib.Seq) {
				receiveStream(s, b, mtu, recvCopy, big, func(i int, now clock.Time) {
					got[i]++
					done[i] = max(done[i], now)
				})
			})
		}
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range b.Stream {
				s.MulticastMessage(pattern(b.Size, i), uint32(i))
			}
		})
	})
	if err != nil {
		return t, err
	}
	for i, n := range got {
		if n != c.Nodes-1 {
			return t, fmt.Errorf("message %d reached %d of %d nodes", i, n, c.Nodes-1)
		}
	}
	t = steady(done, b.Size)
	t.Run = res
	return t, nil
}
