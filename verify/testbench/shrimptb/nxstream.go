package shrimptb

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/nx"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// NXStream is the NX library's flow-control workload: node 0 sends Count
// messages of Bytes bytes (a pattern of its memory) to node 1, which
// first computes for Delay cycles (so that the sender fills the ring and
// waits for credits), then receives them one by one into a buffer and
// compares each with what was sent; then every node calls gsync.
// Message m has type m; the receiver asks for type m + TypeOffset into a
// buffer of RecvMax bytes (0: Bytes), so that a spec can make either
// wrong.
type NXStream struct {
	Count, Bytes, Delay int
	TypeOffset, RecvMax int
	NX                  nx.Params
}

// NXStreamResult is what the stream measured.
type NXStreamResult struct {
	// Intact is whether every message arrived as sent.
	Intact bool
	// Chunks and CreditWaits are node 0's (nx.Stats); Credits node 1's.
	Chunks, CreditWaits, Credits uint64
	// Entered and Left are each node's gsync call and return.
	Entered, Left []clock.Time
	Run           env.Result
}

// The stream's buffers: node 0's messages from nxSrc, node 1's receive
// buffer at nxDst (assumed: clear of the NX buffers at oceanNX).
const (
	nxSrc = 0x20_0000
	nxDst = 0x60_0000
)

// MeasureNXStream runs the stream on c.Nodes nodes.
func MeasureNXStream(e *env.Env, c Config, s NXStream) (NXStreamResult, *Cluster, error) {
	p := c.Nodes
	switch {
	case p < 2:
		return NXStreamResult{}, nil, fmt.Errorf("shrimptb: NX stream needs at least 2 nodes, got %d", p)
	case s.Count < 1 || s.Bytes < 0 || s.Count*s.Bytes > nxDst-nxSrc || s.Delay < 0:
		return NXStreamResult{}, nil, fmt.Errorf("shrimptb: NX stream Count %d (at least 1) of Bytes %d (at most %d in all), Delay %d (not negative)", s.Count, s.Bytes, nxDst-nxSrc, s.Delay)
	case s.TypeOffset < 0 || s.RecvMax < 0:
		return NXStreamResult{}, nil, fmt.Errorf("shrimptb: NX stream TypeOffset %d and RecvMax %d must not be negative", s.TypeOffset, s.RecvMax)
	}
	recvMax := s.RecvMax
	if recvMax == 0 {
		recvMax = s.Bytes
	}
	lay, err := nx.NewLayout(oceanNX, p, s.NX, c.NI.PageBytes)
	if err != nil {
		return NXStreamResult{}, nil, fmt.Errorf("shrimptb: NX stream: %w", err)
	}
	cl, err := Build(e, c)
	if err != nil {
		return NXStreamResult{}, nil, err
	}
	data := make([]byte, s.Count*s.Bytes)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	if len(data) > 0 {
		if err := cl.Nodes[0].Memory().Storage().Write(nxSrc, data); err != nil {
			cl.Close()
			return NXStreamResult{}, nil, err
		}
	}
	procs := make([]*vmmc.Process, p)
	for i := range p {
		procs[i] = process(cl, i)
	}
	eps, err := nx.Connect(e, procs, lay, s.NX)
	if err != nil {
		cl.Close()
		return NXStreamResult{}, nil, fmt.Errorf("shrimptb: NX stream setup: %w", err)
	}
	out := NXStreamResult{Intact: true, Entered: make([]clock.Time, p), Left: make([]clock.Time, p)}
	errs := make([]error, p)
	for i := range p {
		start(cl, i, func(pp *cpu.Proc) {
			ep := eps[i]
			switch i {
			case 0:
				for m := range s.Count {
					if err := ep.Send(pp, 1, uint32(m), nxSrc+uint64(m*s.Bytes), s.Bytes); err != nil {
						errs[i] = err
						return
					}
				}
			case 1:
				pp.Compute(s.Delay)
				for m := range s.Count {
					b, err := ep.Recv(pp, 0, uint32(m+s.TypeOffset), nxDst, recvMax)
					if err != nil {
						errs[i] = err
						return
					}
					if !bytes.Equal(b, data[m*s.Bytes:(m+1)*s.Bytes]) {
						out.Intact = false
					}
				}
			}
			out.Entered[i] = pp.Now()
			if err := ep.Sync(pp); err != nil {
				errs[i] = err
				return
			}
			out.Left[i] = pp.Now()
		})
	}
	res, err := finishRun(e, cl)
	out.Run = res
	out.Chunks, out.CreditWaits = eps[0].Stats().Chunks, eps[0].Stats().CreditWaits
	out.Credits = eps[1].Stats().Credits
	for i, e := range errs {
		if e != nil {
			err = errors.Join(err, fmt.Errorf("node %d: %w", i, e))
		}
	}
	return out, cl, err
}
