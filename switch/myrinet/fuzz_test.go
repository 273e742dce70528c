package myrinet_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/myrinet"
	"github.com/nisim/nisim/verify/vtest"
)

// routeNet is FuzzRoute's network: a host on input 0 of switch S0, whose
// outputs 1 and 2 lead to sinks and output 3 to input 0 of switch S1, whose
// outputs 0 to 2 lead to sinks (S0's output 0 and S1's output 3 lead
// nowhere). Sink j is S0 output j+1 for j < 2, S1 output j-2 after.
type routeNet struct {
	host  *link.Dir
	sinks []*link.Dir
}

func buildRouteNet(t *testing.T, e *env.Env, p myrinet.Platform) routeNet {
	clk := p.Link.Clock
	mk := func(name string) *link.Link {
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(p.Link).Build(name)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	var sw [2]*myrinet.Switch
	for i := range sw {
		s, err := myrinet.MakeBuilder().WithEnv(e).WithClock(clk).WithPorts(4).Build(fmt.Sprintf("S%d", i))
		if err != nil {
			t.Fatal(err)
		}
		sw[i] = s
	}
	var n routeNet
	in := mk("H")
	sw[0].ConnectInput(0, in.From(link.A))
	n.host = in.From(link.A)
	for _, o := range []struct{ s, p int }{{0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}} {
		l := mk(fmt.Sprintf("S%dOut%d", o.s, o.p))
		sw[o.s].ConnectOutput(o.p, l.From(link.A))
		n.sinks = append(n.sinks, l.From(link.A))
	}
	mid := mk("S0Out3")
	sw[0].ConnectOutput(3, mid.From(link.A))
	sw[1].ConnectInput(0, mid.From(link.A))
	return n
}

// sinkOf returns the sink a route leads to and the route bytes left when
// the packet gets there, or -1 and the switch (0 or 1) that must discard
// it.
func sinkOf(route []byte) (sink, discardAt int, rest []byte) {
	switch {
	case len(route) == 0 || route[0] == 0 || route[0] > 3:
		return -1, 0, nil
	case route[0] < 3:
		return int(route[0]) - 1, -1, route[1:]
	case len(route) == 1 || route[1] > 2:
		return -1, 1, nil
	}
	return 2 + int(route[1]), -1, route[2:]
}

// FuzzRoute sends packets with any source routes (the bytes each switch
// reads and strips, Myrinet's header) and any lengths through two cut-
// through switches with STOP/GO links. A packet whose route names a
// connected output at each switch reaches the sink it names, intact, in
// order, with the route bytes it has not used; any other is discarded by
// the switch that cannot route it, which reports it once (myri.route); the
// run ends on its own and no other checker fires.
func FuzzRoute(f *testing.F) {
	f.Add(false, []byte{0x01, 0x01, 0x12, 0x03, 0x01, 0x11, 0x03, 0x02, 0x09})
	f.Add(true, []byte{0x21, 0x03, 0x00, 0x31, 0x00, 0x40, 0x05, 0x03})
	f.Add(false, []byte{0x23, 0x03, 0x02, 0xff, 0x11, 0x02, 0x01, 0x03})
	f.Fuzz(func(t *testing.T, p3 bool, stream []byte) {
		p := myrinet.PPro()
		if p3 {
			p = myrinet.P3()
		}
		e := env.New(env.Options{Seed: 1, TimeLimit: 10 * clock.Millisecond})
		n := buildRouteNet(t, e, p)

		// Packets: a byte (low nibble: route length 0..3 (mod 4), high
		// nibble: flits 1..16), then the route.
		type packet struct {
			id     uint64
			flits  int
			route  []byte
			sink   int
			at     int
			remain []byte
		}
		var pks []packet
		var flits []link.Flit
		want := make([][]uint64, len(n.sinks))
		discards := 0
		for id := uint64(1); len(stream) > 0 && len(pks) < 40; id++ {
			h := stream[0]
			stream = stream[1:]
			rl := min(int(h&3), len(stream))
			route := slices.Clone(stream[:rl])
			stream = stream[rl:]
			pk := packet{id: id, flits: 1 + int(h>>4), route: route}
			pk.sink, pk.at, pk.remain = sinkOf(route)
			if pk.sink >= 0 {
				want[pk.sink] = append(want[pk.sink], id)
			} else {
				discards++
			}
			pks = append(pks, pk)
			for s := range pk.flits {
				fl := link.Flit{Seq: int32(s), Head: s == 0, Tail: s == pk.flits-1, Size: int32(p.FlitBytes), Data: []byte{byte(id), byte(s)}, Info: &link.PacketInfo{ID: id}}
				if s == 0 {
					fl.SetRoute(slices.Clone(route))
				}
				flits = append(flits, fl)
			}
		}
		clk := p.Link.Clock
		sent := 0
		host := vtest.NewAgent(e, "Host", clk, func(now clock.Time, _ clock.Cycle) bool {
			if sent < len(flits) && n.host.CanSend(now, 0) {
				n.host.Send(now, &flits[sent])
				sent++
			}
			return sent < len(flits)
		})
		n.host.SetSender(host)
		host.Start()
		got := make([][]link.Flit, len(n.sinks))
		for j, d := range n.sinks {
			j, d := j, d
			a := vtest.NewAgent(e, fmt.Sprintf("Sink%d", j), clk, func(now clock.Time, _ clock.Cycle) bool {
				if f, ok := d.Rx(0).Pop(now); ok {
					got[j] = append(got[j], f)
				}
				return d.Rx(0).Len() > 0
			})
			d.SetReceiver(a)
			a.Start()
		}
		res, _ := e.Run()
		if res.Stopped {
			t.Fatalf("%d packets: still running at %v", len(pks), res.End)
		}
		reported := 0
		for _, v := range e.Monitor.Violations() {
			if v.Check != "myri.route" {
				t.Fatalf("%d packets: %v", len(pks), v)
			}
			reported++
		}
		if reported != discards {
			t.Fatalf("%d packets cannot be routed, %d reported: %v", discards, reported, e.Monitor.Violations())
		}
		byID := map[uint64]packet{}
		for _, pk := range pks {
			byID[pk.id] = pk
		}
		for j := range n.sinks {
			var ids []uint64
			for k, f := range got[j] {
				pk := byID[f.Packet()]
				if pk.sink != j {
					t.Fatalf("packet %d (route %v) reached sink %d, want %d", f.Packet(), pk.route, j, pk.sink)
				}
				if f.Data[0] != byte(f.Packet()) || f.Data[1] != byte(f.Seq) || f.Bad {
					t.Fatalf("sink %d flit %d: %v data %v", j, k, f, f.Data)
				}
				if f.Head {
					if !slices.Equal(f.Route(), pk.remain) && !(len(f.Route()) == 0 && len(pk.remain) == 0) {
						t.Fatalf("packet %d (route %v) arrived with route %v, want %v", f.Packet(), pk.route, f.Route(), pk.remain)
					}
					ids = append(ids, f.Packet())
				}
			}
			if !slices.Equal(ids, want[j]) {
				t.Fatalf("sink %d got packets %v, want %v", j, ids, want[j])
			}
			total := 0
			for _, id := range want[j] {
				total += byID[id].flits
			}
			if len(got[j]) != total {
				t.Fatalf("sink %d got %d flits, want %d", j, len(got[j]), total)
			}
		}
	})
}
