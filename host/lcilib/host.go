// Package lcilib is the host side of LCI (lci-myrinet-cluster-protocols.txt
// section 2): the library a process calls to send, multicast, poll,
// release and fetch-and-add, running as operations of the host CPU model
// on the PCI bus, and the PPro and P3 platforms of Table I. Clusters of
// hosts, LANai cards running firmware/lci and the Myrinet network, and the
// paper's measurements on them, are assembled in verify/testbench/lcitb.
//
// What the library costs emerges from the parts: its own code in host
// cycles (Costs), programmed I/O through the processor's write-combining
// buffer, its cache (uncached: the card is I/O space), the memory bus and
// the PCI bridge (descriptors, I-pio data, buffer returns), memcpy at the
// platform's rate, and the loads that read a received packet (the receive
// queue's full/empty flag, the header, the data, send completions): real
// loads through the processor's cache, which miss on every line the NI's
// DMA has written since (the DMA crosses the bridge onto the memory bus and
// the cache's snooping drops the line), so each pays a fill from host
// memory over the memory bus.
package lcilib

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/internal/queue"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// Costs are the LCI library's code paths in host CPU cycles, the same on
// both platforms.
type Costs struct {
	// Send: allocate a send buffer, build the descriptor, the call's
	// bookkeeping (not the copy or the PIO, which the model times).
	// calibrated: 338 cycles, fitted to the PPro I-sdma send overhead
	// os = 1.8 µs (Table III).
	Send int
	// Recv: a successful poll, the upcall dispatch and the release
	// (not the cache misses or the PIO).
	// calibrated: 422 cycles, fitted to the PPro I-sdma receive overhead
	// or = 2.6 µs (Table III).
	Recv int
	// Signal: the kernel delivering a network interrupt as a Unix signal
	// to the process. assumed: 4000 cycles (20 µs on the PPro).
	Signal int
	// Completion: a send completion found in the receive queue (mark the
	// send buffer free; the slot goes back like a packet's). assumed: 40.
	Completion int
}

// DefaultCosts returns the calibrated library costs.
func DefaultCosts() Costs { return Costs{Send: 338, Recv: 422, Signal: 4000, Completion: 40} }

// Msg is a received packet, as the upcall sees it.
type Msg struct {
	Type uint8
	// Src is the sender (the root, for a multicast).
	Src int
	Tag uint32
	// Seq is the sender's sequence number for this destination (or the
	// root's multicast sequence), Arg the F&A value of a reply.
	Seq  uint32
	Data []byte
	// At is when the poll found it.
	At   clock.Time
	slot uint64
	// reads are the loads that read the slot's header and data through
	// the cache, issued when the packet is handled.
	reads []cpu.Op
	// Keep, set by the upcall, keeps the packet for a later explicit
	// Release (out of order allowed).
	Keep bool
}

// Handler is an upcall: it gets the packet and returns the work the
// process does with it (operations run before the packet is released).
type Handler func(now clock.Time, m *Msg) []cpu.Op

// Host memory map of a node (bus addresses).
const (
	// HostMemBytes is the size of host memory as the bus maps it.
	HostMemBytes = 128 << 20
	hostMemSize  = HostMemBytes
	slotsBase    = 0x0010_0000
	sendData     = 0x0100_0000
	// UserBase is where a process may keep its own data.
	UserBase = 0x0400_0000
	// NIBase is the PCI address of the card's SRAM window.
	NIBase = 0x8000_0000
)

// Host is one node's LCI library and the state it keeps.
type Host struct {
	env   *env.Env
	name  string
	node  int
	nodes int
	plat  Platform
	costs Costs
	fw    lci.Config
	lay   lci.Layout
	CPU   *cpu.CPU
	mem   *mem.Memory

	slotBytes uint64
	freeSend  []int
	descSeq   uint32
	freeSeq   uint32
	ring      queue.Queue[uint64] // host buffers in the order the NI fills them
	expect    uint32              // the next slot flag
	pending   queue.Queue[*Msg]   // taken while waiting for an F&A reply

	// Counters.
	Sent, Received, Released uint64
	// upcall handles packets that arrive while the process waits inside
	// the library (for a send buffer or an F&A reply).
	upcallFn Handler

	deaf bool // test-only fault lci.deaf: its polls never find a packet
}

