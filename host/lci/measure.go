package lci

import (
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
)

// LogP are the microbenchmark results of section 5.1.3, in picoseconds.
type LogP struct {
	// Os is the time the send call occupies the host, Or the time a
	// successful poll, its upcall and the release occupy it.
	Os, Or clock.Time
	// E2E is half the round trip of a ping-pong; L = E2E - Os - Or.
	E2E, L clock.Time
	// G is the gap: the time per message of a long one-way stream.
	G clock.Time
	// FA is the latency of a remote fetch-and-add.
	FA clock.Time
}

// Bench sizes the microbenchmarks.
type Bench struct {
	// Size is the message size (16 bytes in Tables III and IV).
	Size int
	// Warm and Iters are the ping-pong round trips ignored and measured;
	// Stream the one-way stream's length.
	Warm, Iters, Stream int
}

// DefaultBench is 16-byte messages, 10 + 50 round trips, a 200-message
// stream.
func DefaultBench() Bench { return Bench{Size: 16, Warm: 10, Iters: 50, Stream: 200} }

func (b Bench) validate(mtu int) error {
	if b.Size < 0 || b.Size > mtu || b.Warm < 0 || b.Iters < 2 || b.Stream < 4 {
		return fmt.Errorf("lci bench: size %d (MTU %d), %d warm-up and %d measured round trips, stream of %d: need 0 <= size <= MTU, iters >= 2, stream >= 4",
			b.Size, mtu, b.Warm, b.Iters, b.Stream)
	}
	return nil
}

// run builds a cluster, lets setup program it, runs it to the end and
// checks that the checkers and the watchdog are satisfied.
func run(c Config, setup func(cl *Cluster)) (*Cluster, env.Result, error) {
	return runOpts(env.Options{}, c, setup)
}

// DebugTrace, if set, receives the trace of the measurements' runs.
var DebugTrace *trace.Recorder

func runOpts(o env.Options, c Config, setup func(cl *Cluster)) (*Cluster, env.Result, error) {
	if DebugTrace != nil {
		o.Trace = DebugTrace
	}
	e := env.New(o)
	cl, err := Build(e, c)
	if err != nil {
		return nil, env.Result{}, err
	}
	setup(cl)
	res, err := e.Run()
	return cl, res, err
}

// PingPong measures os, or and the end-to-end latency between nodes 0 and
// 1: node 0 sends, node 1 answers each message with one of the same size.
func PingPong(c Config, b Bench) (LogP, error) {
	var r LogP
	if err := b.validate(c.FirmwareConfig().MTU); err != nil {
		return r, err
	}
	c.Nodes = max(c.Nodes, 2)
	data := make([]byte, b.Size)
	var sends []clock.Time
	var os, or clock.Time
	_, _, err := run(c, func(cl *Cluster) {
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		total := b.Warm + b.Iters
		var round func(i int) []cpu.Op
		round = func(i int) []cpu.Op {
			if i == total {
				return nil
			}
			var t0 clock.Time
			ops := []cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool { t0 = now; sends = append(sends, now); return true }}}
			ops = append(ops, h0.Send(1, data, uint32(i), func(now clock.Time) {
				if i >= b.Warm {
					os += now - t0
				}
			})...)
			ops = append(ops, h0.Recv(nil)...)
			ops = append(ops, cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool {
				h0.CPU.Insert(round(i + 1)...)
				return true
			}})
			return ops
		}
		h0.CPU.Run(round(0)...)
		var echo func(i int) []cpu.Op
		echo = func(i int) []cpu.Op {
			if i == total {
				return nil
			}
			var hit clock.Time
			ops := h1.Recv(func(now clock.Time, m *Msg) []cpu.Op { hit = m.At; return nil })
			ops = append(ops, cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool {
				if i >= b.Warm {
					or += now - hit
				}
				h1.CPU.Insert(append(h1.Send(0, data, uint32(i), nil), echo(i+1)...)...)
				return true
			}})
			return ops
		}
		h1.CPU.Run(echo(0)...)
	})
	if err != nil {
		return r, err
	}
	if len(sends) != b.Warm+b.Iters {
		return r, fmt.Errorf("ping-pong: %d of %d round trips started", len(sends), b.Warm+b.Iters)
	}
	// The round trip is the time between two sends of node 0.
	last := len(sends) - 1
	r.E2E = (sends[last] - sends[b.Warm]) / clock.Time(2*(last-b.Warm))
	r.Os = os / clock.Time(b.Iters)
	r.Or = or / clock.Time(b.Iters)
	r.L = r.E2E - r.Os - r.Or
	return r, nil
}

