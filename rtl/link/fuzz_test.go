package link_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
)

// maxFlitData is the largest payload of a flit FuzzLink sends.
const maxFlitData = 16

// arrival is a flit as the receiver popped it.
type arrival struct {
	Cycle clock.Cycle
	Flit  link.Flit
}

// linkRun sends flits from side A of a link built from cfg (traced or not)
// and pops them at side B, one per VC per cycle; it returns what arrived
// on each VC and the direction's counters. The direction has the fault
// plan; want is how many flits must arrive (those of the packets it does
// not drop).
func linkRun(t *testing.T, cfg link.Config, traced bool, seed uint64, flits []link.Flit, plan link.FaultPlan, want int) ([][]arrival, link.Stats) {
	t.Helper()
	var rec *trace.Recorder
	if traced {
		rec = trace.NewRecorder()
	}
	e := env.New(env.Options{Seed: seed, Trace: rec, TimeLimit: 10 * clock.Millisecond})
	l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).WithFaults(link.A, plan).Build("L")
	if err != nil {
		t.Fatalf("%+v: %v", cfg, err)
	}
	d, clk := l.From(link.A), cfg.Clock
	got := make([][]arrival, cfg.VCs)
	i, n := 0, 0
	snd := vtest.NewAgent(e, "Snd", clk, func(now clock.Time, _ clock.Cycle) bool {
		if i < len(flits) && d.Tx(int(flits[i].VC)).CanPush(now) {
			d.Tx(int(flits[i].VC)).Push(now, flits[i])
			i++
		}
		return i < len(flits)
	})
	rcv := vtest.NewAgent(e, "Rcv", clk, func(now clock.Time, c clock.Cycle) bool {
		for vc := range cfg.VCs {
			if f, ok := d.Rx(vc).Pop(now); ok {
				got[vc] = append(got[vc], arrival{c, f})
				n++
			}
		}
		return n < want
	})
	d.Connect(snd, rcv)
	snd.Start()
	rcv.Start()
	res, err := e.Run()
	if err != nil {
		t.Fatalf("%+v, %d flits: %v", cfg, len(flits), err)
	}
	if res.Stopped || n != want {
		t.Fatalf("%+v: %d of %d flits arrived by %v", cfg, n, want, res.End)
	}
	return got, d.Stats()
}

