package svm

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
)

// Message types (a request's seal's low byte).
const (
	mPageReq  = 1 + iota // [pg, reqID, vc...] to the page's home
	mDiff                // [interval, runs...] to the home; acknowledged
	mLockReq             // [l, reqID, vc...] to the lock's manager
	mLockFwd             // [l, requester, reqID, asked, vc...] manager to the last requester
	mFlagSet             // [f, v] to the flag's manager; acknowledged
	mFlagWait            // [f, v, reqID, vc...] to the flag's manager
	mFlagFwd             // [f, requester, reqID, vc...] manager to the flag's setter
	mArrive              // [reqID, vc..., bitmap...] to the barrier manager
	// Replies (the reply slot's seal).
	rPage    // a page's seal (the page itself went before it)
	rGrant   // [vc..., mask, bitmaps...] a lock or flag grant, a barrier release
	rRetry   // a page the home cannot serve yet (its timestamps are behind)
	typeBits = 8
)

// ackWanted is whether a request type is acknowledged (its sender waits on
// a window of them): the requests no reply answers.
func ackWanted(t int) bool { return t == mDiff || t == mFlagSet }

// seal packs a message's last word: its type, its payload's length in
// words, its sender and its sequence number (a request's number in its
// sender's ring, a reply's request ID), written last so that its arrival
// means the whole message has (the NI delivers a transfer's bytes in
// order, and a message is one transfer within one page).
func seal(t, words, src int, seq uint32) uint64 {
	return uint64(t) | uint64(words)<<8 | uint64(src)<<24 | uint64(seq)<<32
}

func unseal(w uint64) (t, words, src int, seq uint32) {
	return int(w & 0xff), int(w >> 8 & 0xffff), int(w >> 24 & 0xff), uint32(w >> 32)
}

// Instruction counts of the messaging bookkeeping (assumed: the paper gives
// no path lengths; estimates of the C the step stands for).
const (
	// instrMsg: building or parsing a message's header, the ring index
	// arithmetic, the dispatch. assumed: 30.
	instrMsg = 30
	// spinInstrs: one iteration of a wait loop besides its load (a
	// compare, a branch, a pause). assumed: 30 instructions, half a
	// microsecond at 60 MHz, so that a waiting processor leaves the memory
	// bus mostly to the NI's incoming DMA.
	spinInstrs = 30
)

// poll waits until the word at addr satisfies ok and returns it: a wait
// loop of loads. With the testbench's Peek the loop's iterations are not
// simulated one by one: the processor sleeps (cpu.Proc.WaitUntil) until the
// word, as memory holds it, satisfies ok (the testbench wakes a node's
// processor whenever a packet reaches its memory; a notification
// handler's return re-evaluates too), then loads it. assumed: the real
// loop's loads hit the cache until the incoming DMA invalidates the line,
// so they cost the memory bus nothing, and it sees the word within one
// iteration (spinInstrs, half a microsecond), which the model takes as
// none. Without Peek each iteration is a polling step (a load and
// spinInstrs instructions).
func (pr *Process) poll(p *cpu.Proc, label string, addr uint64, ok func(uint64) bool) uint64 {
	peek := pr.rt.hooks.Peek
	for {
		r := p.Step(cpu.Step{Label: label, Instrs: spinInstrs + 1, Poll: true,
			Accesses: []cpu.Access{{Addr: addr, Len: 8}}})
		if w := binary.LittleEndian.Uint64(r[0]); ok(w) {
			return w
		}
		if peek != nil {
			p.As(label).WaitUntil(func() bool {
				b := peek(pr.id, addr, 8)
				return b != nil && ok(binary.LittleEndian.Uint64(b))
			})
		}
	}
}

// stage writes words at addr (the message staging page): real stores.
func stage(p *cpu.Proc, addr uint64, words []uint64) {
	for i, w := range words {
		p.As("svm.stage").Store(addr+8*uint64(i), le64(w))
	}
}

// outArea is the staging page for p: the handler's when it runs in the
// notification handler.
func (pr *Process) outArea() uint64 {
	if pr.inIntr {
		return pr.rt.lay.OutIntr
	}
	return pr.rt.lay.OutMain
}

// request sends a request of type t to node dst's ring: the payload and
// its seal at the end of the slot, one deliberate-update send with a
// notification (section 4.4: «The SVM implementation relies on the
// notification mechanism»). An acknowledged request first waits for room
// in its window.
func (pr *Process) request(p *cpu.Proc, dst, t int, payload []uint64) {
	pr.requestN(p, dst, t, payload, true)
}

