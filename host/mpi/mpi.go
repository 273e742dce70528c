// Package mpi is MPI over Panda-ST (lci-myrinet-cluster-protocols.txt
// section 6.2): «We ported MPICH, a widely used MPI implementation, to
// Panda-ST. An MPI implementation usually generates one message for each
// send statement in an MPI program.» MPI_Send and MPI_Recv (eager: the
// envelope and the data in one Panda message; receives matched by source
// and tag, wildcards allowed, against the posted receives or the queue of
// unexpected messages), MPI_Bcast over Panda's unordered broadcast («We
// replaced this broadcast with Panda's unordered broadcast which, in turn,
// uses LCI's broadcast») or MPICH's own binomial tree of point-to-point
// messages (Config.Bcast), and MPI_Allreduce (a binomial reduction to rank
// 0, then MPI_Bcast).
//
// Its code is charged in host CPU cycles (Costs) in the calling program,
// which polls Panda while it waits (Panda-ST: «relies on polling by its
// clients»).
package mpi

import (
	"encoding/binary"
	"fmt"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/panda"
)

// Costs are MPI's code paths in host CPU cycles (both platforms).
type Costs struct {
	// Call: an MPI_Send or MPI_Recv call through MPICH's layers (the
	// argument checks, the communicator, the ADI's request object, the
	// channel device's envelope, the progress engine's poll of the
	// device). calibrated: 706 cycles, fitted to MPI's +15.3 µs over
	// Panda-ST in the PPro I-pio round trip of 16-byte messages (Table V,
	// 27.0/42.3 µs): the model's Panda-ST round trip is 30.02 µs, MPI's
	// 45.30 µs (+15.28); a round trip makes four calls, all on the
	// critical path (MPI_Recv's after the match), and the 16-byte
	// envelope's PIO and the matches add 1.2 µs.
	Call int
	// Match: examining one entry of the posted-receive or unexpected
	// queue (compare context, source and tag). assumed: 20 cycles.
	Match int
	// Combine: one element of a reduction (load, add, store). assumed: 4
	// cycles.
	Combine int
}

// DefaultCosts returns MPI's costs.
func DefaultCosts() Costs { return Costs{Call: 706, Match: 20, Combine: 4} }

// Broadcast algorithms.
const (
	// BcastPanda is MPI_Bcast over Panda's unordered broadcast (LCI's
	// multicast), as the paper's port does.
	BcastPanda = "panda"
	// BcastBinomial is MPICH's default: a binomial tree of point-to-point
	// messages («MPICH by default provides a broadcast implementation
	// built on top of message-based unicast primitives»), mpimc.
	BcastBinomial = "binomial"
)

// Config configures MPI.
type Config struct {
	Costs Costs
	// Bcast is BcastPanda or BcastBinomial.
	Bcast string
	// Port is the Panda port MPI uses.
	Port uint8
}

// DefaultConfig is the paper's port: broadcasts over Panda's.
func DefaultConfig() Config { return Config{Costs: DefaultCosts(), Bcast: BcastPanda, Port: 2} }

// Wildcards for Recv.
const (
	AnySource = -1
	AnyTag    = -1
)

// Contexts: point-to-point and collective traffic never match each other.
const (
	ctxPt2Pt uint32 = iota
	ctxColl
	ctxBcast
)

// EnvelopeBytes is the envelope MPI puts before the data of every message:
// context, source rank, tag and length.
const EnvelopeBytes = 16

type envelope struct {
	ctx  uint32
	src  int
	tag  int
	data []byte
}

// Status is a completed receive's source and tag.
type Status struct{ Source, Tag int }

type request struct {
	ctx      uint32
	src, tag int
	done     bool
	env      *envelope
}

// Comm is one rank's MPI_COMM_WORLD.
type Comm struct {
	p          *panda.Node
	cfg        Config
	rank, size int
	posted     []*request
	unexpected []*envelope
	bcasts     [][]*envelope // per root, Panda broadcasts not yet received
	// Counters.
	Sends, Recvs, Unexpected uint64
}

// New returns rank's communicator on its Panda-ST node p (of size ranks).
func New(p *panda.Node, size int, cfg Config) (*Comm, error) {
	if p.Config().MT {
		return nil, fmt.Errorf("mpi: runs on Panda-ST, not Panda-MT")
	}
	if cfg.Bcast != BcastPanda && cfg.Bcast != BcastBinomial {
		return nil, fmt.Errorf("mpi: unknown broadcast %q (have %s, %s)", cfg.Bcast, BcastPanda, BcastBinomial)
	}
	c := &Comm{p: p, cfg: cfg, rank: p.Host().Node(), size: size, bcasts: make([][]*envelope, size)}
	p.Handle(cfg.Port, c.upcall)
	return c, nil
}

// Rank and Size are MPI_Comm_rank and MPI_Comm_size.
func (c *Comm) Rank() int { return c.rank }

// Size is MPI_Comm_size.
func (c *Comm) Size() int { return c.size }

func encode(ctx uint32, src, tag, n int) []byte {
	b := make([]byte, EnvelopeBytes)
	binary.LittleEndian.PutUint32(b[0:], ctx)
	binary.LittleEndian.PutUint32(b[4:], uint32(src))
	binary.LittleEndian.PutUint32(b[8:], uint32(int32(tag)))
	binary.LittleEndian.PutUint32(b[12:], uint32(n))
	return b
}

