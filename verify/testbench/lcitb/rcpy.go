package lcitb

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/firmware/lci"
	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
)

// I-rcpy's microbenchmarks (lci-myrinet-cluster-protocols.txt section
// 5.2.4, Table IV, Figures 6 and 7): a ping-pong and a one-way stream of
// RemoteCopy transfers between the processes' buffers. A receiver learns
// of a transfer by polling its last word (a flag the sender's data
// carries: RCPY notifies nothing at the receiver by default), so a
// message is at least 4 bytes. Each run ends with the NTLB checker
// (lci.ntlb) on every node.

// Virtual addresses of the benchmark buffers (page aligned; each node
// uses both). They map to different entries of the direct-mapped TLBs
// (indices 0 and 256 on: a stream's region is at most 64 pages), or every
// transfer would evict the other buffer's page.
const (
	rcpySrcVA = 0x1000_0000
	rcpyDstVA = 0x2010_0000
)

// sramView is an NI's SRAM as lci.SRAM (for the NTLB checker).
type sramView struct{ s *mem.Storage }

func (v sramView) Read(addr uint32, n int) []byte {
	b, _ := v.s.Bytes(uint64(addr), n)
	return append([]byte(nil), b...)
}
func (v sramView) Write(addr uint32, data []byte) { _ = v.s.Write(uint64(addr), data) }

// CheckNTLBs runs the NTLB consistency checker (lci.ntlb) on every node of
// an I-rcpy cluster: an entry marked valid maps its virtual page to the
// physical page the host pinned it at. It returns the bad entries found.
func (cl *Cluster) CheckNTLBs() int {
	bad := 0
	for _, n := range cl.Nodes {
		if t := n.FW.NTLB(); t != nil {
			bad += t.CheckNTLB(cl.Env, fmt.Sprintf("N%d.NI.FW", n.ID), sramView{n.Card.SRAM().Storage()}, n.Host.Pinned)
		}
	}
	return bad
}

// rcpyData is a source buffer's data of n bytes, pattern k, its last
// word (the flag) 0.
func rcpyData(n, k int) []byte {
	b := pattern(n, k)
	binary.LittleEndian.PutUint32(b[n-4:], 0)
	return b
}

// rcpyMsg is rcpyData with the flag set.
func rcpyMsg(n, k int, flag uint32) []byte {
	b := rcpyData(n, k)
	binary.LittleEndian.PutUint32(b[n-4:], flag)
	return b
}

// checkVirt reports destination bytes that differ from what was sent.
func checkVirt(s *lcilib.Seq, va uint32, want []byte) {
	if got := s.Host().VirtRead(va, len(want)); !bytes.Equal(got, want) {
		s.Host().Report(s.Now(), "lci.data", "RemoteCopy of %d bytes to %#x: the destination differs from the source", len(want), va)
	}
}

func rcpyBench(c Config, b Bench) error {
	if c.Variant != lci.RCPY {
		return fmt.Errorf("variant %s, not I-rcpy", c.Variant)
	}
	if b.Size < 4 || b.Size%4 != 0 {
		return fmt.Errorf("I-rcpy message of %d bytes: a multiple of 4, at least 4 (the receiver's flag word)", b.Size)
	}
	return nil
}

// rcpyRun is runIn for I-rcpy: the NTLB checker after the run, failed or
// not.
func rcpyRun(e *env.Env, c Config, setup func(cl *Cluster)) (env.Result, error) {
	cl, res, err := runIn(e, c, setup)
	if cl == nil {
		return res, err
	}
	switch bad := cl.CheckNTLBs(); {
	case err == nil:
		err = cl.Env.Monitor.Err()
	case bad > 0:
		err = fmt.Errorf("%w; the NTLB checker (lci.ntlb) found %d bad entries", err, bad)
	}
	return res, err
}

// RcpyPingPong is PingPong with RemoteCopy: node 0 copies b.Size bytes
// into node 1's buffer, node 1 polls the message's last word and copies
// the same size back. os is the RemoteCopy call; or the time from the poll
// that finds the flag to the return of the wait (the flag's load, one more
// look at the receive queue for misses: «I-rcpy does not have the upcall
// overhead (polling is still required in I-rcpy...)», section 5.2.4); the
// end-to-end latency is half the round trip. The first round trip takes
// every TLB miss (send and receive, both ways); b.Warm of them are not
// measured (the paper's microbenchmarks run warm).
func RcpyPingPong(e *env.Env, c Config, b Bench) (r LogP, err error) {
	defer named(&err, "rcpy ping-pong")
	if err := b.validate(c.FirmwareConfig().MTU, true); err != nil {
		return r, err
	}
	if err := rcpyBench(c, b); err != nil {
		return r, err
	}
	c.Nodes = max(c.Nodes, 2)
	var sends []clock.Time
	var os, or clock.Time
	res, err := rcpyRun(e, c, func(cl *Cluster) {
		total := b.Warm + b.Iters
		flag := uint32(b.Size - 4)
		// The data is set up before the run; each message's flag is the
		// sender's store (timed, outside os) before its RemoteCopy.
		cl.Nodes[0].Host.VirtWrite(rcpySrcVA, rcpyData(b.Size, 0))
		cl.Nodes[1].Host.VirtWrite(rcpySrcVA, rcpyData(b.Size, 1))
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			for i := range total {
				s.VirtStore32(rcpySrcVA+flag, uint32(i+1))
				t0 := s.Now()
				sends = append(sends, t0)
				s.RemoteCopy(1, rcpySrcVA, rcpyDstVA, b.Size)
				if i >= b.Warm {
					os += s.Now() - t0
				}
				s.RcpyWait(rcpyDstVA+flag, uint32(i+1))
				checkVirt(s, rcpyDstVA, rcpyMsg(b.Size, 1, uint32(i+1)))
			}
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			for i := range total {
				hit := s.RcpyWait(rcpyDstVA+flag, uint32(i+1))
				if i >= b.Warm {
					or += s.Now() - hit
				}
				checkVirt(s, rcpyDstVA, rcpyMsg(b.Size, 0, uint32(i+1)))
				s.VirtStore32(rcpySrcVA+flag, uint32(i+1))
				s.RemoteCopy(0, rcpySrcVA, rcpyDstVA, b.Size)
			}
		})
	})
	if err != nil {
		return r, err
	}
	return pingPongLogP(b, sends, os, or, res)
}

