package telegraphos

import "github.com/nisim/nisim/rtl/clock"

// MessageClasses is the number of message classes (requests and
// responses), each of which needs a virtual channel of its own on the
// link and in the switch so that a request waiting for room can never
// hold the room its response needs (deadlock freedom, TG-P5).
const MessageClasses = int(numClasses)

// OnPacket makes fn see every packet the HIB hands to its link (sent) or
// takes from it (received): a testbench feeds its delivery and ordering
// checkers from it. A later call replaces fn.
func (h *HIB) OnPacket(fn func(now clock.Time, p *Packet, sent bool)) { h.onPacket = fn }
