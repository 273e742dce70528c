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
//
// The library is sequential code, as the paper describes the client: a
// process is a program on its host's processor (Host.Go or Host.Run,
// cpu.Go underneath) that calls Seq's methods, each returning when the
// operations it issued have retired, with its result:
//
//	h.Run(func(s *lcilib.Seq) {
//		s.Send(1, data, tag) // a send buffer, the copy (or PIO), the descriptor
//		s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
//			// The upcall: copy the data out.
//			s.Compute(s.Host().CopyCycles(len(m.Data), false))
//		}) // the packet is released when the upcall returns, unless m.Keep
//		old := s.FetchAndAdd(1, 1) // the variable's value before the add
//	})
//
// With host-level multicast forwarding (I-sdma-hmc, I-pio-hmc: section
// 5.4, lci.Config.HostForward) the library forwards a multicast packet to
// this node's children in its root's tree when it takes the packet from
// the receive queue, before the upcall: one send buffer filled once, a
// descriptor per child (forwardMcast).
//
// Upcalls (Handler) are sequential code too, running in the program that
// found the packet: a Recv, a TryRecv, a Send waiting for a free send
// buffer or a FetchAndAdd waiting for its reply (SetUpcall), or the
// signal handler of a network interrupt (OnSignal), itself a program
// taken between the process's operations or inside its computes and waits.
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
	// Send: the library's instructions of a send call: allocate a send
	// buffer, build the descriptor and (I-sdma) the address and size
	// field, the call's bookkeeping. Not what the model times: the copy
	// into the host send buffer (I-sdma), and the PIO stores to the card
	// (I-sdma's address and size field and I-pio's data, then the
	// descriptor), each issued and posted through the write-combining
	// path. calibrated: 337 cycles, fitted to the PPro I-sdma send
	// overhead os = 1.8 µs (Table III) of 16-byte messages: 337, the
	// copy's loop (14) and store (2), the field's store (1, one beat)
	// and the descriptor's (6: four beats, two of them waiting for room
	// behind the field's) come to 360 cycles, 1.800 µs at 200 MHz (the
	// one_message golden's CPU cycles 2000-2359). It was 338 (1.79 µs)
	// before the field was a store of its own, which costs the call 3
	// cycles.
	Send int
	// Recv: the library's instructions of a successful poll, the upcall
	// dispatch and the release. Not what the model times: the loads of
	// the slot through the cache (one miss per line the NI's DMA wrote:
	// one for a message of up to lci.SlotInlineBytes, whose data shares
	// the header's line), the release's PIO store.
	// calibrated: 469 cycles, fitted to the PPro I-sdma receive overhead
	// or = 2.6 µs (Table III) of 16-byte messages, with the slot layout
	// of lci.SlotHeaderAt (one miss per poll hit). It was 422 when such a
	// poll hit cost two misses (header and data in different lines);
	// re-fitted after the layout saved one (51 cycles, 0.255 µs). (469
	// was held back while the fetch-and-add request carried a
	// DMA-fetched operand: it put that F&A, whose reply pays Recv, at
	// 20.01 µs, outside the calibration's 10%.)
	Recv int
	// Signal: the kernel delivering a network interrupt as a Unix signal
	// to the process. assumed: 4000 cycles (20 µs on the PPro).
	Signal int
	// Completion: a send completion found in the receive queue (mark the
	// send buffer free; the slot goes back like a packet's). assumed: 40.
	Completion int
	// Forward: I-sdma-hmc's forwarding of a multicast packet, per child,
	// on top of the send call it reuses (Send: the same code path,
	// literally: allocate a send buffer, the copy into the host send
	// buffer and the address and size field (I-sdma) or the PIO of the
	// data (I-pio), the descriptor's build and bookkeeping): take the
	// child from the root's tree, fill in its descriptor (child, index,
	// root, the root's sequence) and advance the ring. assumed: 20
	// cycles, the instruction count firmware/lci gives the NI's Forward
	// (make a descriptor for one child and enqueue it: 20) at CPI 1.
	Forward int

	// I-hrx's protocol work (hrx.go), on top of the paths above.
	//
	// HrxSend: a reliable packet's protocol part, per destination: number
	// it, append the window entry, read the timestamp counter and store
	// it, piggyback the acknowledgment owed into the descriptor's header
	// fields. Also paid by a retransmission and an explicit
	// acknowledgment, which build the same descriptor. calibrated: 260
	// cycles, fitted to the PPro I-hrx send overhead os = 3.3 µs (Table
	// III) of 16-byte messages.
	HrxSend int
	// HrxRecv: check a packet's header: its acknowledgment against the
	// window, its sequence against the one expected, count it towards an
	// acknowledgment, start the sender's acknowledgment timer (a counter
	// read). assumed: 60 cycles, three times I-nirx's NI-side RxRecv
	// estimate (16 instructions), for the library's larger data
	// structures (per-peer arrays and lists in cached memory) and a
	// timestamp read.
	HrxRecv int
	// HrxFree: per packet an acknowledgment frees: unlink the window
	// entry, drop the buffer's reference, return it to the free list.
	// assumed: 30 cycles (I-nirx's RxFree is 16 instructions; the same
	// work in the library's C, about two cycles an instruction on the
	// P6 with its loads and branches).
	HrxFree int
	// HrxTimer: each time the library runs, read the timestamp counter
	// and compare it with the earliest deadline. assumed: 40 cycles: the
	// P6's rdtsc (about 30 cycles, not serialising the pipeline would
	// be less) and a compare.
	HrxTimer int
	// Alarm: arming the OS alarm (a setitimer system call). assumed: 1000
	// cycles (5 µs on the PPro, 1 µs on the P3): a Linux 2.x system call
	// and the timer list update; the paper gives none, and says I-hrx
	// falls back on it «only when needed».
	Alarm int
}

