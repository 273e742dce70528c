package svm

import (
	"strconv"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/rtl/clock"
)

// Event is one protocol event, for goldens (Hooks.Event): a step the
// runtime took on a node's processor, at the time it took it. Telling the
// hook costs no simulated time.
type Event struct {
	Time clock.Time
	Kind string
	// Node is the node it happened on; Page the page (-1 none); Peer the
	// other node (-1 none); Arg the kind's number (a fault's write bit, an
	// interval, a count; Attrs names it).
	Node, Page, Peer, Arg int
}

// Event kinds.
const (
	EvFault      = "fault"      // page, write: the SIGSEGV handler entered
	EvFetch      = "fetch"      // page, home: a page request is sent
	EvRetry      = "retry"      // page, home: the home answered «not yet»
	EvFetched    = "fetched"    // page, home: the page's seal seen
	EvMapped     = "mapped"     // page, perm: the fault's mprotect returned
	EvServe      = "serve"      // page, to: the home sends the page
	EvTwin       = "twin"       // page: the twin copied
	EvRelease    = "release"    // pages: a release closes an interval of that many dirty pages
	EvDiff       = "diff"       // page, words: the page compared with its twin
	EvSend       = "send"       // to, type: a request sent into the peer's ring
	EvReply      = "reply"      // to, type: a reply sent to the peer's reply slot
	EvRecv       = "recv"       // from, type: the notification handler takes a request
	EvAck        = "ack"        // to, count: the acknowledgement word sent back
	EvAcked      = "acked"      // messages: every home has acknowledged a release's diffs
	EvApply      = "apply"      // page, from, interval: a diff's run stored into the home's copy
	EvTSFlush    = "tsflush"    // interval: the timestamps stored behind the updates
	EvInterval   = "interval"   // interval: the interval's write notice joins the log
	EvAcquire    = "acquire"    // writers: a grant's notices, from that many other nodes
	EvInvalidate = "invalidate" // page, pages: the first of the pages invalidated, their count
	EvTSSeen     = "tsseen"     // writer, value: a writer's timestamp reached the vector time
	EvGrant      = "grant"      // to, tag: a lock or flag grant with the notices
	EvLock       = "lock"       // lock: the lock acquired
	EvUnlock     = "unlock"     // lock: the release begins
)

// eventKeys names each kind's Peer and Arg ("": not part of it).
var eventKeys = map[string][2]string{
	EvFault: {"", "write"}, EvFetch: {"home", ""}, EvRetry: {"home", ""}, EvFetched: {"home", ""},
	EvMapped: {"", "perm"}, EvServe: {"to", ""}, EvTwin: {"", ""}, EvRelease: {"", "pages"},
	EvDiff: {"", "words"}, EvSend: {"to", "type"}, EvReply: {"to", "type"}, EvRecv: {"from", "type"},
	EvAck: {"to", "count"}, EvAcked: {"", "messages"}, EvApply: {"from", "interval"},
	EvTSFlush: {"", "interval"}, EvInterval: {"", "interval"}, EvAcquire: {"", "writers"},
	EvInvalidate: {"", "pages"}, EvTSSeen: {"writer", "value"}, EvGrant: {"to", "tag"},
	EvLock: {"", "lock"}, EvUnlock: {"", "lock"},
}

// msgNames are the message types as events print them.
var msgNames = map[int]string{
	mPageReq: "pagereq", mDiff: "diff", mLockReq: "lockreq", mLockFwd: "lockfwd", mFlagSet: "flagset",
	mFlagWait: "flagwait", mFlagFwd: "flagfwd", mArrive: "arrive", rPage: "page", rGrant: "grant", rRetry: "retry",
}

// Attr is one of an event's fields as a trace record prints it.
type Attr struct{ Key, Val string }

// Attrs are the event's fields in order: node, then page if any, then the
// kind's peer and argument under their names (a message type by name).
func (e Event) Attrs() []Attr {
	a := []Attr{{"node", strconv.Itoa(e.Node)}}
	if e.Page >= 0 {
		a = append(a, Attr{"page", strconv.Itoa(e.Page)})
	}
	k := eventKeys[e.Kind]
	if k[0] != "" {
		a = append(a, Attr{k[0], strconv.Itoa(e.Peer)})
	}
	if k[1] != "" {
		v := strconv.Itoa(e.Arg)
		if k[1] == "type" {
			if n, ok := msgNames[e.Arg]; ok {
				v = n
			}
		}
		a = append(a, Attr{k[1], v})
	}
	return a
}

func (pr *Process) event(p *cpu.Proc, kind string, pg, peer, arg int) {
	if h := pr.rt.hooks.Event; h != nil {
		h(Event{Time: p.Now(), Kind: kind, Node: pr.id, Page: pg, Peer: peer, Arg: arg})
	}
}
