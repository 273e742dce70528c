package rpc_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/host/rpc"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/switch/atm"
)

// benchCalls runs b.N calls of words argument words on the rig (no trace):
// simulated RPCs per wall second, the RPC layer's share of a testbench's
// cost (its spin loops dominate: every poll is a costed step).
func benchCalls(b *testing.B, words int) {
	RegisterTestingT(b)
	r := buildRig(env.New(env.Options{Seed: 1}), rpc.Defaults(), atm.LinkConfig())
	calls := make([]*call, b.N)
	for i := range calls {
		calls[i] = &call{proc: procSum, args: seq(words, uint32(i))}
	}
	b.ResetTimer()
	r.run(calls...)
	b.StopTimer()
	for _, c := range calls {
		if c.err != nil || c.result != sum(c.args) {
			b.Fatalf("call: result %d err %v, want %d", c.result, c.err, sum(c.args))
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkRPCSimple is Simple calls (4 arguments, one cell).
func BenchmarkRPCSimple(b *testing.B) { benchCalls(b, 4) }

// BenchmarkRPCMW32 is MW-32 calls (4 cells and a mask).
func BenchmarkRPCMW32(b *testing.B) { benchCalls(b, 32) }
