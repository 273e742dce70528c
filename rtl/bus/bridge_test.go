package bus_test

import (
	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/vtest"

	_ "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// memBusConfig is the test memory bus: 66.67 MHz (15 ns, two edges per
// PCI cycle), 8 bytes wide, one arbitration cycle, one address cycle, no
// decode or turnaround wait, no idle cycle, bursts of one 32-byte line.
func memBusConfig() bus.Config {
	clk, _ := clock.Ratio(200_000_000, 3)
	return bus.Config{Name: "membus", Clock: clk, WidthBytes: 8, ArbCycles: 1, AddrCycles: 1,
		DecodeCycles: 0, ReadTurnaround: 0, IdleCycles: 0, MaxBurstBytes: 32}
}

// op is one request of a test master and when it finished.
type op struct {
	Req  *mem.Req
	Data []byte
	// At is the master's earliest cycle to issue it; it also waits for
	// the previous op to finish.
	At clock.Cycle
	// Done is the master's cycle in which it popped the last read beat or
	// the completion, or pushed the last beat of a posted write.
	Done clock.Cycle
	Got  []byte
}

// runMaster drives ops in order on a bus master channel.
func runMaster(e *env.Env, b *bus.Bus, name string, ops []*op) {
	ch, err := b.AddMaster(name)
	Expect(err).NotTo(HaveOccurred())
	w := b.Config().WidthBytes
	clk := b.Config().Clock
	i, k := 0, 0 // current op, next beat of it
	var beats []mem.Beat
	waiting := false
	a := vtest.NewAgent(e, name, clk, func(now clock.Time, c clock.Cycle) bool {
		if i >= len(ops) {
			return false
		}
		o := ops[i]
		if beat, ok := ch.Up.Pop(now); ok {
			o.Got = append(o.Got, beat.Data...)
			if beat.Last {
				o.Done = c
				i, k, beats, waiting = i+1, 0, nil, false
				return i < len(ops)
			}
		}
		if waiting || c < o.At {
			return true
		}
		if beats == nil {
			o.Req.Master = name
			if o.Req.Op == mem.Write {
				beats = mem.WriteBeats(o.Req, o.Data, w)
			} else {
				beats = []mem.Beat{{Req: o.Req, First: true, Last: true}}
			}
		}
		if k < len(beats) && ch.Down.CanPush(now) {
			ch.Down.Push(now, beats[k])
			k++
			if k == len(beats) {
				if o.Req.Op == mem.Write && o.Req.Posted {
					o.Done = c
					i, k, beats = i+1, 0, nil
				} else {
					waiting = true
				}
			}
		}
		return true
	})
	ch.ConnectMaster(a)
	a.Start()
}