// FuzzLink sends any stream of well-formed packets (any VCs, 1 to 6 flits
// of 0 to 16 bytes each) over a link of any small configuration: credits
// (private or shared buffers) or STOP/GO, with or without bit errors, traced
// (the slow path that computes the CRC) or not (the fast path). Every flit
// arrives exactly once, in order on its VC; a packet arrives with the bytes
// it was sent with exactly when its tail's CRC check passes (Bad unset),
// and CRCErrors counts the bad tails; and without errors the traced and the
// untraced link deliver every flit in the same cycle. With a fault plan
// (knob 9, one VC so that packet N is the N-th head sent), its dropped
// packet never arrives and everything else does, and its corrupted packet
// (if it carries data) arrives Bad.
func FuzzLink(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0, 0}, []byte{0x04, 4, 'a', 'b', 'c', 'd', 0, 16, 'x'})
	f.Add([]byte{3, 7, 2, 1, 2, 3, 0, 0, 9}, []byte{0x0b, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 3, 'a', 'b', 'c', 1, 'z', 0x05, 2, 'q', 'r'})
	f.Add([]byte{1, 2, 0, 2, 1, 4, 20, 3}, bytes.Repeat([]byte{0x0a, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 5))
	f.Add([]byte{7, 19, 1, 7, 3, 9, 0, 0, 4}, bytes.Repeat([]byte{0x01, 0, 0x03, 5, 'h', 'e', 'l', 'l', 'o'}, 8))
	// With a fault plan: on a credit link, packet 3 dropped and 6
	// corrupted; on a STOP/GO link, packet 2 dropped.
	f.Add([]byte{3, 2, 0, 2, 1, 0, 0, 0, 1, 3, 2, 5}, bytes.Repeat([]byte{0x03, 4, 1, 2, 3, 4, 2, 9, 9}, 10))
	f.Add([]byte{3, 4, 0, 0, 0, 4, 5, 0, 1, 1, 1}, bytes.Repeat([]byte{0x05, 6, 1, 2, 3, 4, 5, 6, 1, 7, 0}, 10))
	f.Fuzz(func(t *testing.T, knobs, stream []byte) {
		k := func(i int) int {
			if i < len(knobs) {
				return int(knobs[i])
			}
			return 0
		}
		cfg := link.DefaultCredit(clock.MHz(100))
		cfg.TraceFlits = false
		cfg.BytesPerCycle = 1 + k(0)%8
		cfg.DelayCycles = k(1) % 20
		cfg.VCs = 1 + k(2)%3
		cfg.BufferFlits = 1 + k(3)%8
		cfg.CreditDelay = 1 + k(4)%4
		cfg.SharedBuffer = k(5)&8 != 0
		corrupt := k(5)&1 != 0
		if corrupt {
			cfg.CorruptProb = 0.5
		}
		if k(5)&4 != 0 {
			cfg.FlowControl, cfg.VCs, cfg.SharedBuffer = link.StopGo, 1, false
			cfg.StopAt = 16 + k(6)%32
			cfg.GoAt = cfg.StopAt / 2
			cfg.SlackBytes = cfg.MinSlack(maxFlitData) + k(7)%16
		}
		planned := k(9)&1 != 0
		if planned {
			cfg.VCs, cfg.SharedBuffer = 1, false
		}

		// The packets: a header byte (bit 0: VC, bits 1-3: flits - 1 mod
		// 6), then per flit a length byte (mod 17) and that many bytes.
		var flits []link.Flit
		for id := uint64(1); len(stream) > 0 && len(flits) < 200; id++ {
			h := stream[0]
			stream = stream[1:]
			vc, nf := int(h&1)%cfg.VCs, 1+int(h>>1&7)%6
			if cfg.VCs == 3 && h&0x80 != 0 {
				vc = 2
			}
			for s := range nf {
				var data []byte
				if len(stream) > 0 {
					m := min(int(stream[0])%(maxFlitData+1), len(stream)-1)
					data, stream = bytes.Clone(stream[1:1+m]), stream[1+m:]
				}
				flits = append(flits, link.Flit{Seq: int32(s), VC: uint8(vc), Head: s == 0, Tail: s == nf-1, Data: data, Info: &link.PacketInfo{ID: id}})
			}
		}
		// The plan: drop packet 1 + k(10) mod the packets and, with knob 9's
		// bit 1, corrupt another (packet IDs count from 1 in send order).
		var plan link.FaultPlan
		var drop, bitflip uint64
		if npk := len(flits) - 1; planned && npk >= 0 {
			npk = int(flits[npk].Packet())
			drop = uint64(1 + k(10)%npk)
			plan = link.FaultPlan{{N: int(drop), Kind: link.Drop}}
			if c := uint64(1 + k(11)%npk); k(9)&2 != 0 && c != drop {
				bitflip = c
				plan = append(plan, link.Fault{N: int(c), Kind: link.Corrupt})
			}
		}
		sent := make([][]link.Flit, cfg.VCs)
		hasData := map[uint64]bool{} // lookup only
		for _, x := range flits {
			if x.Packet() != drop {
				sent[x.VC] = append(sent[x.VC], x)
			}
			hasData[x.Packet()] = hasData[x.Packet()] || len(x.Data) > 0
		}
		want := 0
		for _, xs := range sent {
			want += len(xs)
		}

		traced := k(5)&2 != 0
		got, st := linkRun(t, cfg, traced || corrupt, uint64(k(8)), flits, plan, want)
		bad := uint64(0)
		for vc := range cfg.VCs {
			if len(got[vc]) != len(sent[vc]) {
				t.Fatalf("VC %d: %d flits sent, %d arrived", vc, len(sent[vc]), len(got[vc]))
			}
			intact := true
			for j, a := range got[vc] {
				s, r := sent[vc][j], a.Flit
				if r.Packet() != s.Packet() || r.Seq != s.Seq || r.Head != s.Head || r.Tail != s.Tail || int(r.VC) != vc {
					t.Fatalf("VC %d flit %d: sent %v, got %v", vc, j, s, r)
				}
				if r.Head {
					intact = true
				}
				intact = intact && bytes.Equal(r.Data, s.Data)
				if r.Tail {
					if r.Bad == intact {
						t.Fatalf("VC %d packet %d: intact %v but Bad %v (corrupt %v)", vc, r.Packet(), intact, r.Bad, corrupt)
					}
					if r.Bad {
						bad++
					}
					if r.Packet() == bitflip && hasData[bitflip] && !r.Bad {
						t.Fatalf("planned corruption of packet %d not detected", bitflip)
					}
				} else if r.Bad {
					t.Fatalf("VC %d: Bad on a flit that is not a tail: %v", vc, r)
				}
			}
		}
		if st.CRCErrors != bad {
			t.Fatalf("%d bad tails, CRCErrors %d", bad, st.CRCErrors)
		}
		if wantDrop := min(drop, 1); st.Dropped != wantDrop {
			t.Fatalf("plan %v: Dropped %d, want %d", plan, st.Dropped, wantDrop)
		}
		if corrupt {
			return
		}
		other, _ := linkRun(t, cfg, !traced, uint64(k(8)), flits, plan, want)
		cycles := func(a [][]arrival) [][]clock.Cycle {
			out := make([][]clock.Cycle, len(a))
			for vc, xs := range a {
				for _, x := range xs {
					out[vc] = append(out[vc], x.Cycle)
				}
			}
			return out
		}
		if d := cmp.Diff(cycles(got), cycles(other)); d != "" {
			t.Fatalf("traced %v and traced %v deliver in different cycles (%s, %d flits):\n%s", traced, !traced, fmt.Sprint(cfg.FlowControl), len(flits), d)
		}
	})
}
