package lcilib

import (
	"encoding/binary"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// I-rcpy on the host CPU model (lci-myrinet-cluster-protocols.txt
// sections 5.2.2 and 5.2.3): Seq.RemoteCopy, the completion check
// (RcpyDone, RcpyWaitDone), the receive side's poll (RcpyWait) and the
// receive-miss handling, issued as operations of the process's program.
// «The RCPY primitive copies a contiguous block of data from the sender's
// virtual address space to a destination address in the receiver's
// virtual address space ... nonblocking ... a separate completion check»;
// nothing is notified at the receiver by default, but «polling is still
// required in I-rcpy, to handle data transfers to addresses that are not
// in the NI TLB».
//
// A process's virtual addresses are 32 bits; PageTable backs each virtual
// page with a physical page of host memory from RcpyPhysBase on first
// touch (deterministic: in the order touched). VirtWrite and VirtRead are
// the process's own untimed access to its data (a benchmark's buffers).

// Host memory the I-rcpy library reserves (bus addresses, below UserBase
// and above the send data).
const (
	// RcpyAnonBase and RcpyAnonPages are the anonymous pages «reserved in
	// host memory» for receive misses. assumed: 16 pages (64 KB), as many
	// as the NI send buffers: the paper gives no number; a sender's
	// receive misses beyond them wait in the receiving NI (its window W of
	// receive buffers) until the host has handled one.
	RcpyAnonBase  = 0x0300_0000
	RcpyAnonPages = 16
	// RcpyPhysBase is where the process's pages are backed (first touch).
	RcpyPhysBase = 0x0500_0000
)

// RcpyHandle names a RemoteCopy for its completion check (0: a refused
// call).
type RcpyHandle uint32

// rcpyHost is the I-rcpy library's state.
type rcpyHost struct {
	htlb HTLB
	pt   *PageTable
	// bufHandle is the RemoteCopy each send buffer carries a page
	// transfer of (0: none); left the page transfers of each handle
	// (index handle-1) whose send completion has not come.
	bufHandle []RcpyHandle
	left      []int
	// Counters: page transfers sent, send misses (PIO), receive misses
	// handled.
	Xfers, SendMisses, RecvMisses int
}

func newRcpyHost(sendBufs int) *rcpyHost {
	return &rcpyHost{pt: NewPageTable(RcpyPhysBase / lci.PageBytes), bufHandle: make([]RcpyHandle, sendBufs)}
}

// RcpyStats are a host's I-rcpy counts.
type RcpyStats struct{ Xfers, SendMisses, RecvMisses, Pins int }

// RcpyStats returns the counts (zero unless I-rcpy).
func (h *Host) RcpyStats() RcpyStats {
	if h.rc == nil {
		return RcpyStats{}
	}
	return RcpyStats{h.rc.Xfers, h.rc.SendMisses, h.rc.RecvMisses, h.rc.pt.Pins}
}

// Pinned is the host's pinned pages (lci.Pinned, for the NTLB checker
// lci.ntlb); nothing is pinned unless I-rcpy.
func (h *Host) Pinned(vpn uint32) (uint32, bool) {
	if h.rc == nil {
		return 0, false
	}
	return h.rc.pt.Pinned(vpn)
}

// phys is the physical address of virtual address v (backing its page).
func (h *Host) phys(v uint32) uint64 {
	return uint64(h.rc.pt.Phys(v/lci.PageBytes))*lci.PageBytes + uint64(v%lci.PageBytes)
}

// VirtWrite writes data at the process's virtual address v (untimed: the
// process's own data, set up before it is sent).
func (h *Host) VirtWrite(v uint32, data []byte) {
	for len(data) > 0 {
		k := min(len(data), lci.PageBytes-int(v%lci.PageBytes))
		_ = h.mem.Storage().Write(h.phys(v), data[:k])
		v, data = v+uint32(k), data[k:]
	}
}

// VirtStore32 is the process's store of a 32-bit word at virtual address
// v (a benchmark's flag), through the cache as any store: timed, and seen
// by the PCI bridge (the read for ownership drops what its DMA read-ahead
// holds of the line), unlike VirtWrite, which only sets data up before a
// run.
func (s *Seq) VirtStore32(v, x uint32) {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, x)
	at := s.h.phys(v)
	s.Do(cpu.Op{Kind: cpu.Store, Addr: at, Data: b})
	// The process sees its own store at once (store forwarding); memory
	// gets it when the cache's miss completes.
	_ = s.h.mem.Storage().Write(at, b)
}

