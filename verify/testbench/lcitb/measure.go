package lcitb

import (
	"bytes"
	"fmt"
	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// LogP are the microbenchmark results of section 5.1.3, in picoseconds.
type LogP struct {
	// Os is the time the send call occupies the host, Or the time a
	// successful poll, its upcall and the release occupy it.
	Os, Or clock.Time
	// E2E is half the round trip of a ping-pong; L = E2E - Os - Or.
	E2E, L clock.Time
	// G is the gap: the time per message of a long one-way stream.
	G clock.Time
	// FA is the latency of a remote fetch-and-add.
	FA clock.Time
	// Run is the ping-pong's run (its end time and events).
	Run env.Result
}

// Bench sizes the microbenchmarks.
type Bench struct {
	// Size is the message size (16 bytes in Tables III and IV).
	Size int
	// Warm and Iters are the round trips (or broadcasts) ignored and
	// measured; Stream the one-way stream's length in messages.
	Warm, Iters, Stream int
	// RecvCopy makes PingPong's upcalls copy each message out of the
	// receive queue (memcpy at the cached rate, CopyCycles): I-sdma as
	// section 5.2.4 compares it with I-rcpy, «I-sdma's memory copy from
	// the receive queue». Default false: Tables III and IV's ping-pong.
	RecvCopy bool
}

// DefaultBench is 16-byte messages, 10 + 50 round trips, a 1000-message
// stream (long enough for the gap to settle: 9.9 µs at 100 messages,
// 10.5 at 400, 10.6 at 1000).
func DefaultBench() Bench { return Bench{Size: 16, Warm: 10, Iters: 50, Stream: 1000} }

func (b Bench) validate(mtu int, fragments bool) error {
	limit := mtu
	if fragments {
		limit = 1 << 24
	}
	if b.Size < 0 || b.Size > limit || b.Warm < 0 || b.Iters < 2 || b.Stream < 4 {
		return fmt.Errorf("lci bench: size %d (limit %d), %d warm-up and %d measured iterations, stream of %d: need 0 <= size <= limit, iters >= 2, stream >= 4",
			b.Size, limit, b.Warm, b.Iters, b.Stream)
	}
	return nil
}

// runIn builds the cluster in e (a fresh environment if nil), lets setup
// program it and runs it to the end: the checkers and the deadlock
// watchdog must be satisfied. Programs left waiting are closed.
func runIn(e *env.Env, c Config, setup func(cl *Cluster)) (*Cluster, env.Result, error) {
	if e == nil {
		e = env.New(env.Options{})
	}
	cl, err := Build(e, c)
	if err != nil {
		return nil, env.Result{}, err
	}
	setup(cl)
	res, err := e.Run()
	cl.Close()
	return cl, res, err
}

// named prefixes a measurement's error with its name, once: the
// measurement functions name themselves, so their callers (MeasureLogP,
// the scenarios) add only their own context (lci-logp printed
// "ping-pong: ping-pong: 1 of 60 round trips started", issue 12).
func named(err *error, name string) {
	if *err != nil {
		*err = fmt.Errorf("%s: %w", name, *err)
	}
}

// pattern is message i's content (checked at the receiver).
func pattern(n, i int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = byte(i*7 + k*13 + 1)
	}
	return b
}

// checkData reports a payload that is not what was sent (at the time the
// upcall runs).
func checkData(s *lcilib.Seq, m *lcilib.Msg, want []byte) {
	if !bytes.Equal(m.Data, want) {
		s.Host().Report(s.Now(), "lci.data", "packet from %d with tag %d: %d bytes arrived, not the %d sent (or different)", m.Src, m.Tag, len(m.Data), len(want))
	}
}

// recvCopy is the upcall's copy of m's data out of the receive queue
// (with copy).
func recvCopy(s *lcilib.Seq, m *lcilib.Msg, copy bool) {
	if copy && len(m.Data) > 0 {
		s.Compute(s.Host().CopyCycles(len(m.Data), false))
	}
}

