package link

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nisim/nisim/rtl/clock"
)

// FlowControl selects how a receiver holds back its sender.
type FlowControl uint8

const (
	// Credits: the sender holds one credit per free flit slot of each
	// virtual channel's receive buffer, spends one per flit, and gets it
	// back CreditDelay cycles after the receiver frees the slot (wormhole
	// routers; telegraphos.txt section 2.1 «back-pressured flow control»).
	Credits FlowControl = iota
	// StopGo: the receiver has a slack buffer and sends STOP when its
	// occupancy rises above StopAt bytes and GO when it falls below GoAt;
	// the control symbol takes the wire delay to reach the sender
	// (Myrinet, lci-myrinet-cluster-protocols.txt section 3 «full-duplex
	// links with hardware flow control»).
	StopGo
	// NoFlowControl: the sender never waits; a flit that finds the
	// receive buffer (BufferFlits per VC) full is dropped and counted (an
	// ATM link: «ATM networks» may lose cells, atm-remote-memory-access.txt).
	NoFlowControl
)

// Config is a link's parameters, the same for both directions.
type Config struct {
	// Clock is the link clock; all cycle counts are in its cycles.
	Clock clock.Clock
	// BytesPerCycle is the serialisation rate of each direction.
	BytesPerCycle int
	// DelayCycles is the wire delay from the end of a flit's
	// serialisation to its arrival in the receive buffer.
	DelayCycles int
	// VCs is the number of virtual channels (Credits only; StopGo has 1).
	VCs int
	// FlowControl selects Credits or StopGo.
	FlowControl FlowControl
	// BufferFlits is each VC's receive buffer in flits (Credits).
	BufferFlits int
	// CreditDelay is the cycles from a freed slot to the sender being able
	// to use its credit (at least 1: a credit freed at an edge is usable
	// from the next edge at the earliest).
	CreditDelay int
	// CreditDelayBA, if not 0, replaces CreditDelay for the credits of the
	// B-to-A direction (returning to B): the two ends of a link may process
	// credits differently (a router and a network terminal).
	CreditDelayBA int
	// SharedBuffer makes each direction's receive buffer one pool of
	// BufferFlits slots shared by all VCs (one credit count), instead of
	// BufferFlits private slots per VC (Credits only).
	SharedBuffer bool
	// SlackBytes is the receive slack buffer (StopGo).
	SlackBytes int
	// StopAt and GoAt are the slack thresholds in bytes (StopGo).
	StopAt, GoAt int
	// TxDepth is the depth of each VC's transmit queue in flits; 0 builds
	// none, for a sender that drives the link itself with CanSend and Send
	// (a router, a network terminal), whose queues would never be pushed.
	TxDepth int
	// CorruptProb is the probability that a packet has one bit flipped on
	// the wire; DropProb that it is lost. Both need a seeded Env.
	CorruptProb, DropProb float64
	// TraceFlits records every flit (link.flit) besides every packet
	// (link.packet).
	TraceFlits bool
}

