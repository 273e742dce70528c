package smptb_test

import (
	"testing"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/smptb"
)

// BenchmarkAlphaServerNode runs the lock spec's program on the 4-CPU
// AlphaServer 2100 4/233 node (200 rounds per CPU of a counter increment
// under the LL/SC spin lock, untraced) and reports simulated microseconds
// per wall-clock second; building the node is not timed.
func BenchmarkAlphaServerNode(b *testing.B) {
	const rounds = 200
	var sim clock.Time
	for b.Loop() {
		b.StopTimer()
		e := env.New(env.Options{Seed: 1})
		n, err := smptb.MakeBuilder().WithEnv(e).Build("N")
		if err != nil {
			b.Fatal(err)
		}
		lock := smptb.Lock{Addr: lockAddr, Backoff: backoff}
		for i, c := range n.CPUs {
			c.Run(cpu.Go(smptb.CounterProgram(i, lock, counterAddr, rounds, 20, nil, nil)))
		}
		b.StartTimer()
		res, err := e.Run()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		v, _ := n.Memory().Storage().Bytes(counterAddr, 4)
		if int(v[0])|int(v[1])<<8 != 4*rounds {
			b.Fatalf("counter %v, want %d", v, 4*rounds)
		}
		n.Close()
		sim += res.End
		b.StartTimer()
	}
	b.ReportMetric(float64(sim)/float64(clock.Microsecond)/b.Elapsed().Seconds(), "sim-µs/s")
}