// requestN is request with the notification asked for or not: a batch of
// messages to one node (a release's diffs for one home) notifies on its
// last one, the handler draining the whole ring (assumed: one notification
// per batch; the NI's notification queue holds 64 records, which one
// notification a diff message overflowed at a home of Radix at 262,144
// keys). A message that fills its window always notifies: its sender is
// about to wait for the acknowledgements.
func (pr *Process) requestN(p *cpu.Proc, dst, t int, payload []uint64, notify bool) {
	rt, l := pr.rt, pr.rt.lay
	if dst == pr.id {
		rt.fail(fmt.Errorf("svm: node %d sends itself a type %d request", pr.id, t))
		return
	}
	ack := ackWanted(t)
	if ack && rt.mut.noWindow == 0 {
		for pr.window[dst]-pr.acked[dst] >= ringSpare {
			w := pr.poll(p, "svm.window", l.Ack+8*uint64(dst), func(w uint64) bool {
				return uint32(w)-pr.acked[dst] > 0
			})
			pr.acked[dst] = uint32(w)
		}
	}
	if len(payload)+1 > l.SlotBytes/8 {
		rt.fail(fmt.Errorf("svm: node %d: a %d-word type %d message exceeds a slot", pr.id, len(payload), t))
		return
	}
	// The sequence number is taken before the first operation: the
	// notification handler may send to the same node between the
	// program's operations, and must take the next one.
	seq := pr.sent[dst] + 1
	pr.sent[dst] = seq
	k := int((seq - 1) % uint32(l.Ring))
	rt.chk.ring(pr, dst, seq)
	n := (len(payload) + 1) * 8
	off := l.SlotBytes - n
	out := pr.outArea() + uint64(off)
	step(p, "svm.msg", instrMsg)
	stage(p, out, append(payload, seal(t, len(payload), pr.id, seq)))
	remote := l.slot(pr.id, k) + uint64(off) - l.Inbox
	if ack {
		pr.window[dst]++
		notify = notify || pr.window[dst]-pr.acked[dst] >= ringSpare
	}
	pr.event(p, EvSend, -1, dst, t)
	pr.send(p, out, pr.inbox[dst], remote, n, notify)
	pr.stats.Requests[t]++
}

// send is a VMMC deliberate update, counted.
func (pr *Process) send(p *cpu.Proc, src uint64, px *vmmc.Proxy, off uint64, n int, notify bool) {
	if err := pr.vp.Send(p, src, px, off, n, notify); err != nil {
		pr.rt.fail(fmt.Errorf("svm: node %d: %w", pr.id, err))
	}
	pr.stats.Messages++
	if notify {
		pr.stats.Notifying++
	}
}

// replyTo sends a reply to node dst's reply slot, sealed with request ID
// tag: the payload and its seal at the end of the page.
func (pr *Process) replyTo(p *cpu.Proc, dst int, tag uint32, t int, payload []uint64) {
	l := pr.rt.lay
	n := (len(payload) + 1) * 8
	off := l.page - n
	out := pr.outArea() + uint64(off)
	step(p, "svm.msg", instrMsg)
	stage(p, out, append(payload, seal(t, len(payload), pr.id, tag)))
	pr.event(p, EvReply, -1, dst, t)
	pr.send(p, out, pr.reply[dst], uint64(off), n, false)
}

// awaitReply waits for the reply to request tag in the reply slot and
// returns its payload (real loads).
func (pr *Process) awaitReply(p *cpu.Proc, tag uint32, label string) (t, src int, payload []uint64) {
	l := pr.rt.lay
	sl := l.Reply + uint64(l.page) - 8
	w := pr.poll(p, label, sl, func(w uint64) bool {
		_, _, _, seq := unseal(w)
		return seq == tag && w != 0
	})
	t, n, src, _ := unseal(w)
	payload = make([]uint64, n)
	for i := range payload {
		payload[i] = binary.LittleEndian.Uint64(p.As("svm.rxload").Load(sl-8*uint64(n-i), 8))
	}
	return t, src, payload
}

// notified is the notification handler (vmmc.Process.OnNotify): it runs
// in the kernel's interrupt program and drains every sender's ring, then
// acknowledges the consumed requests that want it.
func (pr *Process) notified(p *cpu.Proc, n shrimp.Notification) {
	was := pr.inIntr
	pr.inIntr = true
	from := p.Now()
	pr.stats.Handlers++
	pr.drain(p)
	pr.inIntr = was
	pr.times.Handler += p.Now() - from
}

// drain handles every request waiting in the rings, in sender order, then
// sends the acknowledgements due.
func (pr *Process) drain(p *cpu.Proc) {
	l := pr.rt.lay
	for {
		any := false
		for src := range pr.rt.cfg.Nodes {
			if src == pr.id {
				continue
			}
			for {
				seq := pr.recvd[src] + 1
				k := int((seq - 1) % uint32(l.Ring))
				end := l.slot(src, k) + uint64(l.SlotBytes) - 8
				w := binary.LittleEndian.Uint64(p.As("svm.rxseal").Load(end, 8))
				t, words, s, got := unseal(w)
				if got != seq || s != src || w == 0 {
					break
				}
				payload := make([]uint64, words)
				for i := range payload {
					payload[i] = binary.LittleEndian.Uint64(p.As("svm.rxload").Load(end-8*uint64(words-i), 8))
				}
				step(p, "svm.msg", instrMsg)
				pr.recvd[src] = seq
				pr.event(p, EvRecv, -1, src, t)
				if ackWanted(t) {
					pr.recvAck[src]++
				}
				pr.handle(p, src, t, payload)
				any = true
			}
		}
		if !any {
			break
		}
	}
	for src := range pr.rt.cfg.Nodes {
		if src != pr.id && pr.recvAck[src] != pr.ackOut[src] {
			pr.sendAck(p, src)
		}
	}
}

// sendAck writes the count of src's acknowledged requests consumed into
// src's acknowledgement word for this node (one 8-byte deliberate update,
// no notification: the sender polls it).
func (pr *Process) sendAck(p *cpu.Proc, src int) {
	out := pr.outArea()
	pr.ackOut[src] = pr.recvAck[src]
	stage(p, out, []uint64{uint64(pr.recvAck[src])})
	pr.event(p, EvAck, -1, src, int(pr.recvAck[src]))
	pr.send(p, out, pr.ack[src], 8*uint64(pr.id), 8, false)
	pr.stats.Acks++
}
