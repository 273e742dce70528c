package atmtb

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/rma"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/switch/atm"
)

// The host programs of the measurement drivers (measure.go): user
// processes on each node's CPU that issue the kernel's WRITE, READ and
// block traps (host/rma), or raw mode's polled cell I/O, and spin on a
// word of their own memory until the data they wait for has landed
// (section 3.1.3: «we chose to spin wait the threads at user level»).

const (
	// SegBase is where every node exports its segment, SegBytes its size.
	// assumed: 1 MB up, 64 KB (16 pages of 4 KB): room for a 4 KB block
	// and a 250-cell stream of 40 bytes (10,000 bytes), far below
	// KernelBase.
	SegBase  = 0x10_0000
	SegBytes = 64 << 10
	// SrcBase is a sender's user buffer for block transfers. assumed: 2
	// MB up, clear of SegBase's segment.
	SrcBase = 0x20_0000
	// spinInstrs is one iteration of a user spin loop: the load of the
	// flag word and 3 more instructions (compare, branch, its delay
	// slot). assumed: the paper gives no loop; 4 is the shortest MIPS
	// load-compare-branch loop.
	spinInstrs = 4
	// copyInstrs is raw mode's user loop per word it copies from the
	// cell to memory beyond the store itself (assumed: 2, the address
	// increment and the loop branch; «the address space polls the
	// network constantly», L115, gives no loop).
	copyInstrs = 2
	// patience is how long a program spins before giving up. assumed: 10
	// ms, over 200 times the paper's slowest primitive (the 45 µs READ):
	// no correct transfer takes that long on an idle cluster.
	patience = 10 * clock.Millisecond
)

// errPatience is a program's report that it gave up waiting.
func errPatience(what string, round int) error {
	return fmt.Errorf("atmtb: %s round %d: nothing landed within %v", what, round, patience)
}

// Connect exports every node's segment [SegBase, SegBase+SegBytes) with
// read and write rights to every other node and imports, on every node,
// node j's segment into descriptor register j (untimed set-up at t=0).
// It returns each node's segment id.
func Connect(cl *Cluster) ([]uint8, error) {
	n := len(cl.Nodes)
	segs := make([]uint8, n)
	for i, nd := range cl.Nodes {
		var grant []int
		for j := range n {
			if j != i {
				grant = append(grant, j)
			}
		}
		s, err := nd.Kernel.Export(SegBase, SegBytes, rma.RightRead|rma.RightWrite, grant...)
		if err != nil {
			return nil, fmt.Errorf("atmtb: node %d: export: %w", i, err)
		}
		segs[i] = s
	}
	for i, nd := range cl.Nodes {
		for j := range n {
			if j == i {
				continue
			}
			if err := nd.Kernel.Import(j, j, segs[j], SegBytes, rma.RightRead|rma.RightWrite); err != nil {
				return nil, fmt.Errorf("atmtb: node %d: import node %d: %w", i, j, err)
			}
		}
	}
	return segs, nil
}

// spin loads the word at addr until want is there or patience runs out
// (each iteration spinInstrs instructions, the load one of them). It
// returns whether want arrived.
func spin(p *cpu.Proc, addr uint64, want uint32) bool {
	deadline := p.Now() + patience
	for p.Load32(addr) != want {
		if p.Now() > deadline {
			return false
		}
		p.Compute(spinInstrs - 1)
	}
	return true
}

// stamp is round r's mark: the value the last word of a transfer carries
// (never 0, the segment's initial contents).
func stamp(r int) uint32 { return uint32(r) + 1 }

// words returns n message registers, the last one stamp(r), the others
// a pattern of the round.
func words(n, r int) []uint32 {
	w := make([]uint32, n)
	for i := range w {
		w[i] = uint32(r)<<8 | uint32(i)
	}
	w[n-1] = stamp(r)
	return w
}