// mutDeaf is a test-only fault (see env.DeclareMutation).
var mutDeaf = env.DeclareMutation("lci.deaf",
	"the host of node N-1 never sees a packet in its receive queue: an LCI node that never polls "+
		"(its senders block on its window and every host ends up waiting: caught by the watchdog)")

// SetUpcall registers the process's upcall: a packet that arrives while
// the process waits inside the library (for a free send buffer, for an F&A
// reply) is passed to it at once, as LCI's packet interface does («the
// packet is passed to a client-supplied upcall routine», section 2).
// Without one, such packets are kept for the next Recv, holding their host
// buffers meanwhile.
func (h *Host) SetUpcall(fn Handler) { h.upcallFn = fn }

func newHost(e *env.Env, name string, node, nodes int, plat Platform, costs Costs, fw lci.Config, c *cpu.CPU, m *mem.Memory) *Host {
	h := &Host{env: e, name: name, node: node, nodes: nodes, plat: plat, costs: costs, fw: fw, lay: lci.NewLayout(fw),
		CPU: c, mem: m, expect: 1, descSeq: 1, freeSeq: 1, deaf: e.Mutation(mutDeaf) == node+1}
	h.slotBytes = uint64(fw.MTU+lci.HeaderBytes+63) &^ 63
	for i := fw.SendBufs - 1; i >= 0; i-- {
		h.freeSend = append(h.freeSend, i)
	}
	// A write to host memory (the NI's DMA, landing behind the bridge)
	// may fill the slot a polling CPU waits on: wake it to look.
	m.SubscribeWrites(func(now clock.Time, _ mem.WriteEvent) { h.CPU.Wake(now) })
	return h
}

// init writes what the host sets up before the first message (untimed, as
// at process start): the control block, the free host buffers and the
// multicast forwarding table.
func (h *Host) init(sram *mem.Storage, tree lci.Tree) error {
	cb := make([]byte, 16)
	if h.fw.Interrupts {
		binary.LittleEndian.PutUint32(cb[lci.CtlFlags:], 1)
	}
	if err := sram.Write(0, cb); err != nil {
		return err
	}
	for i := range h.fw.HostSlots {
		addr := slotsBase + uint64(i)*h.slotBytes
		rec := lci.Free{Seq: h.freeSeq, Addr: addr}.Encode()
		if err := sram.Write(uint64(h.lay.FreeQ)+uint64(i*lci.FreeBytes), rec); err != nil {
			return err
		}
		h.freeSeq++
		h.ring.Push(addr)
	}
	for root := range h.nodes {
		row := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		kids := tree.Children(root, h.node, h.nodes)
		if len(kids) > lci.FwdWidth {
			return fmt.Errorf("%s: %d children in the %s tree of %d exceed the table's %d", h.name, len(kids), tree, root, lci.FwdWidth)
		}
		for i, k := range kids {
			row[i] = byte(k)
		}
		if err := sram.Write(uint64(h.lay.Fwd)+uint64(root*lci.FwdWidth), row); err != nil {
			return err
		}
	}
	return nil
}

// sendStride is the distance between the host-resident send buffers: the
// MTU rounded up to whole 4 KB pages, plus a page left empty. The PCI
// bridge reads ahead of a DMA read (bus.BridgeConfig.PrefetchBytes) and
// serves the next read from that buffer if it continues where the last
// one ended; the library's copy into a send buffer is not a memory-bus
// transaction the bridge could see (the copy's cost is CopyCycles), so a
// send buffer right behind another could be served stale from the read
// ahead. With a page between buffers no read continues into another
// buffer, and each packet's first read is a fresh delayed read.
func (h *Host) sendStride() uint64 {
	const page = 4096
	return (uint64(h.fw.MTU)+page-1)&^(page-1) + page
}

// readWord is the size of the loads that read a received packet: a 32-bit
// word, the width of the slot header's fields.
const readWord = 4

// reads returns the loads that read [addr, addr+n) from the CPU's point of
// view: one word at the start of every cache line the range covers (the
// first touch of a line decides hit or miss; the rest of the line is
// within the library's Costs). A line the NI's DMA has written since the
// CPU last read it is not in the cache, so its load misses and fills it
// over the memory bus.
func (h *Host) reads(addr uint64, n int) []cpu.Op {
	lb := uint64(h.plat.Host.LastLevel().LineBytes)
	var ops []cpu.Op
	for l := addr / lb; l <= (addr+uint64(max(n, 1))-1)/lb; l++ {
		at := max(l*lb, addr)
		ops = append(ops, cpu.Op{Kind: cpu.Load, Addr: at, Len: readWord})
	}
	return ops
}

