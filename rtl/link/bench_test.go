package link_test

import (
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/vtest"
)

// BenchmarkLink streams 10000 one-flit packets over a credit link (2 VCs,
// 4-cycle wire) and reports simulated link cycles per second.
func BenchmarkLink(b *testing.B) {
	clk := clock.MHz(100)
	const packets = 10_000
	var cycles uint64
	for b.Loop() {
		e := env.New(env.Options{})
		cfg := link.DefaultCredit(clk)
		cfg.BytesPerCycle, cfg.DelayCycles, cfg.VCs, cfg.BufferFlits, cfg.TraceFlits = 8, 4, 2, 8, false
		l, err := link.MakeBuilder().WithEnv(e).WithConfig(cfg).Build("L")
		if err != nil {
			b.Fatal(err)
		}
		d := l.From(link.A)
		sent, got := 0, 0
		data := make([]byte, 8)
		snd := vtest.NewAgent(e, "S", clk, func(now clock.Time, c clock.Cycle) bool {
			vc := sent % 2
			if sent < packets && d.Tx(vc).CanPush(now) {
				d.Tx(vc).Push(now, link.Flit{VC: uint8(vc), Head: true, Tail: true, Data: data, Info: &link.PacketInfo{ID: uint64(sent)}})
				sent++
			}
			return sent < packets
		})
		rcv := vtest.NewAgent(e, "R", clk, func(now clock.Time, c clock.Cycle) bool {
			for vc := range 2 {
				if _, ok := d.Rx(vc).Pop(now); ok {
					got++
				}
			}
			return got < packets
		})
		d.Connect(snd, rcv)
		snd.Start()
		rcv.Start()
		res, err := e.Run()
		if err != nil || got != packets {
			b.Fatal(err, got)
		}
		cycles += uint64(clk.CycleAt(res.End))
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}