// upcall takes an MPI message from Panda: a broadcast is queued for its
// root; anything else matches the first posted receive that accepts it or
// joins the unexpected queue.
func (c *Comm) upcall(s *lcilib.Seq, m *panda.Message) {
	if len(m.Data) < EnvelopeBytes {
		s.Host().Report(s.Now(), "mpi.envelope", "message of %d bytes from %d is shorter than an envelope", len(m.Data), m.Src)
		return
	}
	e := &envelope{ctx: binary.LittleEndian.Uint32(m.Data[0:]), src: int(binary.LittleEndian.Uint32(m.Data[4:])),
		tag: int(int32(binary.LittleEndian.Uint32(m.Data[8:]))), data: m.Data[EnvelopeBytes:]}
	if n := int(binary.LittleEndian.Uint32(m.Data[12:])); n != len(e.data) {
		s.Host().Report(s.Now(), "mpi.envelope", "message from %d: envelope says %d bytes, %d arrived", m.Src, n, len(e.data))
	}
	if e.ctx == ctxBcast {
		c.bcasts[e.src] = append(c.bcasts[e.src], e)
		return
	}
	for i, r := range c.posted {
		s.Compute(c.cfg.Costs.Match)
		if r.matches(e) {
			r.env, r.done = e, true
			c.posted = append(c.posted[:i], c.posted[i+1:]...)
			return
		}
	}
	c.Unexpected++
	c.unexpected = append(c.unexpected, e)
}

func (r *request) matches(e *envelope) bool {
	return r.ctx == e.ctx && (r.src == AnySource || r.src == e.src) && (r.tag == AnyTag || r.tag == e.tag)
}

// Send is MPI_Send of data to rank dst with tag (eager: it returns when
// the message is in the NI's send buffers).
func (c *Comm) Send(s *lcilib.Seq, dst, tag int, data []byte) {
	s.Compute(c.cfg.Costs.Call)
	c.send(s, ctxPt2Pt, dst, tag, data)
}

func (c *Comm) send(s *lcilib.Seq, ctx uint32, dst, tag int, data []byte) {
	if dst < 0 || dst >= c.size || dst == c.rank {
		s.Host().Report(s.Now(), "mpi.api", "send from rank %d to rank %d of %d", c.rank, dst, c.size)
		return
	}
	c.Sends++
	c.p.Send(s, dst, c.cfg.Port, encode(ctx, c.rank, tag, len(data)), data)
}

// Recv is MPI_Recv from src (or AnySource) with tag (or AnyTag): the
// first unexpected message that matches, else a posted receive completed
// by the upcall while the call polls. An unexpected message's data is
// copied once more, out of MPI's buffer.
func (c *Comm) Recv(s *lcilib.Seq, src, tag int) ([]byte, Status) {
	d, st := c.recv(s, ctxPt2Pt, src, tag)
	// The call's work is charged when the message has been matched: the
	// request's completion and the return through the layers (a receive
	// posted early waits in the progress engine's poll, which Panda's
	// costs already are).
	s.Compute(c.cfg.Costs.Call)
	return d, st
}

func (c *Comm) recv(s *lcilib.Seq, ctx uint32, src, tag int) ([]byte, Status) {
	c.Recvs++
	r := &request{ctx: ctx, src: src, tag: tag}
	for i, e := range c.unexpected {
		s.Compute(c.cfg.Costs.Match)
		if r.matches(e) {
			c.unexpected = append(c.unexpected[:i], c.unexpected[i+1:]...)
			s.Compute(s.Host().CopyCycles(len(e.data), false))
			return e.data, Status{e.src, e.tag}
		}
	}
	c.posted = append(c.posted, r)
	c.p.WaitUntil(s, func() bool { return r.done })
	return r.env.data, Status{r.env.src, r.env.tag}
}

// Bcast is MPI_Bcast of data from root: every rank returns the root's
// data.
func (c *Comm) Bcast(s *lcilib.Seq, root int, data []byte) []byte {
	s.Compute(c.cfg.Costs.Call)
	if c.cfg.Bcast == BcastBinomial {
		return c.binomial(s, root, data)
	}
	if c.rank == root {
		c.Sends++
		c.p.Broadcast(s, c.cfg.Port, encode(ctxBcast, c.rank, 0, len(data)), data)
		return data
	}
	c.p.WaitUntil(s, func() bool { return len(c.bcasts[root]) > 0 })
	e := c.bcasts[root][0]
	c.bcasts[root] = c.bcasts[root][1:]
	c.Recvs++
	return e.data
}

// binomial is MPICH's binomial-tree broadcast over point-to-point
// messages: relative rank r receives from r - mask (its lowest set bit)
// and sends to r + mask for every lower mask.
func (c *Comm) binomial(s *lcilib.Seq, root int, data []byte) []byte {
	r := (c.rank - root + c.size) % c.size
	mask := 1
	for mask < c.size {
		if r&mask != 0 {
			data, _ = c.recv(s, ctxColl, (r-mask+root)%c.size, 0)
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if r+mask < c.size {
			c.send(s, ctxColl, (r+mask+root)%c.size, 0, data)
		}
	}
	return data
}

// Allreduce is MPI_Allreduce with MPI_SUM of 64-bit integers: a binomial
// reduction to rank 0 over point-to-point messages, then MPI_Bcast of the
// result.
func (c *Comm) Allreduce(s *lcilib.Seq, vals []int64) []int64 {
	s.Compute(c.cfg.Costs.Call)
	acc := append([]int64(nil), vals...)
	for mask := 1; mask < c.size; mask <<= 1 {
		if c.rank&mask != 0 {
			c.send(s, ctxColl, c.rank-mask, 1, pack(acc))
			break
		}
		if c.rank+mask < c.size {
			d, _ := c.recv(s, ctxColl, c.rank+mask, 1)
			other := unpack(d)
			s.Compute(c.cfg.Costs.Combine * len(acc))
			for i := range acc {
				if i < len(other) {
					acc[i] += other[i]
				}
			}
		}
	}
	return unpack(c.Bcast(s, 0, pack(acc)))
}

func pack(v []int64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return b
}

func unpack(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}