// copyCycles is memcpy of n bytes: within the caches, or at the memory
// copy rate when the data does not fit in L2 (big says so).
func (h *Host) copyCycles(n int, big bool) int {
	if !big {
		return (n + h.plat.CachedCopyBytesPerCycle - 1) / h.plat.CachedCopyBytesPerCycle
	}
	num, den := h.plat.CPU().Hz()
	// n bytes at CopyMBps: n / (CopyMBps*1e6) seconds of a num/den Hz clock.
	return int((uint64(n)*num + uint64(h.plat.CopyMBps)*1_000_000*den - 1) / (uint64(h.plat.CopyMBps) * 1_000_000 * den))
}

// pio returns the stores that write data to SRAM address at, one
// write-combining burst per WCBytes-aligned piece.
func (h *Host) pio(at uint32, data []byte) []cpu.Op {
	var ops []cpu.Op
	addr := NIBase + uint64(at)
	wc := uint64(h.plat.WCBytes())
	for off := 0; off < len(data); {
		n := min(int(wc-(addr+uint64(off))%wc), len(data)-off)
		ops = append(ops, cpu.Op{Kind: cpu.Store, Addr: addr + uint64(off), Data: data[off : off+n], Burst: true})
		off += n
	}
	return ops
}

// completion handles a send completion taken from the receive queue: its
// send buffer is free at once; the cost and the slot's return follow.
func (h *Host) completion(m *Msg) []cpu.Op {
	h.freeSend = append(h.freeSend, int(m.Tag))
	ops := append(m.reads, cpu.Op{Kind: cpu.Compute, Cycles: h.costs.Completion})
	return append(ops, h.Release(m)...)
}

// drainForBuffer looks through the receive queue for a send completion
// when the process has no free send buffer: completions are handled,
// packets kept for the next Recv. It reports whether it found one.
func (h *Host) drainForBuffer(now clock.Time) ([]cpu.Op, bool) {
	var ops []cpu.Op
	for {
		m := h.take(now)
		if m == nil {
			return ops, len(ops) > 0
		}
		switch {
		case m.Type == lci.TypeCompl:
			ops = append(ops, h.completion(m)...)
		case h.upcallFn != nil:
			// Upcall it, then look again.
			return append(ops, h.upcall(m, h.upcallFn)...), true
		default:
			h.pending.Push(m)
		}
	}
}

// Send sends data (at most the MTU) to node dst with a tag: «an LCI
// client allocates a send buffer in network interface (NI) memory (step 1)
// and it writes a descriptor telling the NI to use DMA to transfer the
// data, or (2) uses programmed I/O (PIO) to copy data into this packet
// buffer directly. Next, the client hands the packet to a point-to-point
// or multicast routine which passes a send request to the NI (3).» done,
// if set, runs when the call returns.
func (h *Host) Send(dst int, data []byte, tag uint32, done func(now clock.Time)) []cpu.Op {
	return h.send(lci.TypeData, dst, data, tag, done)
}

// SendMessage sends a message of any size as packets of at most the MTU
// (the last may be shorter), all with the same tag; done runs when the
// last send call returns.
func (h *Host) SendMessage(dst int, data []byte, tag uint32, done func(now clock.Time)) []cpu.Op {
	return h.fragments(data, func(piece []byte, last bool) []cpu.Op {
		if last {
			return h.Send(dst, piece, tag, done)
		}
		return h.Send(dst, piece, tag, nil)
	})
}

// MulticastMessage multicasts a message of any size, packet by packet.
func (h *Host) MulticastMessage(data []byte, tag uint32, done func(now clock.Time)) []cpu.Op {
	return h.fragments(data, func(piece []byte, last bool) []cpu.Op {
		if last {
			return h.Multicast(piece, tag, done)
		}
		return h.Multicast(piece, tag, nil)
	})
}

func (h *Host) fragments(data []byte, each func(piece []byte, last bool) []cpu.Op) []cpu.Op {
	mtu := h.fw.MTU
	if len(data) <= mtu {
		return each(data, true)
	}
	var ops []cpu.Op
	for off := 0; off < len(data); off += mtu {
		end := min(off+mtu, len(data))
		ops = append(ops, each(data[off:end], end == len(data))...)
	}
	return ops
}

