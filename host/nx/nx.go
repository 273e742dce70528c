package nx

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/env"
)

// mutNoCredit is a test-only fault (see env.DeclareMutation).
var mutNoCredit = env.DeclareMutation("nx.no-credit",
	"senders ignore the credits and reuse a ring slot the receiver has not copied out (Recv's sequence check must report the overrun, ErrOverrun)")

// Stats count what an endpoint did.
type Stats struct {
	// Messages is the Send calls (the collectives' included), Chunks
	// their chunks, Bytes their data bytes.
	Messages, Chunks, Bytes uint64
	// Received is the messages Recv returned.
	Received uint64
	// Credits is the credit words written; CreditWaits the chunks whose
	// sender found the ring full and polled for a credit.
	Credits, CreditWaits uint64
}

// Endpoint is one node's side of the library: its process, its proxies
// of the other nodes' receive rings and credit pages, and its counts.
type Endpoint struct {
	me  int
	pr  *vmmc.Process
	lay Layout
	prm Params
	// ring[j] is node j's receive ring for this node; credit[j] node j's
	// credit page.
	ring, credit []*vmmc.Proxy
	// sent[j] is the chunks sent to j; recvd[j] those consumed from j;
	// returned[j] the count last written to j's credit page, credits[j]
	// how many times.
	sent, recvd, returned []uint32
	credits               []int
	stats                 Stats
	// noCredit is the mutation nx.no-credit.
	noCredit bool
}

// Connect sets the library up on every node: procs[i] is node i's
// process (nil for none: a node that takes no part). Each node exports
// its receive rings and credit page, imports every other node's ring for
// it and credit page, and in the AU variant binds its outgoing rings and
// link pages to them. It runs untimed, before the simulation (the
// kernel's table writes at t=0, as the VMMC setup's rendezvous is outside
// the measured communication), and returns the endpoints by node. e is
// read once for the library's mutation (nx.no-credit); nil: none.
func Connect(e *env.Env, procs []*vmmc.Process, lay Layout, p Params) ([]*Endpoint, error) {
	if err := p.Validate(lay.Page); err != nil {
		return nil, err
	}
	n := len(procs)
	if n != lay.Nodes {
		return nil, fmt.Errorf("nx: %d processes for a layout of %d nodes", n, lay.Nodes)
	}
	if n < 2 {
		return nil, fmt.Errorf("nx: %d nodes: message passing needs at least 2", n)
	}
	for i, pr := range procs {
		if pr == nil {
			return nil, fmt.Errorf("nx: node %d has no process", i)
		}
	}
	rings := make([][]vmmc.Buffer, n)
	credit := make([]vmmc.Buffer, n)
	for j, pr := range procs {
		rings[j] = make([]vmmc.Buffer, n)
		for i := range n {
			if i == j {
				continue
			}
			b, err := pr.Export(nil, lay.RecvRing(i), lay.RingBytes, false)
			if err != nil {
				return nil, fmt.Errorf("nx: node %d's ring for %d: %w", j, i, err)
			}
			rings[j][i] = b
		}
		b, err := pr.Export(nil, lay.CreditPage(), lay.Page, false)
		if err != nil {
			return nil, fmt.Errorf("nx: node %d's credit page: %w", j, err)
		}
		credit[j] = b
	}
	eps := make([]*Endpoint, n)
	for i, pr := range procs {
		ep := &Endpoint{me: i, pr: pr, lay: lay, prm: p, noCredit: e != nil && e.Mutation(mutNoCredit) != 0,
			ring: make([]*vmmc.Proxy, n), credit: make([]*vmmc.Proxy, n),
			sent: make([]uint32, n), recvd: make([]uint32, n), returned: make([]uint32, n), credits: make([]int, n)}
		for j := range n {
			if j == i {
				continue
			}
			var err error
			if ep.ring[j], err = pr.Import(nil, rings[j][i]); err != nil {
				return nil, fmt.Errorf("nx: node %d importing %d's ring: %w", i, j, err)
			}
			if ep.credit[j], err = pr.Import(nil, credit[j]); err != nil {
				return nil, fmt.Errorf("nx: node %d importing %d's credit page: %w", i, j, err)
			}
			if p.Mode != AU {
				continue
			}
			if err := pr.Bind(nil, lay.OutRing(j), ep.ring[j], 0, lay.RingBytes, p.Combine, lay.Page); err != nil {
				return nil, fmt.Errorf("nx: node %d binding its ring to %d: %w", i, j, err)
			}
			if err := pr.Bind(nil, lay.Link(j), ep.credit[j], 0, lay.Page, p.Combine, lay.Page); err != nil {
				return nil, fmt.Errorf("nx: node %d binding its credit link to %d: %w", i, j, err)
			}
		}
		eps[i] = ep
	}
	return eps, nil
}

