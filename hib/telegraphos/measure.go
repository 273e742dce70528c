package telegraphos

import (
	"encoding/binary"
	"fmt"

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

// Addr returns the processor's physical address of word off of node's
// shared memory.
func Addr(node int, off uint32) uint64 { return WindowBase + uint64(SharedAddr(node, off)) }

// RegAddr returns the processor's physical address of special register
// reg.
func RegAddr(reg uint32) uint64 { return WindowBase + uint64(SpecialAddr(reg)) }

// Word encodes v as a store's data.
func Word(v uint32) []byte {
	var b [WordBytes]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return b[:]
}

// MeasureBasics runs the paper's measurements on a two-node cluster of c
// (node 0 accesses node 1's memory), ops operations per loop, as three
// separate runs in fresh simulations.
func MeasureBasics(c ClusterConfig, ops int) (Basics, error) {
	c.Nodes = 2
	b := Basics{Ops: ops}
	loop := func(n int, mk func(i int) cpu.Op) (clock.Time, error) {
		e := env.New(env.Options{})
		cl, err := BuildCluster(e, c)
		if err != nil {
			return 0, err
		}
		var start, end clock.Time
		prog := []cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool { start = now; return true }}}
		for i := range n {
			prog = append(prog, mk(i))
		}
		prog = append(prog, cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { end = now; return true }},
			cpu.Op{Kind: cpu.Load, Addr: RegAddr(RegFence), Len: WordBytes})
		cl.Nodes[0].CPU.Run(prog...)
		if _, err := e.Run(); err != nil {
			return 0, err
		}
		return end - start, nil
	}
	store := func(i int) cpu.Op {
		return cpu.Op{Kind: cpu.Store, Addr: Addr(1, uint32(i%(PageBytes/WordBytes))*WordBytes), Data: Word(uint32(i))}
	}
	t, err := loop(ops, store)
	if err != nil {
		return b, fmt.Errorf("remote writes: %w", err)
	}
	b.Write = t / clock.Time(ops)
	if t, err = loop(ops, func(i int) cpu.Op {
		return cpu.Op{Kind: cpu.Load, Addr: Addr(1, uint32(i%(PageBytes/WordBytes))*WordBytes), Len: WordBytes}
	}); err != nil {
		return b, fmt.Errorf("remote reads: %w", err)
	}
	b.Read = t / clock.Time(ops)
	if b.Stream100, err = loop(100, store); err != nil {
		return b, fmt.Errorf("stream of 100 writes: %w", err)
	}
	return b, nil
}

// measureStream is for calibration experiments: the time of a stream of n
// remote writes.
func MeasureStream(c ClusterConfig, n int) (clock.Time, error) {
	c.Nodes = 2
	e := env.New(env.Options{})
	cl, err := BuildCluster(e, c)
	if err != nil {
		return 0, err
	}
	var start, end clock.Time
	prog := []cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool { start = now; return true }}}
	for i := range n {
		prog = append(prog, cpu.Op{Kind: cpu.Store, Addr: Addr(1, uint32(i)*WordBytes), Data: Word(uint32(i))})
	}
	prog = append(prog, cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool { end = now; return true }})
	cl.Nodes[0].CPU.Run(prog...)
	_, err = e.Run()
	return end - start, err
}