// Multicast sends data to every other node along the forwarding tree
// rooted at this node.
func (h *Host) Multicast(data []byte, tag uint32, done func(now clock.Time)) []cpu.Op {
	return h.send(lci.TypeMcast, h.node, data, tag, done)
}

func (h *Host) send(typ uint8, dst int, data []byte, tag uint32, done func(now clock.Time)) []cpu.Op {
	if len(data) > h.fw.MTU {
		h.env.Report(h.env.Now(), h.name, "lci.api", "send of %d bytes exceeds the %d-byte MTU", len(data), h.fw.MTU)
		return nil
	}
	if typ != lci.TypeMcast && (dst < 0 || dst >= h.nodes || dst == h.node) {
		h.env.Report(h.env.Now(), h.name, "lci.api", "send to node %d from node %d of %d", dst, h.node, h.nodes)
		return nil
	}
	return []cpu.Op{{Kind: cpu.Wait, Label: "", Fn: func(now clock.Time) bool {
		if len(h.freeSend) == 0 {
			ops, ok := h.drainForBuffer(now)
			if !ok {
				return false // the NI's next completion wakes us
			}
			// Handle the completions, then try again.
			h.CPU.Insert(append(ops, h.send(typ, dst, data, tag, done)...)...)
			return true
		}
		buf := h.freeSend[len(h.freeSend)-1]
		h.freeSend = h.freeSend[:len(h.freeSend)-1]
		d := lci.Desc{Seq: h.descSeq, Type: typ, Dst: uint8(dst), Len: uint16(len(data)), Buf: uint32(buf), Tag: tag}
		h.descSeq++
		cycles := h.costs.Send
		var ops []cpu.Op
		if h.fw.Variant == lci.SDMA {
			// «write the message data to a host-resident packet queue»
			// (MY-P32), from which the NI fetches it.
			d.HostBuf = sendData + uint64(buf)*h.sendStride()
			_ = h.mem.Storage().Write(d.HostBuf, data)
			cycles += h.copyCycles(len(data), false)
		} else {
			ops = h.pio(h.lay.SendBuf(buf)+lci.HeaderBytes, data)
		}
		slot := h.lay.SendQ + uint32(int(d.Seq-1)%h.lay.SendQSlots*lci.DescBytes)
		ops = append(ops, h.pio(slot, d.Encode())...)
		h.Sent++
		first := cpu.Op{Kind: cpu.Compute, Cycles: cycles}
		ops = append([]cpu.Op{first}, ops...)
		ops[len(ops)-1].Done = func(now clock.Time, _ []byte) {
			if done != nil {
				done(now)
			}
		}
		h.CPU.Insert(ops...)
		return true
	}}}
}

// take takes the packet at the head of the receive queue if its flag says
// it is full: «The host ... detects newly arrived packets by checking a
// full/empty flag in the buffer at the head of the queue.»
func (h *Host) take(now clock.Time) *Msg {
	if h.ring.Len() == 0 || h.deaf {
		return nil
	}
	slot := *h.ring.Front()
	hdrAt := slot + uint64(h.fw.MTU)
	b, _ := h.mem.Storage().Bytes(hdrAt, lci.HeaderBytes)
	sh := lci.DecodeSlotHeader(b)
	if sh.Flag != h.expect {
		return nil
	}
	h.ring.Pop()
	h.expect++
	data, _ := h.mem.Storage().Bytes(hdrAt-uint64(sh.Len), int(sh.Len))
	h.Received++
	// The header's line first (the flag the poll found), then the data's.
	reads := h.reads(hdrAt, lci.HeaderBytes)
	if sh.Len > 0 {
		reads = append(reads, h.reads(hdrAt-uint64(sh.Len), int(sh.Len))...)
	}
	reads = slices.Clip(reads) // each handler appends its own steps
	return &Msg{Type: sh.Type, Src: int(sh.Src), Tag: sh.Tag, Seq: sh.Arg, Data: data, At: now, slot: slot, reads: reads}
}

// Recv waits (polling) for the next packet and runs handler on it, then
// releases it unless the handler kept it. The poll that finds it, the
// upcall and the release cost the loads of the slot through the cache
// (misses on every line the NI wrote), Costs.Recv and the PIO that returns
// the buffer.
func (h *Host) Recv(handler Handler) []cpu.Op {
	return []cpu.Op{{Kind: cpu.Wait, Fn: func(now clock.Time) bool {
		m := h.next(now)
		if m == nil {
			return false
		}
		if m.Type == lci.TypeCompl {
			h.CPU.Insert(append(h.completion(m), h.Recv(handler)...)...)
			return true
		}
		h.CPU.Insert(h.upcall(m, handler)...)
		return true
	}}}
}