// Node is the endpoint's node.
func (e *Endpoint) Node() int { return e.me }

// Stats returns the endpoint's counts.
func (e *Endpoint) Stats() Stats { return e.stats }

// Process is the endpoint's VMMC process.
func (e *Endpoint) Process() *vmmc.Process { return e.pr }

// Send is csend: n bytes from local address src to node dst as a message
// of type typ (below TypeReserved), in chunks (Params.Chunks). It returns
// when the caller may reuse src: in the DU variant when the last
// deliberate update has been read (vmmc.Process.Wait), in the AU variant
// when the stores have retired.
func (e *Endpoint) Send(p *cpu.Proc, dst int, typ uint32, src uint64, n int) error {
	if typ >= TypeReserved {
		return fmt.Errorf("nx: send to %d: type %#x is reserved (user types are below %#x)", dst, typ, TypeReserved)
	}
	return e.send(p, dst, typ, src, n)
}

func (e *Endpoint) send(p *cpu.Proc, dst int, typ uint32, src uint64, n int) error {
	if dst < 0 || dst >= e.lay.Nodes || dst == e.me {
		return fmt.Errorf("nx: node %d sending to node %d: not another node of 0..%d", e.me, dst, e.lay.Nodes-1)
	}
	if n < 0 {
		return fmt.Errorf("nx: send to %d: size %d is negative", dst, n)
	}
	e.stats.Messages++
	cs := e.prm.Chunks(n)
	off := 0
	for i, ln := range cs {
		if err := e.chunk(p, dst, typ, src+uint64(off), ln, i == len(cs)-1); err != nil {
			return err
		}
		off += ln
	}
	e.stats.Bytes += uint64(n)
	if e.prm.Mode == DU {
		e.pr.Wait(p)
	}
	return nil
}

// chunk sends one chunk: the library's work, the credit test, the data
// and the trailer.
func (e *Endpoint) chunk(p *cpu.Proc, dst int, typ uint32, src uint64, n int, last bool) error {
	p.Step(cpu.Step{Label: "nx.send", Instrs: e.prm.SendInstrs})
	if err := e.waitCredit(p, dst); err != nil {
		return err
	}
	k := int(e.sent[dst]) % e.prm.Slots
	seq := e.sent[dst] + 1
	slot := uint64(k * e.prm.SlotBytes)
	trOff := slot + uint64(e.prm.SlotBytes-TrailerBytes)
	inline := n <= InlineBytes
	var flags uint32
	if last {
		flags = flagLast
	}
	e.stats.Chunks++
	switch e.prm.Mode {
	case DU:
		if !inline {
			if err := e.pr.Send(p, src, e.ring[dst], slot, n, false); err != nil {
				return fmt.Errorf("nx: node %d's chunk %d to %d: %w", e.me, seq, dst, err)
			}
		}
		tr := e.lay.Trailer(dst, k)
		if inline {
			copyWords(p, src, tr, n)
		}
		storeTrailer(p, tr, typ, n, flags, seq)
		from, to, ln := tr+trType, trOff+trType, TrailerBytes-trType
		if inline {
			from, to, ln = tr, trOff, TrailerBytes
		}
		if err := e.pr.Send(p, from, e.ring[dst], to, ln, false); err != nil {
			return fmt.Errorf("nx: node %d's trailer %d to %d: %w", e.me, seq, dst, err)
		}
	case AU:
		out := e.lay.OutRing(dst)
		to := out + slot
		if inline {
			to = out + trOff
		}
		copyWords(p, src, to, n)
		storeTrailer(p, out+trOff, typ, n, flags, seq)
	}
	e.sent[dst] = seq
	return nil
}