// DefaultCredit returns a 1-byte-per-cycle credit link with 1 VC of 4 flits,
// no wire delay and a credit delay of 1 cycle.
func DefaultCredit(c clock.Clock) Config {
	return Config{Clock: c, BytesPerCycle: 1, VCs: 1, FlowControl: Credits,
		BufferFlits: 4, CreditDelay: 1, TxDepth: 2, TraceFlits: true}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case !c.Clock.Valid():
		return errors.New("link: no clock")
	case c.BytesPerCycle < 1:
		return fmt.Errorf("link bytes per cycle %d must be at least 1", c.BytesPerCycle)
	case c.DelayCycles < 0:
		return fmt.Errorf("link delay %d cycles must not be negative", c.DelayCycles)
	case c.TxDepth < 0:
		return fmt.Errorf("link transmit queue depth %d must not be negative", c.TxDepth)
	case c.CorruptProb < 0 || c.CorruptProb > 1 || c.DropProb < 0 || c.DropProb > 1:
		return fmt.Errorf("link error probabilities (corrupt %g, drop %g) must be in [0, 1]", c.CorruptProb, c.DropProb)
	}
	switch c.FlowControl {
	case Credits:
		switch {
		case c.VCs < 1 || c.VCs > 64:
			return fmt.Errorf("link VCs %d must be in 1..64", c.VCs)
		case c.BufferFlits < 1:
			return fmt.Errorf("link VC buffer %d flits must be at least 1", c.BufferFlits)
		case c.BufferFlits > math.MaxInt32: // the credit counters are int32
			return fmt.Errorf("link VC buffer %d flits must be at most %d", c.BufferFlits, math.MaxInt32)
		case c.CreditDelay < 1 || c.CreditDelayBA < 0:
			return fmt.Errorf("link credit delay %d (B to A: %d) cycles must be at least 1", c.CreditDelay, c.CreditDelayBA)
		}
	case NoFlowControl:
		switch {
		case c.VCs < 1 || c.VCs > 64:
			return fmt.Errorf("link VCs %d must be in 1..64", c.VCs)
		case c.BufferFlits < 1:
			return fmt.Errorf("link VC buffer %d flits must be at least 1", c.BufferFlits)
		case c.BufferFlits > math.MaxInt32: // the credit counters are int32
			return fmt.Errorf("link VC buffer %d flits must be at most %d", c.BufferFlits, math.MaxInt32)
		}
	case StopGo:
		switch {
		case c.VCs > 1:
			return fmt.Errorf("STOP/GO links have one channel, not %d VCs", c.VCs)
		case c.SlackBytes < 1:
			return fmt.Errorf("link slack buffer %d bytes must be at least 1", c.SlackBytes)
		case c.GoAt < 0 || c.GoAt > c.StopAt || c.StopAt >= c.SlackBytes:
			return fmt.Errorf("link thresholds must satisfy 0 <= GO (%d) <= STOP (%d) < slack (%d)", c.GoAt, c.StopAt, c.SlackBytes)
		}
	default:
		return fmt.Errorf("link: unknown flow control %d", c.FlowControl)
	}
	return nil
}

// MinSlack returns the smallest slack buffer that cannot overflow: STOP
// leaves the receiver when occupancy passes StopAt, reaches the sender a
// wire delay later, and the data already on the wire or being sent in the
// meantime (a round trip of bytes, plus the flit in progress) still
// arrives. maxFlit is the largest flit in bytes.
func (c Config) MinSlack(maxFlit int) int {
	return c.StopAt + 2*(c.DelayCycles+1)*c.BytesPerCycle + 2*maxFlit
}

// FaultKind is what a planned fault does to a packet on the wire.
type FaultKind uint8

// Planned fault kinds: the fates DropProb and CorruptProb give at random.
const (
	// Drop loses the packet on the wire: its flits never reach the
	// receive buffer (counted in Dropped, traced as link.drop).
	Drop FaultKind = iota + 1
	// Corrupt flips one bit of the packet's data on the wire: the
	// receiver's CRC check fails at its tail (counted in Corrupted and
	// CRCErrors, the tail marked Bad, link.packet crc=bad).
	Corrupt
)

func (k FaultKind) String() string {
	switch k {
	case Drop:
		return "drop"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("FaultKind(%d)", uint8(k))
}

// Fault is one planned fault: the N-th packet (head) a direction sends,
// counted from 1 at the direction's first packet, gets Kind.
type Fault struct {
	N    int
	Kind FaultKind
}

// FaultPlan is a direction's deterministic faults, the directed
// counterpart of DropProb and CorruptProb (a testbench's negative test
// loses or corrupts exactly the packet it chose). Its order does not
// matter: a direction keeps it sorted by N.
type FaultPlan []Fault

// Validate checks the plan: every N at least 1, no N twice, known kinds.
// Its one-line errors name the key, "fault plan".
func (p FaultPlan) Validate() error {
	seen := make(map[int]bool, len(p)) // lookup only
	for i, f := range p {
		switch {
		case f.N < 1:
			return fmt.Errorf("link fault plan entry %d: packet %d must be at least 1", i, f.N)
		case f.Kind != Drop && f.Kind != Corrupt:
			return fmt.Errorf("link fault plan entry %d: packet %d: unknown kind %v (drop or corrupt)", i, f.N, f.Kind)
		case seen[f.N]:
			return fmt.Errorf("link fault plan entry %d: packet %d is planned twice", i, f.N)
		}
		seen[f.N] = true
	}
	return nil
}

// sorted returns a copy of the plan sorted by N.
func (p FaultPlan) sorted() FaultPlan {
	s := slices.Clone(p)
	slices.SortFunc(s, func(a, b Fault) int { return cmp.Compare(a.N, b.N) })
	return s
}