// PingPong measures os, or and the end-to-end latency between nodes 0 and
// 1 in e (nil: a fresh one): node 0 sends, node 1 answers each message with
// one of the same size; payloads are checked.
func PingPong(e *env.Env, c Config, b Bench) (r LogP, err error) {
	defer named(&err, "ping-pong")
	if err := b.validate(c.FirmwareConfig().MTU, false); err != nil {
		return r, err
	}
	c.Nodes = max(c.Nodes, 2)
	var sends []clock.Time
	var os, or clock.Time
	_, res, err := runIn(e, c, func(cl *Cluster) {
		total := b.Warm + b.Iters
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range total {
				t0 := s.Now()
				sends = append(sends, t0)
				s.Send(1, pattern(b.Size, i), uint32(i))
				if i >= b.Warm {
					os += s.Now() - t0
				}
				s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
					checkData(s, m, pattern(b.Size, -i))
					recvCopy(s, m, b.RecvCopy)
				})
			}
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			for i := range total {
				var hit clock.Time
				s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
					hit = m.At
					checkData(s, m, pattern(b.Size, i))
					recvCopy(s, m, b.RecvCopy)
				})
				if i >= b.Warm {
					or += s.Now() - hit
				}
				s.Send(0, pattern(b.Size, -i), uint32(i))
			}
		})
	})
	if err != nil {
		return r, err
	}
	return pingPongLogP(b, sends, os, or, res)
}

// pingPongLogP derives a ping-pong's LogP figures from node 0's send
// times (the round trip is the time between two of them) and the send
// and receive overheads summed over the measured round trips.
func pingPongLogP(b Bench, sends []clock.Time, os, or clock.Time, res env.Result) (r LogP, err error) {
	if len(sends) != b.Warm+b.Iters {
		return r, fmt.Errorf("%d of %d round trips started", len(sends), b.Warm+b.Iters)
	}
	last := len(sends) - 1
	r.E2E = (sends[last] - sends[b.Warm]) / clock.Time(2*(last-b.Warm))
	r.Os = os / clock.Time(b.Iters)
	r.Or = or / clock.Time(b.Iters)
	r.L = r.E2E - r.Os - r.Or
	r.Run = res
	return r, nil
}

// Throughput is what a one-way stream achieved.
type Throughput struct {
	// Gap is the time per message in steady state; MBps the payload rate
	// (10^6 bytes per second).
	Gap  clock.Time
	MBps float64
	// Run is the stream's run.
	Run env.Result
}

// Stream measures a one-way stream in e (nil: a fresh one): node 0 sends
// b.Stream messages of b.Size bytes (fragmented at the MTU) back to back to
// node 1, which receives every packet and, with recvCopy, copies its data
// out («virtually all LCI clients will copy (or read) received packets out
// of the fixed receive area», section 5.3). The rate is measured from the
// completion of the first quarter of the messages to the last one.
func Stream(e *env.Env, c Config, b Bench, recvCopy bool) (t Throughput, err error) {
	defer named(&err, "stream")
	if err := b.validate(c.FirmwareConfig().MTU, true); err != nil {
		return t, err
	}
	c.Nodes = max(c.Nodes, 2)
	mtu := c.FirmwareConfig().MTU
	var done []clock.Time // when each message's last packet was received
	_, res, err := runIn(e, c, func(cl *Cluster) {
		big := b.Size > c.Platform.L2Bytes()
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range b.Stream {
				s.SendMessage(1, pattern(b.Size, i), uint32(i))
			}
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			receiveStream(s, b, mtu, recvCopy, big, func(_ int, now clock.Time) { done = append(done, now) })
		})
	})
	if err != nil {
		return t, err
	}
	return streamResult(done, b, res)
}