// DefaultCosts returns the calibrated library costs.
func DefaultCosts() Costs {
	return Costs{Send: 337, Recv: 469, Signal: 4000, Completion: 40, Forward: 20, HrxSend: 260, HrxRecv: 60, HrxFree: 30, HrxTimer: 40, Alarm: 1000}
}

// Msg is a received packet, as the upcall sees it.
type Msg struct {
	Type uint8
	// Src is the sender (the root, for a multicast).
	Src int
	Tag uint32
	// Seq is the sender's sequence number for this destination (or the
	// root's multicast sequence); in a fetch-and-add reply, Tag is the
	// variable's old value.
	Seq  uint32
	Data []byte
	// At is when the poll found it.
	At   clock.Time
	slot uint64
	// reads are the addresses of the loads that read the slot's header and
	// data through the cache, issued when the packet is handled.
	reads []uint64
	// Keep, set by the upcall, keeps the packet for a later explicit
	// Release (out of order allowed).
	Keep bool
	// spilled: the library copied the packet out of its host buffer and
	// gave the buffer back (spill); Data is the library's copy and
	// Release does nothing more.
	spilled bool
	// wire is the packet's header as it came (I-hrx: the NI delivers it
	// in front of the data), wireReads the loads that read the slot's
	// flag and it.
	wire      lci.Header
	wireReads []uint64
}

// Handler is an upcall: sequential code that runs in the process's
// program s when a packet m is handed to it. What it does (s.Compute, a
// copy, even a Send) runs before the packet is released, unless it sets
// m.Keep and calls s.Release(m) later.
type Handler func(s *Seq, m *Msg)

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
	pending   queue.Queue[*Msg]   // taken while waiting for a send buffer or an F&A reply, for the next Recv

	// tree is the multicast forwarding tree (Init's); fwdQ the multicast
	// packets to forward (I-sdma-hmc), in the order the library took
	// them; forwarding is set while a program forwards (forwardMcast,
	// forwardQueued).
	tree       lci.Tree
	fwdQ       queue.Queue[fwdItem]
	forwarding bool

	// Counters.
	Sent, Received, Released uint64
	// Spilled counts the kept packets the library copied out of their host
	// buffers to free them (spill).
	Spilled uint64
	// Forwarded counts the multicast packets this host forwarded
	// (I-sdma-hmc), each one send buffer filled once; FwdDescs their
	// descriptors, one per child.
	Forwarded, FwdDescs uint64
	// upcallFn handles packets that arrive while the process waits inside
	// the library (for a send buffer or an F&A reply).
	upcallFn Handler

	deaf bool // test-only fault lci.deaf: its polls never find a packet

	// hrx is I-hrx's protocol (nil in the other variants); sigHandler
	// the process's OnSignal handler there.
	hrx        *hrxState
	sigHandler Handler
	// rc is I-rcpy's library state (rcpyseq.go; nil in the other
	// variants).
	rc *rcpyHost
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
	h.slotBytes = uint64(lci.SlotBytes(fw.MTU))
	for i := fw.SendBufs - 1; i >= 0; i-- {
		h.freeSend = append(h.freeSend, i)
	}
	// A write to host memory (the NI's DMA, landing behind the bridge)
	// may fill the slot a polling CPU waits on: wake it to look.
	m.SubscribeWrites(func(now clock.Time, _ mem.WriteEvent) { h.CPU.Wake(now) })
	if fw.Reliability == lci.HostRetransmit {
		h.hrx = newHrx(e, h)
	}
	if fw.Variant == lci.RCPY {
		h.rc = newRcpyHost(fw.SendBufs)
	}
	return h
}

