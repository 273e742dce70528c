package svm

import "github.com/nisim/nisim/rtl/clock"

// Stats are a process's counters.
type Stats struct {
	// Messages is the deliberate-update sends (requests, replies, pages,
	// acknowledgements); Notifying those that asked for a notification
	// (Table 3); Requests by type; Acks the acknowledgements.
	Messages, Notifying, Acks uint64
	Requests                  [16]uint64
	// Handlers is the notification handlers run.
	Handlers uint64
	// ReadFaults and WriteFaults are the protection faults; Fetches the
	// pages fetched; Twins, Diffs (pages diffed), DiffWords, DiffMessages
	// (HLRC's); Intervals the intervals closed; Invalidations the pages
	// invalidated; Grants the grants given; Barriers the barriers passed;
	// Dropped the diffs the dropdiff mutation dropped.
	ReadFaults, WriteFaults, Fetches, Twins, Diffs, DiffWords, DiffMessages uint64
	Intervals, Invalidations, Grants, Barriers, Dropped                     uint64
	// NotYet is the page requests a home answered «not yet» (its
	// timestamps behind the requester's vector time), Retries the
	// requests made again.
	NotYet, Retries uint64
}

// Add adds o's counters.
func (s *Stats) Add(o Stats) {
	s.Messages += o.Messages
	s.Notifying += o.Notifying
	s.Acks += o.Acks
	for i := range s.Requests {
		s.Requests[i] += o.Requests[i]
	}
	s.Handlers += o.Handlers
	s.ReadFaults += o.ReadFaults
	s.WriteFaults += o.WriteFaults
	s.Fetches += o.Fetches
	s.Twins += o.Twins
	s.Diffs += o.Diffs
	s.DiffWords += o.DiffWords
	s.DiffMessages += o.DiffMessages
	s.Intervals += o.Intervals
	s.Invalidations += o.Invalidations
	s.Grants += o.Grants
	s.Barriers += o.Barriers
	s.Dropped += o.Dropped
	s.NotYet += o.NotYet
	s.Retries += o.Retries
}

// Times is where a process's time went (Figure 4's breakdown): Compute,
// the program's own work and its memory accesses; Data, the page faults'
// waits for fetched pages (communication); Lock, the lock and flag
// operations' waits; Barrier, the barriers' waits; Protocol, the twins,
// diffs, timestamps and mprotects of faults and releases; Handler, the
// notification handlers (serving other nodes), taken out of whatever they
// interrupted.
type Times struct {
	Compute, Data, Lock, Barrier, Protocol, Handler clock.Time
}

// Add adds o's times.
func (t *Times) Add(o Times) {
	t.Compute += o.Compute
	t.Data += o.Data
	t.Lock += o.Lock
	t.Barrier += o.Barrier
	t.Protocol += o.Protocol
	t.Handler += o.Handler
}

// Total is the sum.
func (t Times) Total() clock.Time {
	return t.Compute + t.Data + t.Lock + t.Barrier + t.Protocol + t.Handler
}

// The kinds of time.
const (
	kindCompute = iota
	kindData
	kindLock
	kindBarrier
	kindProtocol
)

// timer attributes the program's time to kinds: the current kind since
// since, less the handlers' time in between (handler at since).
type timer struct {
	kind    int
	since   clock.Time
	handler clock.Time
	on      bool
}

func (t *timer) start(now clock.Time) { *t = timer{since: now, on: true} }

// to closes the current segment at now and opens one of kind k.
func (t *timer) to(now clock.Time, k int, ts *Times) {
	if !t.on {
		return
	}
	seg := now - t.since - (ts.Handler - t.handler)
	switch t.kind {
	case kindCompute:
		ts.Compute += seg
	case kindData:
		ts.Data += seg
	case kindLock:
		ts.Lock += seg
	case kindBarrier:
		ts.Barrier += seg
	case kindProtocol:
		ts.Protocol += seg
	}
	t.kind, t.since, t.handler = k, now, ts.Handler
}

func (t *timer) stop(now clock.Time, ts *Times) {
	t.to(now, kindCompute, ts)
	t.on = false
}
