package shrimp

// SCAFFOLD: being built (E3: Incoming Page Table). E3 replaces this file.

// iptSet writes the IPT entry of page.
func (n *NI) iptSet(page int, e IPTEntry) error { return nil }

// iptGet returns the IPT entry of page.
func (n *NI) iptGet(page int) IPTEntry { return IPTEntry{} }