// writeMsg WRITEs bytes (a multiple of 4) to word offset off of register
// reg as ceil(bytes/40) WRITE traps of up to 10 words, the last word of
// the last one stamp(r). It returns the first refusal.
func writeMsg(p *cpu.Proc, k *rma.Kernel, reg, off, bytes, r int) rma.Status {
	nw := bytes / 4
	for w := 0; w < nw; w += rma.MaxWords {
		n := min(rma.MaxWords, nw-w)
		regs := words(n, r)
		if w+n < nw {
			regs[n-1] = uint32(r)<<8 | uint32(n-1)
		}
		if s := k.Write(p, reg, off+w, n, false, regs); s != rma.OK {
			return s
		}
	}
	return rma.OK
}

// lastWord is the address of a message's last word at word offset off of
// a node's segment.
func lastWord(off, bytes int) uint64 { return SegBase + uint64(4*(off+bytes/4-1)) }

// Rounds collects a ping-pong's round trips.
type Rounds struct {
	// Trip[i] is round i's round trip (0 if it never completed).
	Trip []clock.Time
	// Err is the first program failure.
	Err error
}

func (r *Rounds) fail(err error) {
	if r.Err == nil {
		r.Err = err
	}
}

// pingWrite is node 0's side of the protected-WRITE ping-pong: per round
// it WRITEs bytes into reg's segment (node 1's) at word 0 and spins on
// the last word of the reply node 1 WRITEs into its own segment at word
// 0.
func pingWrite(k *rma.Kernel, reg, bytes, rounds int, rs *Rounds) func(p *cpu.Proc) {
	return ping("ping", "WRITE", bytes, rounds, rs, func(p *cpu.Proc, r int) rma.Status { return writeMsg(p, k, reg, 0, bytes, r) })
}

// pongWrite is node 1's side: per round it spins on the last word node 0
// WRITEs, then WRITEs the reply.
func pongWrite(k *rma.Kernel, reg, bytes, rounds int, rs *Rounds) func(p *cpu.Proc) {
	return pong("pong", "WRITE", bytes, rounds, rs, func(p *cpu.Proc, r int) rma.Status { return writeMsg(p, k, reg, 0, bytes, r) })
}

// ping is node 0's side of a ping-pong of bytes: per round it sends the
// message (send, into node 1's segment at word 0) and spins on the last
// word of the reply node 1 sends into its own segment at word 0, timing
// the round trip. name and op name the side and the operation in errors.
func ping(name, op string, bytes, rounds int, rs *Rounds, send func(p *cpu.Proc, r int) rma.Status) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for r := range rounds {
			t0 := p.Now()
			if s := send(p, r); s != rma.OK {
				rs.fail(fmt.Errorf("atmtb: %s round %d: %s refused: %v", name, r, op, s))
				return
			}
			if !spin(p, lastWord(0, bytes), stamp(r)) {
				rs.fail(errPatience(name, r))
				return
			}
			rs.Trip[r] = p.Now() - t0
		}
	}
}

// pong is node 1's side of ping: per round it spins on the last word of
// node 0's message, then sends the reply.
func pong(name, op string, bytes, rounds int, rs *Rounds, send func(p *cpu.Proc, r int) rma.Status) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for r := range rounds {
			if !spin(p, lastWord(0, bytes), stamp(r)) {
				rs.fail(errPatience(name, r))
				return
			}
			if s := send(p, r); s != rma.OK {
				rs.fail(fmt.Errorf("atmtb: %s round %d: %s refused: %v", name, r, op, s))
				return
			}
		}
	}
}