// waitCredit polls the credit word of dst until the ring has a free
// slot.
func (e *Endpoint) waitCredit(p *cpu.Proc, dst int) error {
	word := e.lay.CreditPage() + uint64(4*dst)
	if e.sent[dst]-p.Load32(word) < uint32(e.prm.Slots) || e.noCredit {
		return nil
	}
	e.stats.CreditWaits++
	start := p.Now()
	for e.sent[dst]-p.As("nx.credit.poll").Load32(word) >= uint32(e.prm.Slots) {
		if p.Now()-start > e.prm.Patience {
			return fmt.Errorf("nx: node %d waiting for a credit from %d (%d chunks sent): %w", e.me, dst, e.sent[dst], ErrTimeout)
		}
	}
	return nil
}

// storeTrailer writes a trailer's type, length, flags and sequence
// number, the sequence number last.
func storeTrailer(p *cpu.Proc, tr uint64, typ uint32, n int, flags, seq uint32) {
	p.Store32(tr+trType, typ)
	p.Store32(tr+trLen, uint32(n))
	p.Store32(tr+trFlags, flags)
	p.As("nx.seq").Store32(tr+trSeq, seq)
}

// copyWords copies n bytes from local address from to local address to
// with loads and stores of 8 bytes (4 and 1 for a tail), returning the
// bytes.
func copyWords(p *cpu.Proc, from, to uint64, n int) []byte {
	out := make([]byte, 0, n)
	for off := 0; off < n; {
		m := 8
		switch {
		case n-off >= 8:
		case n-off >= 4:
			m = 4
		default:
			m = 1
		}
		d := p.Load(from+uint64(off), m)
		if to != 0 {
			p.Store(to+uint64(off), d)
		}
		out = append(out, d...)
		off += m
	}
	return out
}

// Recv is crecv: the next message from node src, which must be of type
// typ (or any, TypeAny), copied to local address dst (at most max
// bytes; dst 0: the bytes are loaded, not stored); it returns the
// message's bytes as the copy's loads read them.
// It polls each chunk's sequence word (no notification) for at most
// Params.Patience.
func (e *Endpoint) Recv(p *cpu.Proc, src int, typ uint32, dst uint64, max int) ([]byte, error) {
	if src < 0 || src >= e.lay.Nodes || src == e.me {
		return nil, fmt.Errorf("nx: node %d receiving from node %d: not another node of 0..%d", e.me, src, e.lay.Nodes-1)
	}
	var out []byte
	for first := true; ; first = false {
		k := int(e.recvd[src]) % e.prm.Slots
		seq := e.recvd[src] + 1
		slot := e.lay.RecvRing(src) + uint64(k*e.prm.SlotBytes)
		tr := slot + uint64(e.prm.SlotBytes-TrailerBytes)
		start := p.Now()
		for {
			got := p.As("nx.recv.poll").Load32(tr + trSeq)
			if got == seq {
				break
			}
			// The slot holds a later chunk: its sender overwrote
			// this one before it was consumed.
			if got > seq {
				return out, fmt.Errorf("nx: node %d expected chunk %d from %d in slot %d and found chunk %d: %w", e.me, seq, src, k, got, ErrOverrun)
			}
			if p.Now()-start > e.prm.Patience {
				return out, fmt.Errorf("nx: node %d waiting for chunk %d from %d: %w", e.me, seq, src, ErrTimeout)
			}
		}
		p.Step(cpu.Step{Label: "nx.recv", Instrs: e.prm.RecvInstrs})
		h := p.Load(tr+trType, 12)
		t := binary.LittleEndian.Uint32(h)
		n := int(binary.LittleEndian.Uint32(h[4:]))
		flags := binary.LittleEndian.Uint32(h[8:])
		if first && typ != TypeAny && t != typ {
			return out, fmt.Errorf("nx: node %d's message %d from %d has type %#x, Recv wants %#x: %w", e.me, seq, src, t, typ, ErrType)
		}
		if len(out)+n > max {
			return out, fmt.Errorf("nx: node %d's message from %d: %d bytes and more into a %d-byte buffer: %w", e.me, src, len(out)+n, max, ErrSize)
		}
		from := slot
		if n <= InlineBytes {
			from = tr
		}
		to := uint64(0)
		if dst != 0 {
			to = dst + uint64(len(out))
		}
		out = append(out, copyWords(p, from, to, n)...)
		e.recvd[src] = seq
		if e.recvd[src]-e.returned[src] >= uint32(e.prm.Slots/2) {
			if err := e.returnCredit(p, src); err != nil {
				return out, err
			}
		}
		if flags&flagLast != 0 {
			break
		}
	}
	e.stats.Received++
	return out, nil
}

