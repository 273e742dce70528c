package fore_test

import (
	"encoding/binary"
	"testing"

	"github.com/nisim/nisim/hib/fore"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"
)

// benchDriver is a TC master that runs one access at a time, chosen by
// next when the previous one completes (nil: idle this cycle).
type benchDriver struct {
	ch    *mem.Channel
	beats []mem.Beat
	k     int
	wait  bool
	got   []byte
	next  func(c clock.Cycle, got []byte) *mem.Req
	data  []byte
}

func (d *benchDriver) step(now clock.Time, c clock.Cycle) bool {
	if b, ok := d.ch.Up.Pop(now); ok {
		d.got = append(d.got, b.Data...)
		if b.Last {
			d.wait = false
		}
	}
	if d.wait {
		return true
	}
	if d.beats == nil {
		req := d.next(c, d.got)
		d.got = d.got[:0]
		if req == nil {
			return true
		}
		if req.Op == mem.Write {
			d.beats = mem.WriteBeats(req, d.data, 4)
		} else {
			d.beats = []mem.Beat{{Req: req, First: true, Last: true}}
		}
		d.k = 0
	}
	if d.ch.Down.CanPush(now) {
		d.ch.Down.Push(now, d.beats[d.k])
		d.k++
		if d.k == len(d.beats) {
			d.wait = d.beats[0].Req.Op == mem.Read
			d.beats = nil
		}
	}
	return true
}

// BenchmarkDirectCells sends cells from one board to another over a
// direct link, the sender writing a cell every 80 TC cycles (3.2 µs, a
// little more than the link's 3.03 µs a cell) and the receiver polling
// STATUS and reading each cell as a 56-byte burst; it reports simulated
// cells per wall second.
func BenchmarkDirectCells(b *testing.B) {
	const cells = 2000
	for range b.N {
		e := env.New(env.Options{Seed: 1})
		tc, boards, err := buildBoards(e, unitConfig(), []int{0, 1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := connectDirect(e, boards[0], boards[1]); err != nil {
			b.Fatal(err)
		}
		h, _ := testHeader.Encode()
		cell := make([]byte, fore.CellBytes)
		copy(cell, h[:4])
		sent, read := 0, 0
		w := &benchDriver{data: cell, next: func(c clock.Cycle, _ []byte) *mem.Req {
			if sent == cells || c < clock.Cycle(80*sent) {
				return nil
			}
			sent++
			return &mem.Req{Op: mem.Write, Addr: base + fore.TxPort, Len: fore.CellBytes, Posted: true, Master: "W"}
		}}
		polled := false
		r := &benchDriver{next: func(_ clock.Cycle, got []byte) *mem.Req {
			if polled && len(got) == 4 && binary.LittleEndian.Uint32(got)&fore.StatusRxMask > 0 {
				polled = false
				read++
				return &mem.Req{Op: mem.Read, Addr: base + fore.WindowBytes + fore.RxPort, Len: fore.CellBytes, Master: "R"}
			}
			if read == cells {
				return nil
			}
			polled = true
			return &mem.Req{Op: mem.Read, Addr: base + fore.WindowBytes + fore.RegStatus, Len: 4, Master: "R"}
		}}
		for _, d := range []*benchDriver{w, r} {
			if d.ch, err = tc.AddMaster("M"); err != nil {
				b.Fatal(err)
			}
			a := vtest.NewAgent(e, "M", tc.Config().Clock, d.step)
			d.ch.ConnectMaster(a)
			stop := d
			a.Step = func(now clock.Time, c clock.Cycle) bool {
				stop.step(now, c)
				return !(sent == cells && read == cells)
			}
			a.Start()
		}
		if _, err := e.Run(); err != nil {
			b.Fatal(err)
		}
		if got := boards[1].Counters().RxCells; got != cells {
			b.Fatalf("%d cells received, want %d", got, cells)
		}
	}
	b.ReportMetric(float64(cells*b.N)/b.Elapsed().Seconds(), "cells/s")
}