// VirtRead reads n bytes at the process's virtual address v (untimed).
func (h *Host) VirtRead(v uint32, n int) []byte {
	var out []byte
	for n > 0 {
		k := min(n, lci.PageBytes-int(v%lci.PageBytes))
		b, _ := h.mem.Storage().Bytes(h.phys(v), k)
		out = append(out, b...)
		v, n = v+uint32(k), n-k
	}
	return out
}

// RemoteCopy copies n bytes from the process's virtual address src to
// virtual address dstAddr at node dst and returns at once with a handle
// for the completion check: «The host library splits each RCPY transfer
// into a series of page transfers; a page transfer spans at most one
// 4-Kbyte page» (and one packet of the MTU). Per page transfer: a send
// buffer (waiting for a send completion if none is free), the library's
// code (Costs.Send: assumed the send call's path, «For the small message
// size considered in the LogP model, the send overhead of the different
// data-transfer primitives is rather similar», section 5.2.4), then on an
// HTLB hit the descriptor only (the NI fetches the data by DMA); on a
// miss the pin (PinCycles), the PIO of the data into the send buffer and
// the descriptor marked a miss with the new mapping («the library copies
// the page segment that caused the miss directly to a send buffer in NI
// memory. In addition, the library saves the new mapping and indicates in
// its send descriptor for the page segment that a miss occurred»). A
// refused call (not I-rcpy, a bad node, unaligned addresses or size) is
// reported (lci.api) and returns 0.
func (s *Seq) RemoteCopy(dst int, src, dstAddr uint32, n int) RcpyHandle {
	h := s.h
	if h.rc == nil {
		h.env.Report(s.Now(), h.name, "lci.api", "RemoteCopy needs variant I-rcpy, not %s", h.fw.Name())
		return 0
	}
	if dst < 0 || dst >= h.nodes || dst == h.node {
		h.env.Report(s.Now(), h.name, "lci.api", "RemoteCopy to node %d from node %d of %d", dst, h.node, h.nodes)
		return 0
	}
	xs, err := SplitPages(src, dstAddr, n, h.fw.MTU)
	if err != nil {
		h.env.Report(s.Now(), h.name, "lci.api", "%v", err)
		return 0
	}
	r := h.rc
	r.left = append(r.left, len(xs))
	hd := RcpyHandle(len(r.left))
	for _, x := range xs {
		buf := s.sendBuffer()
		r.bufHandle[buf] = hd
		s.Compute(h.costs.Send)
		plan := PlanSend(&r.htlb, r.pt, x, uint8(dst), uint32(buf))
		plan.Desc.Buf = uint32(buf)
		plan.Desc.Handle = uint32(hd)
		plan.Desc.Seq = h.descSeq
		h.descSeq++
		h.Sent++
		r.Xfers++
		if plan.PIO {
			r.SendMisses++
			s.Compute(PinCycles)
			s.pio(h.lay.SendBuf(buf)+lci.HeaderBytes, h.VirtRead(x.Src, x.Size))
		}
		s.pio(h.descSlot(plan.Desc.Seq), plan.Desc.Encode())
	}
	return hd
}

// completed counts send buffer buf's completion towards its handle.
func (r *rcpyHost) completed(buf int) {
	if hd := r.bufHandle[buf]; hd != 0 {
		r.left[hd-1]--
		r.bufHandle[buf] = 0
	}
}

// RcpyDone is the completion check: it handles what the receive queue
// holds (send completions, receive-miss notifications; other packets are
// kept for the next Recv) and reports whether every page transfer of hd
// has been sent (its send buffer's completion came back).
func (s *Seq) RcpyDone(hd RcpyHandle) bool {
	h := s.h
	if h.rc == nil || hd == 0 || int(hd) > len(h.rc.left) {
		h.env.Report(s.Now(), h.name, "lci.api", "RcpyDone of unknown handle %d", hd)
		return true
	}
	s.rcpyPoll()
	return h.rc.left[hd-1] == 0
}