// returnCredit writes the count of chunks consumed from src into src's
// credit page.
func (e *Endpoint) returnCredit(p *cpu.Proc, src int) error {
	v := e.recvd[src]
	switch e.prm.Mode {
	case DU:
		w := e.lay.CreditWord(src, e.credits[src])
		p.Store32(w, v)
		if err := e.pr.Send(p, w, e.credit[src], uint64(4*e.me), 4, false); err != nil {
			return fmt.Errorf("nx: node %d's credit to %d: %w", e.me, src, err)
		}
	case AU:
		p.As("nx.credit").Store32(e.lay.Link(src)+uint64(4*e.me), v)
	}
	e.returned[src], e.credits[src] = v, e.credits[src]+1
	e.stats.Credits++
	return nil
}

// Tree returns node me's parent (-1 for node 0) and children, farthest
// subtree first, in the binomial tree of nodes nodes rooted at 0 that
// Sync and High reduce up and broadcast down.
func Tree(me, nodes int) (parent int, children []int) {
	lb := 1 << bits.Len(uint(nodes-1)) // node 0 spans every node
	parent = -1
	if me != 0 {
		lb = me & -me
		parent = me - lb
	}
	for k := lb / 2; k >= 1; k /= 2 {
		if me+k < nodes {
			children = append(children, me+k)
		}
	}
	return parent, children
}

// High is gdhigh: the largest of every node's v, on every node (every
// node calls it). The maximum is exact, so it is the same in any order:
// a relaxation's convergence test decides as the sequential program's.
func (e *Endpoint) High(p *cpu.Proc, v float64) (float64, error) {
	parent, children := Tree(e.me, e.lay.Nodes)
	val := v
	w := e.lay.Value()
	// Reduce: the nearest child first (its subtree is the smallest).
	for i := len(children) - 1; i >= 0; i-- {
		b, err := e.Recv(p, children[i], typeHigh, w, 8)
		if err != nil {
			return 0, err
		}
		val = math.Max(val, math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	if parent >= 0 {
		p.Store(w, binary.LittleEndian.AppendUint64(nil, math.Float64bits(val)))
		if err := e.send(p, parent, typeHigh, w, 8); err != nil {
			return 0, err
		}
		b, err := e.Recv(p, parent, typeHigh, w, 8)
		if err != nil {
			return 0, err
		}
		val = math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	p.Store(w, binary.LittleEndian.AppendUint64(nil, math.Float64bits(val)))
	for _, c := range children {
		if err := e.send(p, c, typeHigh, w, 8); err != nil {
			return 0, err
		}
	}
	return val, nil
}

// Sync is gsync: it returns once every node has called it (empty
// messages up the tree, then down).
func (e *Endpoint) Sync(p *cpu.Proc) error {
	parent, children := Tree(e.me, e.lay.Nodes)
	for i := len(children) - 1; i >= 0; i-- {
		if _, err := e.Recv(p, children[i], typeSync, 0, 0); err != nil {
			return err
		}
	}
	if parent >= 0 {
		if err := e.send(p, parent, typeSync, 0, 0); err != nil {
			return err
		}
		if _, err := e.Recv(p, parent, typeSync, 0, 0); err != nil {
			return err
		}
	}
	for _, c := range children {
		if err := e.send(p, c, typeSync, 0, 0); err != nil {
			return err
		}
	}
	return nil
}
