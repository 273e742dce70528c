package shrimp

import "fmt"

// The Incoming Page Table (SH-P18; shrimp-design-choices.txt section 2.1:
// «an Incoming Page Table (IPT) with one entry per physical page»): one
// entry per local physical page (Config.Entries, 8192 for the 32 MB
// node, derived as the OPT's), whether the page is exported (the network
// may write it) and its interrupt bit (a packet with its own interrupt bit
// set raises a notification only when the page's bit is set too, L103).
// The incoming path (incoming.go) looks the entry up in the cycle it takes
// a packet's header: an SRAM read (assumed: no extra cycle).

// iptSet writes the IPT entry of page (the kernel's CSR write, csr.go, or
// the back door SetIPT).
func (n *NI) iptSet(page int, e IPTEntry) error {
	if page < 0 || page >= len(n.in.ipt) {
		return fmt.Errorf("IPT page %d must be in 0..%d", page, len(n.in.ipt)-1)
	}
	n.in.ipt[page] = e
	return nil
}

// iptGet returns the IPT entry of page (the zero entry, not exported, for
// a page out of range).
func (n *NI) iptGet(page int) IPTEntry {
	if page < 0 || page >= len(n.in.ipt) {
		return IPTEntry{}
	}
	return n.in.ipt[page]
}