// RcpyWaitDone polls until RemoteCopy hd is complete.
func (s *Seq) RcpyWaitDone(hd RcpyHandle) {
	h := s.h
	if h.rc == nil || hd == 0 || int(hd) > len(h.rc.left) {
		h.env.Report(s.Now(), h.name, "lci.api", "RcpyWaitDone of unknown handle %d", hd)
		return
	}
	for h.rc.left[hd-1] > 0 {
		var m *Msg
		s.WaitUntil(func() bool {
			m = h.rcpyTake(s.Now())
			return m != nil
		})
		s.handle(m, nil)
	}
}

// RcpyWait polls until the 32-bit word at the process's virtual address v
// equals want (the receiver's flag: a RemoteCopy delivers no notification,
// so a process learns of data by looking at it), handling the receive
// queue's send completions and miss notifications meanwhile; once the
// word is there it loads it (through the cache: a miss, the NI's DMA
// wrote the line) and polls the receive queue once more, for misses of
// the transfer's earlier page transfers, whose notifications precede the
// flag's data on the NI's one DMA engine. It returns when the poll found
// the word (the receive overhead runs from there to the return).
func (s *Seq) RcpyWait(v, want uint32) clock.Time {
	h := s.h
	if h.rc == nil {
		h.env.Report(s.Now(), h.name, "lci.api", "RcpyWait needs variant I-rcpy, not %s", h.fw.Name())
		return s.Now()
	}
	at := h.phys(v)
	for {
		var m *Msg
		hit := false
		s.WaitUntil(func() bool {
			b, _ := h.mem.Storage().Bytes(at, 4)
			if binary.LittleEndian.Uint32(b) == want {
				hit = true
				return true
			}
			m = h.rcpyTake(s.Now())
			return m != nil
		})
		if !hit {
			s.handle(m, nil)
			continue
		}
		t := s.Now()
		s.Load(at, readWord)
		s.rcpyPoll()
		return t
	}
}

// rcpyPoll handles every send completion and miss notification the
// receive queue holds now (a poll that does not wait); other packets are
// kept for the next Recv.
func (s *Seq) rcpyPoll() {
	h := s.h
	for {
		var m *Msg
		s.PollUntil(func() bool {
			m = h.rcpyTake(s.Now())
			return true
		})
		if m == nil {
			return
		}
		s.handle(m, nil)
	}
}

// rcpyTake takes the head of the receive queue if it is a completion or a
// miss notification; a packet is kept for the next Recv (pending) and the
// look goes on.
func (h *Host) rcpyTake(now clock.Time) *Msg {
	for {
		m := h.take(now)
		if m == nil || m.Type == lci.TypeCompl || m.Type == lci.TypeRcpy {
			return m
		}
		h.pending.Push(m)
	}
}

// rcpyMiss is the host's part of a receive miss, when its poll finds the
// notification (HandleMiss, timed): «When the host receives the
// notification, it copies the data from the anonymous page to the
// sender-specified destination, pins the destination page, updates both
// its own and the NI's TLB, and finally unlocks the NI's TLB entry». The
// pin is a system call (PinCycles); the copy is the library's memcpy
// (copyIn); the NI's entry is written by PIO, valid and unlocked, which
// also gives the anonymous page back (the NI watches its NTLB).
func (s *Seq) rcpyMiss(m *Msg) {
	h := s.h
	r := h.rc
	dst, anon, size := m.Tag, int(m.Seq&0xffff), int(m.Seq>>16)
	s.Compute(PinCycles)
	ppn := r.pt.Pin(dst / lci.PageBytes)
	off := dst % lci.PageBytes
	data, _ := h.mem.Storage().Bytes(uint64(h.fw.AnonBase)+uint64(anon)*lci.PageBytes+uint64(off), size)
	to := uint64(ppn)*lci.PageBytes + uint64(off)
	s.copyIn(to, data)
	// The copy's stores are posted (they reach memory when the cache's
	// misses complete); the process sees its own stores at once, in
	// program order (store forwarding), so its next look at the
	// destination (RcpyWait's, untimed) must find them: the same bytes
	// go to memory now too.
	_ = h.mem.Storage().Write(to, data)
	r.htlb.Insert(dst, ppn)
	ntlb := lci.NTLB{Base: h.lay.NTLB}
	s.pio(ntlb.EntryAddr(dst), lci.EncodeNTLBEntry(lci.NTLBEntry{VPN: dst / lci.PageBytes, PPN: ppn, Valid: true}))
	r.RecvMisses++
}