// rawPayload is a raw cell carrying words (up to 10, little-endian) from
// byte 0: raw mode has no header of its own («ignoring issues of
// protection, sharing, and demultiplexing», L115).
func rawPayload(w []uint32) [46]byte {
	var b [46]byte
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// rawRecv polls the board until a cell is there and copies its 10 words
// to the node's segment at word 0 (one store and copyInstrs instructions
// each); it returns the last word.
func rawRecv(p *cpu.Proc, raw *rma.Raw) (uint32, bool) {
	deadline := p.Now() + patience
	for {
		pl, _, ok := raw.Poll(p)
		if ok {
			var last uint32
			for i := range rma.MaxWords {
				last = binary.LittleEndian.Uint32(pl[4*i:])
				p.Store32(SegBase+uint64(4*i), last)
				p.Compute(copyInstrs)
			}
			return last, true
		}
		if p.Now() > deadline {
			return 0, false
		}
	}
}

// pingRaw and pongRaw are the raw-mode ping-pong (section 2.3's 11 µs
// write, L115): node 0 sends a cell of 10 words on VC (0, 1) and polls for
// node 1's reply, which node 1 sends once it has polled the cell and
// copied its words to memory.
func pingRaw(raw *rma.Raw, rounds int, rs *Rounds) func(p *cpu.Proc) {
	h := atm.Header{VCI: rma.VCI(0, 1)}
	return func(p *cpu.Proc) {
		for r := range rounds {
			t0 := p.Now()
			raw.Send(p, h, rawPayload(words(rma.MaxWords, r)))
			got, ok := rawRecv(p, raw)
			if !ok {
				rs.fail(errPatience("raw ping", r))
				return
			}
			if got != stamp(r) {
				rs.fail(fmt.Errorf("atmtb: raw ping round %d: reply stamp %d, want %d", r, got, stamp(r)))
				return
			}
			rs.Trip[r] = p.Now() - t0
		}
	}
}

func pongRaw(raw *rma.Raw, rounds int, rs *Rounds) func(p *cpu.Proc) {
	h := atm.Header{VCI: rma.VCI(1, 0)}
	return func(p *cpu.Proc) {
		for r := range rounds {
			got, ok := rawRecv(p, raw)
			if !ok {
				rs.fail(errPatience("raw pong", r))
				return
			}
			raw.Send(p, h, rawPayload(words(rma.MaxWords, int(got)-1)))
		}
	}
}

// reader is node 0's READ loop: per round it clears the destination's
// last word, READs words from node 1's segment (register 1) at word 0 into
// its own segment dseg at word doff, and spins until the reply's last word
// (node 1's stamp, set before the run) has landed.
func reader(k *rma.Kernel, dseg uint8, doff, n, rounds int, want uint32, rs *Rounds) func(p *cpu.Proc) {
	dst := SegBase + uint64(4*(doff+n-1))
	return func(p *cpu.Proc) {
		for r := range rounds {
			p.Store32(dst, 0)
			t0 := p.Now()
			if _, s := k.Read(p, 1, 0, n, int(dseg), doff, false); s != rma.OK {
				rs.fail(fmt.Errorf("atmtb: READ round %d refused: %v", r, s))
				return
			}
			if !spin(p, dst, want) {
				rs.fail(errPatience("READ", r))
				return
			}
			rs.Trip[r] = p.Now() - t0
		}
	}
}

// ackWord is the word offset in node 0's segment where a stream's
// receiver acknowledges the warm-up pass (one WRITE of one word).
const ackWord = 4000

// sendStream sends bytes to register reg's segment at word 0, the last
// word stamp(pass): back-to-back WRITE traps of 40 bytes (the last
// shorter), or one block transfer of the user buffer at SrcBase (block)
// whose last word the program stores first.
func sendStream(p *cpu.Proc, k *rma.Kernel, reg, bytes, pass int, block bool) rma.Status {
	if block {
		p.Store32(SrcBase+uint64(bytes-4), stamp(pass))
		return k.Block(p, reg, 0, SrcBase, bytes/4, false)
	}
	return writeMsg(p, k, reg, 0, bytes, pass)
}

// streamer is a stream's sender: a warm-up pass (every cache line, page
// and kernel record the stream touches brought in), then, once the
// receiver has acknowledged it, the measured pass; start is when the
// measured pass's first trap was issued (start is called then).
func streamer(k *rma.Kernel, reg, bytes int, block bool, start func(now clock.Time), rs *Rounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		if block {
			// The user buffer's words, written by the program (so in its
			// cache, as a program that has just produced them).
			for i := 0; i < bytes; i += 4 {
				p.Store32(SrcBase+uint64(i), uint32(i/4))
			}
		}
		if s := sendStream(p, k, reg, bytes, 0, block); s != rma.OK {
			rs.fail(fmt.Errorf("atmtb: warm-up stream refused: %v", s))
			return
		}
		if !spin(p, SegBase+4*ackWord, stamp(0)) {
			rs.fail(errPatience("stream ack", 0))
			return
		}
		start(p.Now())
		if s := sendStream(p, k, reg, bytes, 1, block); s != rma.OK {
			rs.fail(fmt.Errorf("atmtb: stream refused: %v", s))
		}
	}
}

