package mcadapter

import (
	"fmt"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/switch/mchub"
	"github.com/nisim/nisim/waves"
)

// txPath is the transmit side (issue 13 design section 1.1): the PCI
// target of the transmit window with its TX FIFO write port (target.go),
// the transmit page table lookup, the packetiser that cuts each PCI burst
// into packets at page ends and every MaxPacketBytes, and the link sender
// (packetiser.go). It runs in the adapter's Tick after the receive side,
// output first: the link sender, the upstream responder (read errors and
// non-posted write completions), then the write port.
//
// Timing, in PCI cycles, of a posted write burst of n 4-byte beats whose
// address phase is at cycle A (PCI32: medium decode, 1 idle cycle), with
// k = TxBeatCycles and P = PipelineCycles:
//
//   - A: address phase; the retry claim reserves the burst's bytes in the
//     TX FIFO or refuses it (target retry).
//   - A+1 .. A+k: decode (1) and the first beat's k-1 wait states.
//   - D = A+k+1, D+k, ..., D+(n-1)k: the data phases, each after k-1 wait
//     states (the bus sees the target channel full).
//   - the adapter writes beat i into the TX FIFO one cycle after its data
//     phase (the channel is a register); a packet is complete with its
//     last byte, at D+(n-1)k+1 for a one-packet burst.
//   - the packet's head flit leaves P cycles after that, when the link has
//     a credit and its serialiser is free.
type txPath struct {
	pci    *bus.Bus
	ch     *mem.Channel
	target string
	format mchub.Format

	// held is the TX FIFO space taken, in bytes: bursts claimed but not
	// all written yet, and packets not yet sent. The retry claim decides
	// on it; relAt/relNow are the bytes released at relAt, which the
	// claim still counts (they free after that edge, as a FIFO's slots
	// do).
	held   int
	relAt  clock.Time
	relNow int
	// stored is the bytes written into the FIFO and not yet sent (the
	// write port's own room check, which only a burst longer than the
	// whole FIFO can hit).
	stored int

	port txPort
	rd   txRead
	// cpl is a non-posted write whose completion beat is to be sent.
	cpl *mem.Req

	// queue is the packets in the FIFO, oldest first; building is the
	// one being assembled from the current burst.
	queue    []*txPacket
	building *txPacket
	seq      uint64

	sigState, sigBytes, sigPackets *waves.Signal
}

func (a *Adapter) buildTx() error {
	f := mchub.MC1().Format()
	if err := f.Validate(); err != nil {
		return fmt.Errorf("%s: tx: %w", a.name, err)
	}
	t := &a.tx
	t.format = f
	t.relAt = -1
	reg := a.env.Waves
	scope := a.name + ".Tx"
	// state: what the write port does this cycle (IDLE, WRITE, HOLD for
	// the wait states of a written beat, READ for a read answered with an
	// error, FULL when a beat finds no room); fifo_bytes: the TX FIFO's
	// occupancy in data bytes, claimed bursts included; packets: complete
	// packets waiting for the link.
	t.sigState = reg.String(scope, "state")
	t.sigBytes = reg.Integer(scope, "fifo_bytes", 32)
	t.sigPackets = reg.Integer(scope, "packets", 32)
	t.sigState.SetString(0, "IDLE")
	return nil
}

// attachTx makes the adapter the PCI target of the transmit window
// [txBase, txBase+WindowBytes) on pci, with the retry claim and the first
// beat's wait states of the TX FIFO write port.
func (a *Adapter) attachTx(pci *bus.Bus, txBase uint64) error {
	t := &a.tx
	if t.pci != nil {
		return fmt.Errorf("tx window already attached to %s", t.pci.Name())
	}
	k := a.cfg.TxBeatCycles
	// The target channel is the FIFO write port's input register: one
	// beat deep, so that the bus moves the next beat only after the port
	// has released the last (its wait states); two deep at one cycle per
	// beat, so that a beat can move every cycle (a 1-deep register frees
	// its slot only after the edge that empties it).
	depth := 1
	if k == 1 {
		depth = 2
	}
	ch, err := mem.NewChannel(a.env, a.name+".Tx.Chan", pci.Config().WidthBytes, depth)
	if err != nil {
		return err
	}
	name := a.name + ".Tx"
	if err := pci.AddTarget(name, txBase, a.cfg.WindowBytes(), ch); err != nil {
		return fmt.Errorf("tx window: %w", err)
	}
	// The first beat's k-1 wait states: the bus holds the data phase
	// after its decode (the later beats wait on the channel).
	if err := pci.SetTargetWait(name, k-1); err != nil {
		return err
	}
	if err := pci.SetTargetRetry(name, a.claimTx); err != nil {
		return err
	}
	ch.ConnectTarget(a)
	t.pci, t.ch, t.target = pci, ch, name
	return nil
}

// tickTx runs the transmit side for one PCI cycle, output first.
func (a *Adapter) tickTx(now clock.Time) bool {
	t := &a.tx
	if t.ch == nil {
		return false
	}
	sent := a.sendTx(now)
	read := a.answerUp(now)
	took := a.takeBeat(now)
	t.sigBytes.Set(now, uint64(t.held))
	t.sigPackets.Set(now, uint64(len(t.queue)))
	return sent || read || took
}

// idleTx reports whether nothing is claimed, held or being sent.
func (a *Adapter) idleTx() bool {
	t := &a.tx
	return t.held == 0 && t.port.req == nil && t.rd.req == nil && t.cpl == nil && len(t.queue) == 0 && t.building == nil &&
		(t.ch == nil || t.ch.Down.Len() == 0)
}

// stateTx describes the transmit side for the watchdog.
func (a *Adapter) stateTx() string {
	t := &a.tx
	s := fmt.Sprintf("fifo %d/%d bytes, %d packets queued", t.held, a.cfg.TxFIFOBytes, len(t.queue))
	if t.port.req != nil {
		s += fmt.Sprintf(", writing %v (%d bytes taken)", t.port.req, t.port.got)
	}
	if t.rd.req != nil {
		s += fmt.Sprintf(", answering %v with an error", t.rd.req)
	}
	if len(t.queue) > 0 {
		p := t.queue[0]
		s += fmt.Sprintf(", head %v ready at %v, %d/%d flits sent", &p.w, p.readyAt, p.sent, len(p.flits))
		if a.send == nil {
			s += " (no link: ConnectLink)"
		}
	}
	return s
}

// release frees n bytes of the TX FIFO at now (visible to the claim
// after now).
func (t *txPath) release(now clock.Time, n int) {
	if t.relAt != now {
		t.relAt, t.relNow = now, 0
	}
	t.relNow += n
	t.held -= n
}