// TryRecv handles every packet already there and returns (a poll that
// does not wait).
func (h *Host) TryRecv(handler Handler) []cpu.Op {
	return []cpu.Op{{Kind: cpu.Call, Fn: func(now clock.Time) bool {
		if m := h.next(now); m != nil {
			if m.Type == lci.TypeCompl {
				h.CPU.Insert(append(h.completion(m), h.TryRecv(handler)...)...)
				return true
			}
			h.CPU.Insert(append(h.upcall(m, handler), h.TryRecv(handler)...)...)
		}
		return true
	}}}
}

func (h *Host) next(now clock.Time) *Msg {
	if h.pending.Len() > 0 {
		return h.pending.Pop()
	}
	return h.take(now)
}

func (h *Host) upcall(m *Msg, handler Handler) []cpu.Op {
	ops := append(m.reads, cpu.Op{Kind: cpu.Compute, Cycles: h.costs.Recv})
	ops = append(ops, cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool {
		var work []cpu.Op
		if handler != nil {
			work = handler(now, m)
		}
		if !m.Keep {
			work = append(work, h.Release(m)...)
		}
		h.CPU.Insert(work...)
		return true
	}})
	return ops
}

// Release gives a packet's host buffer back to the NI (explicit release;
// out of order is allowed): its address goes into the Recv Completions
// queue in NI memory by PIO.
func (h *Host) Release(m *Msg) []cpu.Op {
	rec := lci.Free{Seq: h.freeSeq, Addr: m.slot}
	slot := h.lay.FreeQ + uint32(int(rec.Seq-1)%h.lay.FreeQSlots*lci.FreeBytes)
	h.freeSeq++
	h.ring.Push(m.slot)
	h.Released++
	return h.pio(slot, rec.Encode())
}

// FetchAndAdd adds add to node's fetch-and-add variable and gives the old
// value to done; packets that arrive meanwhile are kept for the next Recv.
func (h *Host) FetchAndAdd(node int, add uint32, done func(now clock.Time, old uint32)) []cpu.Op {
	// The request is a packet like any other: its addend is its data, so
	// I-sdma fetches it by DMA and I-pio writes it by PIO.
	arg := make([]byte, 4)
	binary.LittleEndian.PutUint32(arg, add)
	ops := h.send(lci.TypeFAReq, node, arg, 0, nil)
	wait := cpu.Op{Kind: cpu.Wait}
	wait.Fn = func(now clock.Time) bool {
		for {
			m := h.take(now)
			if m == nil {
				return false
			}
			if m.Type == lci.TypeCompl {
				h.CPU.Insert(append(h.completion(m), wait)...)
				return true
			}
			if m.Type != lci.TypeFARep {
				if h.upcallFn != nil {
					h.CPU.Insert(append(h.upcall(m, h.upcallFn), wait)...)
					return true
				}
				h.pending.Push(m)
				continue
			}
			h.CPU.Insert(append(m.reads, cpu.Op{Kind: cpu.Compute, Cycles: h.costs.Recv},
				cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool {
					// The release comes first, then the caller's code (which
					// may insert its next steps).
					h.CPU.Insert(append(h.Release(m), cpu.Op{Kind: cpu.Call, Fn: func(now clock.Time) bool {
						if done != nil {
							done(now, m.Tag)
						}
						return true
					}})...)
					return true
				}})...)
			return true
		}
	}
	return append(ops, wait)
}

// OnSignal makes network interrupts run handler on every waiting packet:
// «The host passes network interrupts as Unix signals to the application.
// The signal handler in the LCI library responds to the signal by polling
// the host receive queue».
func (h *Host) OnSignal(handler Handler) {
	h.CPU.SetInterruptHandler(func(clock.Time) []cpu.Op {
		return append([]cpu.Op{{Kind: cpu.Compute, Cycles: h.costs.Signal}}, h.TryRecv(handler)...)
	})
}

// Node returns the node number.
func (h *Host) Node() int { return h.node }

// Memory returns the host memory.
func (h *Host) Memory() *mem.Memory { return h.mem }