// sink is a stream's receiver: it spins until the warm-up pass's last
// word has landed, acknowledges it with a one-word WRITE to node 0 (its
// register 0), spins on the measured pass's last word and records when
// it saw it.
func sink(k *rma.Kernel, bytes int, end *clock.Time, rs *Rounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		if !spin(p, lastWord(0, bytes), stamp(0)) {
			rs.fail(errPatience("stream", 0))
			return
		}
		if s := k.Write(p, 0, ackWord, 1, false, []uint32{stamp(0)}); s != rma.OK {
			rs.fail(fmt.Errorf("atmtb: stream ack refused: %v", s))
			return
		}
		if !spin(p, lastWord(0, bytes), stamp(1)) {
			rs.fail(errPatience("stream", 1))
			return
		}
		*end = p.Now()
	}
}

// rawStreamer sends a warm-up pass of cells raw cells of 10 words back to
// back (raw.Send polls STATUS for room), waits for the receiver's raw
// acknowledgement, and sends the measured pass; the last cell of pass n
// carries stamp(n) in its last word, the others all ones.
func rawStreamer(raw *rma.Raw, cells int, start func(now clock.Time), rs *Rounds) func(p *cpu.Proc) {
	h := rawHeader(0, 1)
	return func(p *cpu.Proc) {
		for pass := range 2 {
			if pass == 1 {
				if _, ok := rawRecv(p, raw); !ok {
					rs.fail(errPatience("raw stream ack", 0))
					return
				}
				start(p.Now())
			}
			for c := range cells {
				w := words(rma.MaxWords, pass)
				if c < cells-1 {
					w[rma.MaxWords-1] = 0xFFFF_FFFF
				}
				raw.Send(p, h, rawPayload(w))
			}
		}
	}
}

// rawSink polls and copies the cells of both passes, acknowledges the
// warm-up pass with one raw cell, and records when the measured pass's
// last cell was copied.
func rawSink(raw *rma.Raw, cells int, end *clock.Time, rs *Rounds) func(p *cpu.Proc) {
	return func(p *cpu.Proc) {
		for pass := range 2 {
			for c := range cells {
				got, ok := rawRecv(p, raw)
				if !ok {
					rs.fail(errPatience("raw stream", pass*cells+c))
					return
				}
				if (c == cells-1) != (got == stamp(pass)) {
					rs.fail(fmt.Errorf("atmtb: raw stream pass %d cell %d: last word %#x", pass, c, got))
					return
				}
			}
			if pass == 0 {
				raw.Send(p, rawHeader(1, 0), rawPayload(words(rma.MaxWords, 0)))
			}
		}
		*end = p.Now()
	}
}

// pingBlock and pongBlock are the block-transfer ping-pong: as pingWrite
// and pongWrite, each message one block transfer of the user buffer at
// SrcBase, whose last word the program stores first.
func pingBlock(k *rma.Kernel, reg, bytes, rounds int, rs *Rounds) func(p *cpu.Proc) {
	return ping("block ping", "block transfer", bytes, rounds, rs, func(p *cpu.Proc, r int) rma.Status { return sendStream(p, k, reg, bytes, r, true) })
}

func pongBlock(k *rma.Kernel, reg, bytes, rounds int, rs *Rounds) func(p *cpu.Proc) {
	return pong("block pong", "block transfer", bytes, rounds, rs, func(p *cpu.Proc, r int) rma.Status { return sendStream(p, k, reg, bytes, r, true) })
}

// rawHeader is the header of raw cells from node src to node dst: their
// permanent VC (rma.VCI).
func rawHeader(src, dst int) atm.Header { return atm.Header{VCI: rma.VCI(src, dst)} }