// rcpySlots is how many message slots a stream cycles through: message i
// goes from and to slot i mod rcpySlots, so that the receiver can tell a
// message from the one before it in the same slot (its flag). assumed: 64
// slots, or fewer so that they span at most 256 KB (64 pages: the TLBs'
// 1024 entries hold them all, the stream runs warm).
func rcpySlots(size int) int { return max(4, min(64, (256<<10)/size)) }

// RcpyStream is Stream with RemoteCopy: node 0 copies b.Stream messages of
// b.Size bytes back to back into node 1's buffer slots, after a warm-up
// copy of all slots (the TLBs warm, as the paper's benchmarks run); node 1
// polls each message's flag. The rate is measured from the first quarter
// on, as Stream's. The sender reuses a source slot only after its last
// copy from it completed (RcpyWaitDone).
func RcpyStream(e *env.Env, c Config, b Bench) (t Throughput, err error) {
	defer named(&err, "rcpy stream")
	if err := b.validate(c.FirmwareConfig().MTU, true); err != nil {
		return t, err
	}
	if err := rcpyBench(c, b); err != nil {
		return t, err
	}
	c.Nodes = max(c.Nodes, 2)
	k := rcpySlots(b.Size)
	stride := uint32((b.Size + lci.PageBytes - 1) / lci.PageBytes * lci.PageBytes)
	if b.Size < lci.PageBytes {
		stride = uint32(b.Size)
	}
	region := int(stride) * k
	var done []clock.Time
	res, err := rcpyRun(e, c, func(cl *Cluster) {
		// The slots' data is set up before the run (slot j: pattern j);
		// each message's flag is the sender's store before its
		// RemoteCopy.
		for j := range k {
			cl.Nodes[0].Host.VirtWrite(rcpySrcVA+uint32(j)*stride, rcpyData(b.Size, j))
		}
		cl.Nodes[0].Host.Run(func(s *lcilib.Seq) {
			s.VirtStore32(rcpySrcVA+uint32(region-4), ^uint32(0))
			s.RcpyWaitDone(s.RemoteCopy(1, rcpySrcVA, rcpyDstVA, region))
			hds := make([]lcilib.RcpyHandle, k)
			for i := range b.Stream {
				slot := uint32(i%k) * stride
				if hds[i%k] != 0 {
					s.RcpyWaitDone(hds[i%k])
				}
				s.VirtStore32(rcpySrcVA+slot+uint32(b.Size-4), uint32(i+1))
				hds[i%k] = s.RemoteCopy(1, rcpySrcVA+slot, rcpyDstVA+slot, b.Size)
			}
		})
		cl.Nodes[1].Host.Run(func(s *lcilib.Seq) {
			s.RcpyWait(rcpyDstVA+uint32(region-4), ^uint32(0))
			for i := range b.Stream {
				slot := uint32(i%k) * stride
				s.RcpyWait(rcpyDstVA+slot+uint32(b.Size-4), uint32(i+1))
				checkVirt(s, rcpyDstVA+slot, rcpyMsg(b.Size, i%k, uint32(i+1)))
				done = append(done, s.Now())
			}
		})
	})
	if err != nil {
		return t, err
	}
	return streamResult(done, b, res)
}

// MeasureRcpyLogP is MeasureLogP for I-rcpy: the ping-pong (in e, nil: a
// fresh one) and the stream; the fetch-and-add (I-rcpy's F&A is the base
// implementation's, its request a PIO send) as MeasureLogP's.
func MeasureRcpyLogP(e *env.Env, c Config, b Bench) (LogP, error) {
	r, err := RcpyPingPong(e, c, b)
	if err != nil {
		return r, err
	}
	t, err := RcpyStream(nil, c, b)
	if err != nil {
		return r, err
	}
	r.G = t.Gap
	if r.FA, err = FetchAdd(nil, c, b); err != nil {
		return r, err
	}
	return r, nil
}