// receiveStream receives b.Stream messages of b.Size bytes, packet by
// packet (at most mtu bytes each), checking each packet's data, copying it
// out if recvCopy (at the memory copy rate if big), and calling last with
// the message's number when its last packet has arrived.
func receiveStream(s *lcilib.Seq, b Bench, mtu int, recvCopy, big bool, last func(i int, now clock.Time)) {
	perMsg := max(1, (b.Size+mtu-1)/mtu)
	for i := range b.Stream {
		msg := pattern(b.Size, i)
		for k := range perMsg {
			lo := k * mtu
			s.Recv(func(s *lcilib.Seq, m *lcilib.Msg) {
				checkData(s, m, msg[lo:min(lo+mtu, len(msg))])
				if k == perMsg-1 {
					last(i, s.Now())
				}
				if recvCopy {
					s.Compute(s.Host().CopyCycles(len(m.Data), big))
				}
			})
		}
	}
}

// streamResult is a one-way stream's throughput from the times its
// b.Stream messages were received.
func streamResult(done []clock.Time, b Bench, res env.Result) (Throughput, error) {
	if len(done) != b.Stream {
		return Throughput{}, fmt.Errorf("%d of %d messages received", len(done), b.Stream)
	}
	t := steady(done, b.Size)
	t.Run = res
	return t, nil
}

// steady is the rate of messages of size bytes completing at the times in
// done, from the first quarter on (the pipeline filled).
func steady(done []clock.Time, size int) Throughput {
	k := len(done) / 4
	span := done[len(done)-1] - done[k]
	return Throughput{Gap: span / clock.Time(len(done)-1-k),
		MBps: float64(size*(len(done)-1-k)) / float64(span) * 1e6} // bytes per µs = MB/s
}

// FetchAdd measures the fetch-and-add latency in e (nil: a fresh one):
// node 0 adds 1 to node 1's variable b.Warm + b.Iters times in a row; the
// values returned must be 0, 1, 2, ...
func FetchAdd(e *env.Env, c Config, b Bench) (_ clock.Time, err error) {
	defer named(&err, "fetch-and-add")
	if err := b.validate(c.FirmwareConfig().MTU, false); err != nil {
		return 0, err
	}
	c.Nodes = max(c.Nodes, 2)
	var sum clock.Time
	var vals []uint32
	_, _, err = runIn(e, c, func(cl *Cluster) {
		done := false
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range b.Warm + b.Iters {
				t0 := s.Now()
				vals = append(vals, s.FetchAndAdd(1, 1))
				if i >= b.Warm {
					sum += s.Now() - t0
				}
			}
			if c.Reliability == lci.HostRetransmit {
				done = true
				cl.Nodes[1].CPU.Wake(s.Now())
			}
		})
		if c.Reliability == lci.HostRetransmit {
			// I-hrx: «handles F&A requests on the host processor»:
			// node 1's process polls the library until node 0 is done.
			cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
				for s.RecvOr(nil, func() bool { return done }) {
				}
			})
		}
	})
	if err != nil {
		return 0, err
	}
	for i, v := range vals {
		if v != uint32(i) {
			return 0, fmt.Errorf("operation %d returned %d", i, v)
		}
	}
	if len(vals) != b.Warm+b.Iters {
		return 0, fmt.Errorf("%d of %d completed", len(vals), b.Warm+b.Iters)
	}
	return sum / clock.Time(b.Iters), nil
}

// MeasureLogP runs the ping-pong (in e, nil: a fresh one), the stream and
// the fetch-and-add (each in a fresh environment).
func MeasureLogP(e *env.Env, c Config, b Bench) (LogP, error) {
	if c.Variant == lci.RCPY {
		return MeasureRcpyLogP(e, c, b)
	}
	// Each measurement names itself in its errors (named).
	r, err := PingPong(e, c, b)
	if err != nil {
		return r, err
	}
	t, err := Stream(nil, c, b, false)
	if err != nil {
		return r, err
	}
	r.G = t.Gap
	if r.FA, err = FetchAdd(nil, c, b); err != nil {
		return r, err
	}
	return r, nil
}