// Stream measures the gap g: node 0 sends b.Stream messages back to back
// to node 1, which receives (and, with copy, copies out) each; g is the
// time per message between the receptions of the second and the last
// message (steady state, the pipeline filled).
func Stream(c Config, b Bench, recvCopy bool) (clock.Time, error) {
	if err := b.validate(c.FirmwareConfig().MTU); err != nil {
		return 0, err
	}
	c.Nodes = max(c.Nodes, 2)
	data := make([]byte, b.Size)
	var got []clock.Time
	_, _, err := run(c, func(cl *Cluster) {
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		var ops []cpu.Op
		for i := range b.Stream {
			ops = append(ops, h0.Send(1, data, uint32(i), nil)...)
		}
		h0.CPU.Run(ops...)
		var rx []cpu.Op
		for range b.Stream {
			rx = append(rx, h1.Recv(func(now clock.Time, m *Msg) []cpu.Op {
				got = append(got, now)
				if recvCopy {
					return []cpu.Op{{Kind: cpu.Compute, Cycles: h1.copyCycles(len(m.Data), true)}}
				}
				return nil
			})...)
		}
		h1.CPU.Run(rx...)
	})
	if err != nil {
		return 0, err
	}
	if len(got) != b.Stream {
		return 0, fmt.Errorf("stream: %d of %d messages received", len(got), b.Stream)
	}
	k := len(got) / 4
	return (got[len(got)-1] - got[k]) / clock.Time(len(got)-1-k), nil
}

// FetchAdd measures the fetch-and-add latency: node 0 adds to node 1's
// variable b.Warm + b.Iters times in a row; the mean of the measured ones.
func FetchAdd(c Config, b Bench) (clock.Time, error) {
	if err := b.validate(c.FirmwareConfig().MTU); err != nil {
		return 0, err
	}
	c.Nodes = max(c.Nodes, 2)
	var sum clock.Time
	var vals []uint32
	_, _, err := run(c, func(cl *Cluster) {
		h0 := cl.Nodes[0].Host
		total := b.Warm + b.Iters
		var step func(i int) []cpu.Op
		step = func(i int) []cpu.Op {
			if i == total {
				return nil
			}
			var t0 clock.Time
			ops := []cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool { t0 = now; return true }}}
			return append(ops, h0.FetchAndAdd(1, 1, func(now clock.Time, old uint32) {
				vals = append(vals, old)
				if i >= b.Warm {
					sum += now - t0
				}
				h0.CPU.Insert(step(i + 1)...)
			})...)
		}
		h0.CPU.Run(step(0)...)
	})
	if err != nil {
		return 0, err
	}
	for i, v := range vals {
		if v != uint32(i) {
			return 0, fmt.Errorf("fetch-and-add %d returned %d", i, v)
		}
	}
	if len(vals) != b.Warm+b.Iters {
		return 0, fmt.Errorf("fetch-and-add: %d of %d completed", len(vals), b.Warm+b.Iters)
	}
	return sum / clock.Time(b.Iters), nil
}

// MeasureLogP runs the ping-pong, the stream and the fetch-and-add.
func MeasureLogP(c Config, b Bench) (LogP, error) {
	r, err := PingPong(c, b)
	if err != nil {
		return r, fmt.Errorf("ping-pong: %w", err)
	}
	if r.G, err = Stream(c, b, false); err != nil {
		return r, fmt.Errorf("stream: %w", err)
	}
	if r.FA, err = FetchAdd(c, b); err != nil {
		return r, fmt.Errorf("fetch-and-add: %w", err)
	}
	return r, nil
}
