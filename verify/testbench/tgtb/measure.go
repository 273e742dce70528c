package tgtb

import (
	"github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Basics are the figures the paper measured on two workstations (section
// 3.2): the time per remote write and per remote read over a loop of many,
// and the time a stream of 100 remote writes takes.
type Basics struct {
	Write, Read, Stream100 clock.Time
	Ops                    int
}

// MeasureBasics runs the paper's measurements in e on a two-node cluster
// of c (node 0 accesses node 1's memory, TG-P3): a loop of ops remote
// writes, a fence, a loop of ops remote reads, and a stream of 100 remote
// writes, each phase starting with the network empty. It returns the
// cluster it built and the result of running e.
func MeasureBasics(e *env.Env, c ClusterConfig, ops int) (Basics, *Cluster, env.Result, error) {
	c.Nodes = 2
	b := Basics{Ops: ops}
	cl, err := BuildCluster(e, c)
	if err != nil {
		return b, nil, env.Result{}, err
	}
	var t [6]clock.Time
	mark := func(i int) cpu.Op {
		return cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { t[i] = now; return true }}
	}
	fence := []cpu.Op{{Kind: cpu.Fence}, {Kind: cpu.Load, Addr: telegraphos.RegAddr(telegraphos.RegFence), Len: telegraphos.WordBytes}}
	words := uint32(telegraphos.PageBytes / telegraphos.WordBytes)
	prog := []cpu.Op{mark(0)}
	for i := range ops {
		prog = append(prog, cpu.Op{Kind: cpu.Store, Addr: telegraphos.Addr(1, uint32(i)%words*telegraphos.WordBytes), Data: telegraphos.Word(uint32(i)), Label: label(i, "write")})
	}
	prog = append(prog, mark(1))
	prog = append(prog, fence...)
	prog = append(prog, mark(2))
	for i := range ops {
		prog = append(prog, cpu.Op{Kind: cpu.Load, Addr: telegraphos.Addr(1, uint32(i)%words*telegraphos.WordBytes), Len: telegraphos.WordBytes, Label: label(i, "read")})
	}
	prog = append(prog, mark(3))
	prog = append(prog, fence...)
	prog = append(prog, mark(4))
	for i := range 100 {
		prog = append(prog, cpu.Op{Kind: cpu.Store, Addr: telegraphos.Addr(1, words*telegraphos.WordBytes+uint32(i)*telegraphos.WordBytes), Data: telegraphos.Word(uint32(i))})
	}
	prog = append(prog, mark(5))
	prog = append(prog, fence...)
	cl.Nodes[0].CPU.Run(prog...)
	res, err := e.Run()
	if err != nil {
		return b, cl, res, err
	}
	b.Write = (t[1] - t[0]) / clock.Time(ops)
	b.Read = (t[3] - t[2]) / clock.Time(ops)
	b.Stream100 = t[5] - t[4]
	return b, cl, res, nil
}

// label names the first two operations of a loop in traces.
func label(i int, s string) string {
	if i < 2 {
		return s
	}
	return ""
}
