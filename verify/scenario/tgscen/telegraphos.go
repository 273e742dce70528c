// Package telegraphos holds the runnable experiments of the Telegraphos
// model (hib/telegraphos, host/tglib), one scenario per experiment of
// telegraphos.txt: the basic measurements of section 3.2
// (telegraphos-calibration), remote atomic operations (fetchinc), the
// producer/consumer of 2.3.5 with and without MEMORY_BARRIER (prodcons),
// page access counters (alarms), eager-update multicast (multicast), the
// inconsistencies of 2.3.2 and figure 2 with and without their remedies
// (inconsistency), randomised update-coherence stress (coherence) and the
// protection of contexts and keys (protection).
//
// Every scenario builds a cluster in the env it is given, so that --vcd and
// --trace capture that run. Scenarios that compare several clusters (two
// configurations, several seeds) run the others each in an env of their
// own with the same seed (or the next seeds) and no waveform; the report
// says which run the waveform shows. Every run, captured or not, has the
// checkers on: the watchdog, packet conservation and per-class ordering;
// a violation in any of them is returned as the run's error.
package tgscen

import (
	"encoding/binary"
	"errors"
	"fmt"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/tglib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/testbench/tgtb"
)

// Scenarios returns the Telegraphos scenarios, in the order of the paper's
// sections they follow.
func Scenarios() []*scenario.Scenario {
	const sys = "Telegraphos"
	// Typical run times: the defaults, measured once with /usr/bin/time on a
	// 2-core machine shared with other jobs, 2026-11-27 (documentation only).
	return withWaves([]*scenario.Scenario{
		CalibrationScenario().In(sys, "0.9 s"),
		FetchIncScenario().In(sys, "< 0.1 s"),
		ProdConsScenario().In(sys, "0.1 s"),
		AlarmsScenario().In(sys, "< 0.1 s"),
		MulticastScenario().In(sys, "< 0.1 s"),
		InconsistencyScenario().In(sys, "< 0.1 s"),
		CoherenceScenario().In(sys, "0.1 s"),
		ProtectionScenario().In(sys, "< 0.1 s"),
	})
}

// paper is where the quotes of the reports come from.
const paper = "telegraphos.txt"

// config returns the cluster configuration of n nodes with HIBs of the
// given version: the paper's DEC 3000 model 300 workstations with
// Telegraphos I HIBs (DefaultCluster), or with Telegraphos II's.
func config(n, version int) tgtb.ClusterConfig {
	c := tgtb.DefaultCluster(n)
	if version == 2 {
		c.HIB = tg.TelegraphosII()
	}
	return c
}

// build creates the cluster c in e with a process on every node: node i's
// process uses context i with key 0x100+i, which the OS (this function)
// installs on Telegraphos II HIBs.
func build(e *env.Env, c tgtb.ClusterConfig) (*tgtb.Cluster, []*tglib.Proc, error) {
	cl, err := tgtb.BuildCluster(e, c)
	if err != nil {
		return nil, nil, err
	}
	procs := make([]*tglib.Proc, c.Nodes)
	for i := range c.Nodes {
		procs[i] = cl.Proc(i, i, procKey(i))
		if c.HIB.Version == 2 {
			if err := cl.Nodes[i].HIB.SetContextKey(i, procKey(i)); err != nil {
				return nil, nil, err
			}
		}
	}
	return cl, procs, nil
}

// procKey is the key of node i's process's context.
func procKey(i int) uint16 { return uint16(0x100 + i) }

// run runs e to the end and returns its result and every checker finding:
// the env's own (checkers reporting during the run, the completion
// watchdog) and the cluster's packet conservation, which can only judge
// once the run is over. A run stopped by a time limit still has packets on
// their way, so conservation is not judged then; the report's "completed"
// check fails instead.
func run(e *env.Env, cl *tgtb.Cluster) (env.Result, error) {
	res, err := e.Run()
	return finish(e, cl, res, err)
}

// finish adds the packet conservation check to a finished run (unless it
// was cut off).
func finish(e *env.Env, cl *tgtb.Cluster, res env.Result, err error) (env.Result, error) {
	if res.Stopped {
		return res, err
	}
	before := e.Monitor.Count()
	cl.Packets.Finish(res.End)
	if e.Monitor.Count() > before {
		// Monitor.Err lists every violation (the earlier ones again if
		// there were any).
		err = errors.Join(err, e.Monitor.Err())
	}
	return res, err
}

// side is a run of a scenario beside the one captured in the given env: a
// fresh env with the given seed and no waveform or trace.
func side(seed uint64) *env.Env { return env.New(env.Options{Seed: seed}) }

// label wraps a side run's error with what the run was.
func label(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// completed adds the check that the captured run ran to its end.
func completed(rep *scenario.Report, res env.Result) {
	rep.Check("completed", !res.Stopped, "the run ended with no event left (not cut off by --time-limit) at %v", res.End)
}

// word reads word off of node's shared memory, as the testbench (not the
// simulated system) sees it.
func word(cl *tgtb.Cluster, node int, off uint32) uint32 {
	var b [tg.WordBytes]byte
	if err := cl.Nodes[node].Shared.Storage().Read(uint64(off), b[:]); err != nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b[:])
}

// us formats a duration in microseconds.
func us(t clock.Time) string { return fmt.Sprintf("%.3f µs", usf(t)) }

// usf is a duration in microseconds.
func usf(t clock.Time) float64 { return float64(t) / float64(clock.Microsecond) }

// errPct is the model's error relative to the paper's figure, in percent.
func errPct(model, paper clock.Time) float64 {
	return 100 * (float64(model) - float64(paper)) / float64(paper)
}

// queuedOpBytes is what one processor operation a scenario queues before
// the run costs (its program step, the bus and HIB transactions it
// becomes, its record for the checks). calibrated: 16 nodes x 100000
// fetch-and-increments, 1.6 million operations, took 2 GB before the first
// cycle (the fuzz find that bounded telegraphos-fetchinc): 1342 B each.
const queuedOpBytes = 1342

// checkQueued bounds ops queued operations (what describes them) by
// scenario.MemoryBudget at queuedOpBytes each: 800105 operations.
func checkQueued(key string, ops int64, what string) error {
	return scenario.CheckBudget(key, ops, queuedOpBytes, what)
}

// nodes returns 0..n-1.
func nodes(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// compress drops repeats: 3,3,2,2,3 -> 3,2,3.
func compress(v []uint32) []uint32 {
	var out []uint32
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// versionName names a HIB version.
func versionName(v int) string {
	if v == 2 {
		return "Telegraphos II"
	}
	return "Telegraphos I"
}