// init writes what the host sets up before the first message (untimed, as
// at process start): the control block, the free host buffers and the
// multicast forwarding table.
func (h *Host) init(sram *mem.Storage, tree lci.Tree) error {
	h.tree = tree
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

// sendBufAddr is the host address of send buffer buf: the buffers are
// contiguous, one MTU each. The PCI bridge reads ahead of a DMA read
// (bus.BridgeConfig.PrefetchBytes), so the NI's read of one buffer may
// fetch the start of the next; the library's copy into that buffer
// (copyIn) stores through the cache, whose claim of each line (a read for
// ownership, or an address-only upgrade of a line it holds shared) makes
// the bridge drop what it read ahead of it, so the NI never gets stale
// bytes.
func (h *Host) sendBufAddr(buf int) uint64 { return sendData + uint64(buf)*uint64(h.fw.MTU) }

// copyIn is the library's memcpy of data into the host-resident send
// buffer at dst, as the CPU runs it: per cache line of the destination,
// the copy loop's instructions (a Compute) and then the line's bytes as
// one store through the CPU's cache (write-back memory), which the memory
// system times: a line the cache holds dirty takes the store at the hit
// time; a line it holds shared (the NI's DMA read it since) is claimed by
// an address-only upgrade on the memory bus; a line it does not hold is
// read for ownership. The store is posted, so the next line's
// instructions run while the claim is out, up to the cache's miss
// registers (memsys.CacheConfig.MaxMisses).
//
// The copy rate (Platform.CachedCopyBytesPerCycle) is the whole loop when
// both buffers are in the cache: its loads, its stores and its control.
// So that the stores are not charged twice, each line's Compute is the
// rate's cycles for the line less what the line's store costs the CPU when
// it hits (storeCycles). What the stores add beyond the rate is the memory
// traffic the rate does not include: claims of lines, and stalls on full
// queues.
func (s *Seq) copyIn(dst uint64, data []byte) {
	h := s.h
	data = slices.Clone(data)
	lb := uint64(h.plat.Host.LastLevel().LineBytes)
	for off := 0; off < len(data); {
		n := min(int(lb-(dst+uint64(off))%lb), len(data)-off)
		if c := h.copyCycles(n, false) - h.storeCycles(n); c > 0 {
			s.Compute(c)
		}
		s.Do(cpu.Op{Kind: cpu.Store, Addr: dst + uint64(off), Data: data[off : off+n], Burst: true})
		off += n
	}
}

// storeCycles is what a store of n bytes costs the CPU when the cache
// takes it at once: derived: host/cpu issues it in IssueCycles and pushes
// one beat of the cache port's width per cycle after the first.
func (h *Host) storeCycles(n int) int {
	w := h.plat.Host.LastLevel().PortWidthBytes
	return h.plat.Host.CPU.IssueCycles + (n+w-1)/w - 1
}

// readWord is the size of the loads that read a received packet: a 32-bit
// word, the width of the slot header's fields.
const readWord = 4

// reads returns the addresses of the loads that read [addr, addr+n) from
// the CPU's point of view: one word at the start of every cache line the
// range covers (the first touch of a line decides hit or miss; the rest of
// the line is within the library's Costs). A line the NI's DMA has written
// since the CPU last read it is not in the cache, so its load misses and
// fills it over the memory bus.
func (h *Host) reads(addr uint64, n int) []uint64 {
	lb := uint64(h.plat.Host.LastLevel().LineBytes)
	var at []uint64
	for l := addr / lb; l <= (addr+uint64(max(n, 1))-1)/lb; l++ {
		at = append(at, max(l*lb, addr))
	}
	return at
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

// fragments cuts a message into packets of at most the MTU (the last may
// be shorter; a message that fits, even an empty one, is one packet).
func (h *Host) fragments(data []byte) [][]byte {
	mtu := h.fw.MTU
	if len(data) <= mtu {
		return [][]byte{data}
	}
	pieces := make([][]byte, 0, (len(data)+mtu-1)/mtu)
	for off := 0; off < len(data); off += mtu {
		pieces = append(pieces, data[off:min(off+mtu, len(data))])
	}
	return pieces
}

// take takes the packet at the head of the receive queue if its flag says
// it is full: «The host ... detects newly arrived packets by checking a
// full/empty flag in the buffer at the head of the queue.»
func (h *Host) take(now clock.Time) *Msg {
	if h.ring.Len() == 0 || h.deaf {
		return nil
	}
	slot := *h.ring.Front()
	hdrAt := slot + uint64(lci.SlotHeaderAt(h.fw.MTU))
	b, _ := h.mem.Storage().Bytes(hdrAt, lci.HeaderBytes)
	sh := lci.DecodeSlotHeader(b)
	if sh.Flag != h.expect {
		return nil
	}
	h.ring.Pop()
	h.expect++
	data, _ := h.mem.Storage().Bytes(hdrAt-uint64(sh.Len), int(sh.Len))
	h.Received++
	// The header's line first (the flag the poll found), then the data's
	// lines but the header's: up to lci.SlotInlineBytes of data share it
	// (lci.SlotHeaderAt), so a 16-byte message is one line, one miss.
	reads := h.reads(hdrAt, lci.HeaderBytes)
	if sh.Len > 0 {
		lb := uint64(h.plat.Host.LastLevel().LineBytes)
		for _, at := range h.reads(hdrAt-uint64(sh.Len), int(sh.Len)) {
			if at/lb != hdrAt/lb {
				reads = append(reads, at)
			}
		}
	}
	m := &Msg{Type: sh.Type, Src: int(sh.Src), Tag: sh.Tag, Seq: sh.Arg, Data: data, At: now, slot: slot, reads: reads}
	if h.hrx != nil && sh.Type != lci.TypeCompl {
		// I-hrx: the packet's header, in front of the data; its lines
		// after the slot header's.
		at := hdrAt - uint64(sh.Len) - lci.HeaderBytes
		b, _ := h.mem.Storage().Bytes(at, lci.HeaderBytes)
		m.wire = lci.DecodeHeader(b)
		m.wireReads = h.reads(hdrAt, lci.HeaderBytes)
		lb := uint64(h.plat.Host.LastLevel().LineBytes)
		for _, a := range h.reads(at, lci.HeaderBytes) {
			if a/lb != hdrAt/lb {
				m.wireReads = append(m.wireReads, a)
			}
		}
	}
	return m
}

// next is the packet a Recv handles next: one kept while the process
// waited inside the library, else the head of the receive queue.
func (h *Host) next(now clock.Time) *Msg {
	if h.pending.Len() > 0 {
		return h.pending.Pop()
	}
	return h.take(now)
}

// drainForBuffer looks through the receive queue for send completions
// when the process has no free send buffer: it returns the completions
// found (and, if the process has an upcall, the first packet, which ends
// the look); other packets are kept for the next Recv. A fetch-and-add
// reply is kept for the FetchAndAdd that waits for it (pendingReply),
// never passed to the upcall: with I-sdma-hmc a forward waits for a send
// buffer inside that wait.
func (h *Host) drainForBuffer(now clock.Time) []*Msg {
	var found []*Msg
	for {
		m := h.take(now)
		switch {
		case m == nil:
			return found
		case m.Type == lci.TypeCompl, m.Type == lci.TypeRcpy && h.rc != nil:
			// (an I-rcpy miss notification is the library's own)
			found = append(found, m)
		case m.Type == lci.TypeFARep:
			h.pending.Push(m)
		case h.upcallFn != nil:
			return append(found, m)
		default:
			h.pending.Push(m)
		}
	}
}

// Go makes a sequential program of the node's process (cpu.Go): fn calls
// the library through s and returns when the process is done.
func (h *Host) Go(fn func(s *Seq)) cpu.Op {
	return cpu.Go(func(p *cpu.Proc) { fn(&Seq{Proc: p, h: h}) })
}

// Run sets the process's program fn up before the simulation runs (its
// processor starts it at its first edge).
func (h *Host) Run(fn func(s *Seq)) { h.CPU.Run(h.Go(fn)) }

// OnSignal makes network interrupts run handler on every waiting packet:
// «The host passes network interrupts as Unix signals to the application.
// The signal handler in the LCI library responds to the signal by polling
// the host receive queue». The signal handler is a sequential program of
// its own (cpu.SetInterruptProgram): the kernel's delivery (Costs.Signal),
// then TryRecv; an interrupt is taken between the process's operations or
// inside its computes and waits (a Recv waiting, a Send waiting for a
// buffer), which look at the queue again when it returns.
func (h *Host) OnSignal(handler Handler) {
	if h.hrx != nil {
		h.sigHandler = handler // the library's own handler calls it
		return
	}
	h.CPU.SetInterruptProgram(func(p *cpu.Proc) {
		s := &Seq{Proc: p, h: h}
		s.Compute(h.costs.Signal)
		s.TryRecv(handler)
	})
}

// Node returns the node number.
func (h *Host) Node() int { return h.node }

// Memory returns the host memory.
func (h *Host) Memory() *mem.Memory { return h.mem }

// Seq is the library in sequential form: a process's program on its host
// (Host.Go), reading like section 2's description of the client. It
// embeds the processor's handle (s.Compute, s.Now, s.Load, s.WaitUntil,
// ...); each library call issues its operations (computes for the
// library's code, PIO stores to the card, loads of received slots) and
// returns when they have retired, with its result.
type Seq struct {
	*cpu.Proc
	h *Host
}

// Host returns the library the program calls.
func (s *Seq) Host() *Host { return s.h }

// Send sends data (at most the MTU) to node dst with a tag: «an LCI
// client allocates a send buffer in network interface (NI) memory (step 1)
// and it writes a descriptor telling the NI to use DMA to transfer the
// data, or (2) uses programmed I/O (PIO) to copy data into this packet
// buffer directly. Next, the client hands the packet to a point-to-point
// or multicast routine which passes a send request to the NI (3).» It
// returns when the descriptor's store has retired.
func (s *Seq) Send(dst int, data []byte, tag uint32) { s.send(lci.TypeData, dst, data, tag) }

// Multicast sends data (at most the MTU) to every other node along the
// forwarding tree rooted at this node.
func (s *Seq) Multicast(data []byte, tag uint32) { s.send(lci.TypeMcast, s.h.node, data, tag) }

// SendMessage sends a message of any size to node dst as packets of at
// most the MTU (the last may be shorter), all with the same tag.
func (s *Seq) SendMessage(dst int, data []byte, tag uint32) {
	for _, piece := range s.h.fragments(data) {
		s.Send(dst, piece, tag)
	}
}

// MulticastMessage multicasts a message of any size, packet by packet.
func (s *Seq) MulticastMessage(data []byte, tag uint32) {
	for _, piece := range s.h.fragments(data) {
		s.Multicast(piece, tag)
	}
}

// send is a send call of a packet of type typ; false (reported) if the
// call is refused.
func (s *Seq) send(typ uint8, dst int, data []byte, tag uint32) bool {
	h := s.h
	if len(data) > h.fw.MTU {
		h.env.Report(s.Now(), h.name, "lci.api", "send of %d bytes exceeds the %d-byte MTU", len(data), h.fw.MTU)
		return false
	}
	if typ != lci.TypeMcast && (dst < 0 || dst >= h.nodes || (dst == h.node && typ != lci.TypeFAReq)) {
		h.env.Report(s.Now(), h.name, "lci.api", "send to node %d from node %d of %d", dst, h.node, h.nodes)
		return false
	}
	if h.hrx != nil {
		s.hrxSend(typ, dst, data, tag)
		return true
	}
	buf := s.sendBuffer()
	d := lci.Desc{Seq: h.descSeq, Type: typ, Dst: uint8(dst), Len: uint16(len(data)), Buf: uint32(buf), Tag: tag}
	h.descSeq++
	h.Sent++
	s.Compute(h.costs.Send)
	s.stage(buf, data)
	s.pio(h.descSlot(d.Seq), d.Encode())
	return true
}

// descSlot is the SRAM address of the send queue slot of descriptor seq.
func (h *Host) descSlot(seq uint32) uint32 {
	return h.lay.SendQ + uint32(int(seq-1)%h.lay.SendQSlots*lci.DescBytes)
}

// stage brings a packet's data towards NI send buffer buf, by the
// variant's method, before its descriptor: I-sdma's copy into the host
// send buffer and address and size field, I-pio's PIO of the data.
func (s *Seq) stage(buf int, data []byte) {
	h := s.h
	if h.fw.Variant == lci.SDMA {
		// «write the message data to a host-resident packet queue»
		// (MY-P32), from which the NI fetches it, and «writes an address
		// and size field, instructing the NI to transfer the user data to
		// the buffer using DMA» (section 4.1): PIO stores into the send
		// buffer, as I-pio's data («the PIO data transfers in I-pio are in
		// fact no more costly than the host-level DMA preparation
		// overhead in I-sdma», section 5.2.4). An empty packet has
		// nothing to fetch.
		at := h.sendBufAddr(buf)
		s.copyIn(at, data)
		if len(data) > 0 {
			s.pio(h.lay.SendBuf(buf), lci.Fetch{Addr: uint32(at), Len: uint32(len(data))}.Encode())
		}
	} else {
		s.pio(h.lay.SendBuf(buf)+lci.HeaderBytes, data)
	}
}

// fwdItem is a multicast packet this host forwards (I-sdma-hmc): its
// root, the root's sequence, the tag, the data and the children.
type fwdItem struct {
	root int
	seq  uint32
	tag  uint32
	data []byte
	kids []int
}

// forwardMcast forwards multicast packet m to this node's children in
// its root's tree (I-sdma-hmc, section 5.4): «When a host must forward a
// packet to a set of children, I-sdma-hmc issues a data transfer to NI
// memory only once and transmits the same NI buffer multiple times.» It
// runs when the library takes m from the receive queue, so «a packet or
// message is not forwarded unless the forwarding host polls or takes an
// interrupt»: at once, before the upcall, when a send buffer is free and
// no earlier packet waits to be forwarded; otherwise m is queued (the
// library keeps its data; the copy into the host send buffer, charged in
// stage, is made when it goes) and forwardQueued sends it after the
// upcall. Waiting for a send buffer before the upcall would pass the
// packets found meanwhile to the upcall first, or hold their host buffers
// (which the send completions it waits for need). Packets are forwarded in
// the order the library took them (FIFO per root).
func (s *Seq) forwardMcast(m *Msg) {
	h := s.h
	kids := h.tree.Children(m.Src, h.node, h.nodes)
	if len(kids) == 0 {
		return
	}
	f := fwdItem{root: m.Src, seq: m.Seq, tag: m.Tag, data: slices.Clone(m.Data), kids: kids}
	if h.forwarding || h.fwdQ.Len() > 0 || len(h.freeSend) == 0 {
		h.fwdQ.Push(f)
		return
	}
	h.forwarding = true
	s.forward(f)
	h.forwarding = false
}

// forwardQueued forwards the queued packets (forwardMcast), unless a
// program of this host is forwarding already (it sends them): each waits
// for a send buffer as a send call does, passing the packets found
// meanwhile to the upcall, which queues the multicasts among them behind.
func (s *Seq) forwardQueued() {
	h := s.h
	if h.forwarding {
		return
	}
	h.forwarding = true
	for h.fwdQ.Len() > 0 {
		s.forward(*h.fwdQ.Front())
		h.fwdQ.Pop()
	}
	h.forwarding = false
}

// forward is one packet's forward: a send call's buffer, code (Send)
// and data transfer (stage: one host-to-NI transfer), then a descriptor
// per child (Forward each) naming that buffer (lci.DescHostFwd), the
// first of which brings the data into the NI.
func (s *Seq) forward(f fwdItem) {
	h := s.h
	buf := s.sendBuffer()
	h.Forwarded++
	s.Compute(h.costs.Send)
	s.stage(buf, f.data)
	for i, k := range f.kids {
		s.Compute(h.costs.Forward)
		d := lci.Desc{Seq: h.descSeq, Type: lci.TypeMcast, Dst: uint8(k), Len: uint16(len(f.data)), Buf: uint32(buf), Tag: f.tag,
			Flags: lci.DescHostFwd, Root: uint8(f.root), RootSeq: f.seq, Kids: uint8(len(f.kids)), Index: uint8(i)}
		h.descSeq++
		h.FwdDescs++
		s.pio(h.descSlot(d.Seq), d.Encode())
	}
}

// sendBuffer takes a free send buffer. With none free it waits, looking
// through the receive queue whenever woken: the send completions it finds
// free buffers (and are handled, in the order found), a packet goes to the
// upcall, others are kept for the next Recv; then it tries again.
func (s *Seq) sendBuffer() int {
	h := s.h
	for {
		var found []*Msg
		s.WaitUntil(func() bool {
			if len(h.freeSend) > 0 {
				return true
			}
			found = h.drainForBuffer(s.Now())
			return len(found) > 0 || h.mustSpill()
		})
		if len(found) == 0 {
			if len(h.freeSend) == 0 {
				s.spill()
				continue
			}
			buf := h.freeSend[len(h.freeSend)-1]
			h.freeSend = h.freeSend[:len(h.freeSend)-1]
			return buf
		}
		for _, m := range found {
			s.handle(m, h.upcallFn)
		}
	}
}

// Recv waits (polling) for the next packet and runs handler on it, then
// releases it unless the handler kept it. The poll that finds it, the
// upcall and the release cost the loads of the slot through the cache
// (misses on every line the NI wrote), Costs.Recv and the PIO that returns
// the buffer. Send completions found on the way are handled and do not
// count.
func (s *Seq) Recv(handler Handler) {
	if s.h.hrx != nil {
		s.hrxRecv(handler, nil)
		return
	}
	for {
		var m *Msg
		s.WaitUntil(func() bool {
			m = s.h.next(s.Now())
			return m != nil
		})
		if s.handle(m, handler) {
			return
		}
	}
}

// RecvOr is Recv that also gives up waiting once stop holds: it returns
// true when it has handled a packet, false when stop held with no packet
// waiting. stop is evaluated whenever the processor is woken (a packet's
// arrival, or CPU.Wake from whatever makes it true).
func (s *Seq) RecvOr(handler Handler, stop func() bool) bool {
	if s.h.hrx != nil {
		return s.hrxRecv(handler, stop)
	}
	for {
		var m *Msg
		s.WaitUntil(func() bool {
			m = s.h.next(s.Now())
			return m != nil || stop()
		})
		if m == nil {
			return false
		}
		if s.handle(m, handler) {
			return true
		}
	}
}

// TryRecv handles every packet already there and returns how many it
// passed to handler (a poll that does not wait). Each look at the queue is
// an operation of its own, so an interrupt pending before it is taken
// first.
func (s *Seq) TryRecv(handler Handler) int {
	if s.h.hrx != nil {
		return s.hrxTryRecv(handler)
	}
	n := 0
	for {
		var m *Msg
		s.PollUntil(func() bool {
			m = s.h.next(s.Now())
			return true
		})
		if m == nil {
			return n
		}
		if s.handle(m, handler) {
			n++
		}
	}
}

// handle runs a packet taken from the receive queue: a send completion
// marks its send buffer free at once and costs Costs.Completion; any other
// packet goes to the upcall handler (Costs.Recv). Either's slot is read
// through the cache first and released after, unless the upcall kept it.
// It reports whether m went to the upcall.
func (s *Seq) handle(m *Msg, handler Handler) bool {
	h := s.h
	compl := m.Type == lci.TypeCompl
	// note: an I-rcpy receive-miss notification, the library's own
	// (rcpyMiss), no upcall.
	note := m.Type == lci.TypeRcpy && h.rc != nil
	cost := h.costs.Recv
	if compl {
		h.freeSend = append(h.freeSend, int(m.Tag))
		if h.rc != nil {
			h.rc.completed(int(m.Tag))
		}
		cost = h.costs.Completion
	}
	if note {
		// assumed: Completion's 40 cycles to decode the notification,
		// on top of the miss handling (pin, copy, PIO) it starts.
		cost = h.costs.Completion
	}
	for _, at := range m.reads {
		s.Load(at, readWord)
	}
	s.Compute(cost)
	if note {
		s.rcpyMiss(m)
	}
	if !compl && m.Type == lci.TypeMcast && h.fw.HostForward {
		s.forwardMcast(m)
	}
	if !compl && !note && handler != nil {
		handler(s, m)
	}
	if !m.Keep {
		s.Release(m)
	}
	if h.fwdQ.Len() > 0 {
		s.forwardQueued()
	}
	return !compl && !note
}

// Release gives a packet's host buffer back to the NI (explicit release;
// out of order is allowed): its address goes into the Recv Completions
// queue in NI memory by PIO.
func (s *Seq) Release(m *Msg) {
	h := s.h
	if m.spilled {
		return // the library gave its buffer back when it copied it out
	}
	rec := lci.Free{Seq: h.freeSeq, Addr: m.slot}
	slot := h.lay.FreeQ + uint32(int(rec.Seq-1)%h.lay.FreeQSlots*lci.FreeBytes)
	h.freeSeq++
	h.ring.Push(m.slot)
	h.Released++
	s.pio(slot, rec.Encode())
}

// FetchAndAdd adds add to node's fetch-and-add variable and returns its
// old value; node may be this one («each NI maintains a single
// fetch-and-add variable that can be accessed by any host», section 4.3:
// the NI serves its own host's request without the network). The request is a send call without data whose descriptor
// carries the addend as its tag (lci.Desc): the NI builds the request
// packet from the descriptor alone, so neither I-sdma's DMA fetch nor
// I-pio's PIO of data precedes it. The paper's P3 round trip (7.4 µs,
// Table III) is shorter than its one-way end-to-end latency (8.8 µs),
// which includes that fetch. While the process waits for the reply, send
// completions are handled and packets go to the upcall or are kept for
// the next Recv. The reply costs the loads of its slot, Costs.Recv and
// its release. A refused request (reported) returns 0.
func (s *Seq) FetchAndAdd(node int, add uint32) uint32 {
	h := s.h
	if h.hrx != nil {
		if node < 0 || node >= h.nodes {
			h.env.Report(s.Now(), h.name, "lci.api", "send to node %d from node %d of %d", node, h.node, h.nodes)
			return 0
		}
		return s.hrxFetchAndAdd(node, add)
	}
	if !s.send(lci.TypeFAReq, node, nil, add) {
		return 0
	}
	for {
		var m *Msg
		s.WaitUntil(func() bool {
			// A reply kept while a send call inside this wait waited
			// for a send buffer (drainForBuffer).
			if m = h.pendingReply(); m != nil {
				return true
			}
			for {
				if m = h.take(s.Now()); m == nil {
					return h.mustSpill()
				}
				if m.Type == lci.TypeCompl || m.Type == lci.TypeFARep || h.upcallFn != nil {
					return true
				}
				h.pending.Push(m)
			}
		})
		if m == nil {
			s.spill()
			continue
		}
		if m.Type == lci.TypeFARep {
			s.handle(m, nil) // the reply is a packet without an upcall
			return m.Tag
		}
		s.handle(m, h.upcallFn)
	}
}

// mustSpill tells a wait inside the library (for a send buffer, for a
// fetch-and-add reply) that it can never end as things stand: every host
// buffer holds a packet the library has taken and not released, and some
// of them are packets it keeps for the next Recv. What the wait needs (a
// send completion, the reply) comes through the same receive queue, and
// the NI has no host buffer left to deliver it in.
func (h *Host) mustSpill() bool {
	if int(h.Received-h.Released) < h.fw.HostSlots {
		return false
	}
	for i := range h.pending.Len() {
		if !(*h.pending.At(i)).spilled {
			return true
		}
	}
	return false
}

// spill copies the oldest packet the library keeps in a host buffer out of
// it and gives the buffer back, so that the NI can deliver what a wait
// needs: the host-level receive queue «can be extended on demand»
// (section 5.1.2, of the host library's queue in I-hrx). The copy reads the
// slot through the cache (its loads) and costs memcpy's cycles; the packet
// stays in its place among those kept, with the library's copy as its
// data.
func (s *Seq) spill() {
	h := s.h
	for i := range h.pending.Len() {
		m := *h.pending.At(i)
		if m.spilled {
			continue
		}
		for _, at := range m.reads {
			s.Load(at, readWord)
		}
		m.reads = nil
		s.Compute(h.copyCycles(len(m.Data), false))
		m.Data = slices.Clone(m.Data)
		s.Release(m)
		m.spilled = true
		h.Spilled++
		return
	}
}

// pendingReply takes the first fetch-and-add reply out of the packets kept
// for the next Recv, leaving the others in their order (nil: none).
func (h *Host) pendingReply() *Msg {
	var r *Msg
	for range h.pending.Len() {
		m := h.pending.Pop()
		if r == nil && m.Type == lci.TypeFARep {
			r = m
			continue
		}
		h.pending.Push(m)
	}
	return r
}

// pio writes data to SRAM address at with stores, one write-combining
// burst per WCBytes-aligned piece.
func (s *Seq) pio(at uint32, data []byte) {
	addr := NIBase + uint64(at)
	wc := uint64(s.h.plat.WCBytes())
	for off := 0; off < len(data); {
		n := min(int(wc-(addr+uint64(off))%wc), len(data)-off)
		s.Do(cpu.Op{Kind: cpu.Store, Addr: addr + uint64(off), Data: data[off : off+n], Burst: true})
		off += n
	}
}
