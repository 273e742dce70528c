package cashmere

import (
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// Protocol events (issue 18 section 4, design section 8): the runtime tells
// Hooks.Event of each step of sections 2.3-2.5 as a processor takes it, in
// integer picoseconds of simulated time, with processor, node and page
// numbers only, so a testbench can record them beside the Memory Channel's
// transactions (verify/testbench/cashtb's goldens). With Hooks.Event nil
// nothing is built or called: the runtime's timing is the same either way,
// since an event is only a report of what a processor just did.

// EventKind names a protocol event; it is the kind of the trace record a
// testbench makes of it.
type EventKind string

// The events, with the meaning of Event.Peer and Event.Arg for each (-1 in
// Peer or Arg: not used).
const (
	// EvReadFault and EvWriteFault: the page-fault handler begins
	// (section 2.4.1), after the platform's fault entry and signal
	// delivery.
	EvReadFault  EventKind = "cm.fault.read"
	EvWriteFault EventKind = "cm.fault.write"
	// EvMapped: the fault handler's mprotect has returned; Arg the
	// processor's new permission (1 read, 3 read-write).
	EvMapped EventKind = "cm.mapped"
	// EvHome: the first touch fixed the page's superpage home (section
	// 2.3); Peer the home.
	EvHome EventKind = "cm.home"
	// EvDir: the node's directory word of the page written by doubling
	// (section 2.3); Arg the node's loosest permission in it.
	EvDir EventKind = "cm.dir"
	// EvFetchRequest: a page request is in the transmit window, poll flag
	// included (section 2.3 «explicit inter-node requests»); Peer the home
	// (or an exclusive holder), Arg 1 when it asks the holder to break
	// exclusive mode.
	EvFetchRequest EventKind = "cm.fetch.request"
	// EvServe: a polling processor of the home starts answering a
	// request (Figure 3's handler); Peer the requester.
	EvServe EventKind = "cm.fetch.serve"
	// EvFetchReply: the requester has seen the reply's sequence number,
	// so the page is in its reply buffer; Peer the node that replied, Arg
	// the bytes (a page).
	EvFetchReply EventKind = "cm.fetch.reply"
	// EvFetchCopied: the page is copied in from the reply buffer; Arg 1
	// when through the twin (the incoming diff, section 2.2).
	EvFetchCopied EventKind = "cm.fetch.copied"
	// EvTwin: a twin has been made (section 2.2).
	EvTwin EventKind = "cm.twin"
	// EvDiff: an outgoing diff is in the transmit window of the home's
	// copy (section 2.2, 2.5); Peer the home, Arg the words sent.
	EvDiff EventKind = "cm.diff"
	// EvFlush and EvFlushed: an MC flush's loop-back write issued and
	// seen back (section 2.2); Arg its value.
	EvFlush   EventKind = "cm.flush"
	EvFlushed EventKind = "cm.flushed"
	// EvRelease and EvAcquire: a release's or an acquire's consistency
	// actions begin (sections 2.4.3, 2.4.2).
	EvRelease EventKind = "cm.release"
	EvAcquire EventKind = "cm.acquire"
	// EvNoticeSend: a write notice is in the node's bin at Peer (Figure
	// 2).
	EvNoticeSend EventKind = "cm.notice.send"
	// EvNoticeRecv: an acquire read a notice from Peer's bin; EvNoticeDist
	// put it on processor Arg's list (section 2.4.2; its record's key is
	// list, since proc names the distributing processor).
	EvNoticeRecv EventKind = "cm.notice.recv"
	EvNoticeDist EventKind = "cm.notice.dist"
	// EvInvalidate: an acquire removed the processor's mapping of a page
	// whose copy is older than its write notice (section 2.4.2).
	EvInvalidate EventKind = "cm.invalidate"
	// Lock events (section 2.3), Arg the application's lock (-1: the
	// protocol's own, for home relocation): EvLockNode the node's LL/SC
	// test-and-set flag taken; EvLockEntry the node's array entry seen
	// back through loop-back with value Peer (1 set, 0 cleared);
	// EvLockHeld the array read with no other entry set; EvLockLost the
	// array read with another entry set (the entry is then cleared and
	// the processor backs off); EvLockFree the node's flag released after
	// the cleared entry came back.
	EvLockNode  EventKind = "cm.lock.node"
	EvLockEntry EventKind = "cm.lock.entry"
	EvLockHeld  EventKind = "cm.lock.held"
	EvLockLost  EventKind = "cm.lock.lost"
	EvLockFree  EventKind = "cm.lock.free"
	// Barrier events (section 2.3), Arg the episode: EvBarrierArrive the
	// processor arrived (before its flushes), EvBarrierNode the node's
	// arrival written to the broadcast array, EvBarrierExit the processor
	// departs after its acquire.
	EvBarrierArrive EventKind = "cm.barrier.arrive"
	EvBarrierNode   EventKind = "cm.barrier.node"
	EvBarrierExit   EventKind = "cm.barrier.exit"
	// EvExclEnter: the page is in exclusive mode with this processor
	// as holder; EvExclBreak: the holder's node broke it for requester
	// Peer (section 2.4.1).
	EvExclEnter EventKind = "cm.excl.enter"
	EvExclBreak EventKind = "cm.excl.break"
	// EvFlagSet and EvFlagSeen: a flag written (after the release) and
	// seen with its value (before the acquire); Arg the flag.
	EvFlagSet  EventKind = "cm.flag.set"
	EvFlagSeen EventKind = "cm.flag.seen"
)

// Event is one protocol step of one processor.
type Event struct {
	// Time is when the processor took the step.
	Time clock.Time
	Kind EventKind
	// Proc is the processor (process ID), Node its protocol node.
	Proc, Node int
	// Page is the shared page, -1 when none.
	Page int
	// Peer and Arg are by kind (the EventKind constants), -1 unused.
	Peer, Arg int
}

// Attr is one named value of an event.
type Attr struct {
	Key string
	Val int
}

// eventKeys names each kind's Peer and Arg ("": not used); a lookup
// table, never iterated.
var eventKeys = map[EventKind][2]string{
	EvMapped: {"", "perm"}, EvHome: {"home", ""}, EvDir: {"", "perm"},
	EvFetchRequest: {"to", "break"}, EvServe: {"to", ""}, EvFetchReply: {"from", "bytes"},
	EvFetchCopied: {"", "indiff"}, EvDiff: {"home", "words"}, EvFlush: {"", "value"}, EvFlushed: {"", "value"},
	EvNoticeSend: {"to", ""}, EvNoticeRecv: {"from", ""}, EvNoticeDist: {"", "list"},
	EvLockNode: {"", "lock"}, EvLockEntry: {"value", "lock"}, EvLockHeld: {"", "lock"},
	EvLockLost: {"", "lock"}, EvLockFree: {"", "lock"},
	EvBarrierArrive: {"", "episode"}, EvBarrierNode: {"", "episode"}, EvBarrierExit: {"", "episode"},
	EvExclBreak: {"to", ""}, EvFlagSet: {"", "flag"}, EvFlagSeen: {"", "flag"},
}

// Attrs returns the event's values in a fixed order: the processor, its
// node, the page when there is one, then Peer and Arg under their kind's
// names.
func (e Event) Attrs() []Attr {
	a := []Attr{{"proc", e.Proc}, {"node", e.Node}}
	if e.Page >= 0 {
		a = append(a, Attr{"page", e.Page})
	}
	k := eventKeys[e.Kind]
	if k[0] != "" {
		a = append(a, Attr{k[0], e.Peer})
	}
	if k[1] != "" {
		a = append(a, Attr{k[1], e.Arg})
	}
	return a
}

// event tells Hooks.Event of a step of pr's at p's time (nothing when
// nobody listens).
func (pr *Process) event(p *cpu.Proc, k EventKind, pg, peer, arg int) {
	if h := pr.rt.hooks.Event; h != nil {
		h(Event{Time: p.Now(), Kind: k, Proc: pr.id, Node: pr.node, Page: pg, Peer: peer, Arg: arg})
	}
}

// faultEvent is the fault handler's first event.
func (pr *Process) faultEvent(p *cpu.Proc, pg int, write bool) {
	if write {
		pr.event(p, EvWriteFault, pg, -1, -1)
	} else {
		pr.event(p, EvReadFault, pg, -1, -1)
	}
}

// lockEvent is a lock event of global lock l (0 the protocol's, l >= 1
// the application's l-1).
func (pr *Process) lockEvent(p *cpu.Proc, k EventKind, l, value int) {
	pr.event(p, k, -1, value, l-1)
}

// b2i is 1 for true.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
