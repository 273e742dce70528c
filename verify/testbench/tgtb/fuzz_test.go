package tgtb_test

import (
	"encoding/binary"
	"testing"

	tg "github.com/nisim/nisim/hib/telegraphos"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/tgtb"
)

// fuzzOpBytes is one processor access of FuzzHostAccess's program: a flags
// byte (bit 0: store), the 32-bit offset in the HIB's window and the datum.
const fuzzOpBytes = 9

// access returns the program's bytes for one access.
func access(store bool, off, v uint32) []byte {
	b := make([]byte, fuzzOpBytes)
	if store {
		b[0] = 1
	}
	binary.LittleEndian.PutUint32(b[1:], off)
	binary.LittleEndian.PutUint32(b[5:], v)
	return b
}

func program(ops ...[]byte) []byte {
	var p []byte
	for _, o := range ops {
		p = append(p, o...)
	}
	return p
}

// FuzzHostAccess sends any sequence of word loads and stores, at any
// aligned offsets of the HIB's TURBOchannel window (shared memory of any
// node, contexts, special registers, shadow addresses, other regions),
// from node 0's processor of a two-node cluster of Telegraphos I or II.
// The HIB decodes every address (addr.go) and serves or refuses it; the
// properties: nothing panics, every access retires (the HIB answers every
// load, so the processor never hangs), the run ends on its own with no
// checker violation, and the accesses to no region at all (bits 30-28 above
// 2) are among those refused.
func FuzzHostAccess(f *testing.F) {
	sh := func(node int, off uint32) uint32 { return tg.SharedAddr(node, off) }
	reg := tg.SpecialAddr
	f.Add(uint8(1), program(access(true, sh(1, 0x40), 7), access(false, sh(1, 0x40), 0), access(false, sh(0, 0x40), 0)))
	f.Add(uint8(1), program(access(true, sh(5, 0x40), 1), access(false, sh(7, 0x40), 0), access(true, 3<<28, 1), access(true, sh(1, 0x42), 9)))
	f.Add(uint8(1), program(access(true, reg(tg.RegMode), uint32(tg.FetchAndInc)), access(true, sh(1, 0x80), 0), access(false, reg(tg.RegLaunch), 0),
		access(false, reg(tg.RegFence), 0), access(false, reg(tg.RegOutstanding), 0)))
	f.Add(uint8(1), program(access(true, reg(tg.RegPCPage), 2048+1), access(true, reg(tg.RegPCRead), 3), access(false, reg(tg.RegPCRead), 0),
		access(true, sh(1, 0x2000), 1), access(false, reg(tg.RegIntStatus), 0), access(false, reg(tg.RegIntPage), 0)))
	f.Add(uint8(2), program(access(true, tg.ContextAddr(0, tg.CtxOp), uint32(tg.CompareAndSwap)), access(true, tg.ContextAddr(0, tg.CtxData0), 0),
		access(true, tg.ContextAddr(0, tg.CtxData1), 5), access(true, tg.Shadow(sh(1, 0x100)), tg.ShadowData(0, 0x100)),
		access(false, tg.ContextAddr(0, tg.CtxLaunch), 0), access(false, tg.ContextAddr(0, tg.CtxArg0), 0)))
	f.Add(uint8(2), program(access(true, tg.ContextAddr(0, tg.CtxOp), tg.OpCopy), access(true, tg.Shadow(sh(1, 0x100)), tg.ShadowData(0, 0x100)),
		access(true, tg.Shadow(sh(0, 0x200)), tg.ShadowData(0, 0x100)), access(false, tg.ContextAddr(0, tg.CtxLaunch), 0),
		access(true, tg.Shadow(sh(1, 0x100)), tg.ShadowData(3, 0xbad)), access(false, tg.ContextAddr(63, tg.CtxLaunch), 0)))
	f.Add(uint8(2), program(access(false, 0xffff_fffc, 0), access(true, 0x7fff_fffc, 0xffff_ffff), access(false, reg(0x2c), 0), access(true, reg(0x1000), 1)))
	f.Fuzz(func(t *testing.T, version uint8, prog []byte) {
		c := tgtb.DefaultCluster(2)
		if version%2 == 0 {
			c.HIB = tg.TelegraphosII()
		}
		e := env.New(env.Options{Seed: 1, TimeLimit: 100 * clock.Millisecond})
		cl, err := tgtb.BuildCluster(e, c)
		if err != nil {
			t.Fatal(err)
		}
		if version%2 == 0 {
			for i := range 2 {
				if err := cl.Nodes[i].HIB.SetContextKey(i, uint16(0x100+i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		var ops []cpu.Op
		retired, noRegion := 0, 0
		for len(prog) >= fuzzOpBytes && len(ops) < 64 {
			store, off, v := prog[0]&1 == 1, binary.LittleEndian.Uint32(prog[1:]), binary.LittleEndian.Uint32(prog[5:])
			prog = prog[fuzzOpBytes:]
			off &^= tg.WordBytes - 1 // the processor stores whole aligned words (an Alpha traps the others)
			if off>>28&7 > tg.RegionSpecial {
				noRegion++
			}
			op := cpu.Op{Kind: cpu.Load, Addr: tg.WindowBase + uint64(off), Len: tg.WordBytes,
				Done: func(clock.Time, []byte) { retired++ }}
			if store {
				op.Kind, op.Data, op.Len = cpu.Store, tg.Word(v), 0
			}
			ops = append(ops, op)
		}
		cl.Nodes[0].CPU.Run(ops...)
		res, err := e.Run()
		if err != nil {
			t.Fatalf("%d accesses: %v", len(ops), err)
		}
		if res.Stopped {
			t.Fatalf("%d accesses: still running at %v", len(ops), res.End)
		}
		cl.Packets.Finish(res.End)
		if err := e.Monitor.Err(); err != nil {
			t.Fatalf("%d accesses: %v", len(ops), err)
		}
		if retired != len(ops) {
			t.Fatalf("%d of %d accesses retired", retired, len(ops))
		}
		if refused := cl.Nodes[0].HIB.Stats().Refused; refused < uint64(noRegion) {
			t.Fatalf("%d accesses to no region, %d refused", noRegion, refused)
		}
	})
}
