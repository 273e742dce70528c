package shrimp

import "fmt"

// setOPT writes OPT entry i after checking it names a real remote page.
func (n *NI) setOPT(i int, e OPTEntry) error {
	switch {
	case i < 0 || i >= len(n.out.opt):
		return fmt.Errorf("OPT index %d must be in 0..%d", i, len(n.out.opt)-1)
	case e.Valid && (e.DstNode < 0 || e.DstNode >= n.nodes):
		return fmt.Errorf("OPT entry %d: DstNode %d must be in 0..%d", i, e.DstNode, n.nodes-1)
	case e.Valid && uint64(e.DstPage) >= n.cfg.MemoryBytes/uint64(n.cfg.PageBytes):
		return fmt.Errorf("OPT entry %d: DstPage %d must be below %d", i, e.DstPage, n.cfg.Entries())
	case e.Subpage != 0 && (!pow2(e.Subpage) || e.Subpage > n.cfg.PageBytes || e.Subpage < n.cfg.FIFOWidthBytes):
		return fmt.Errorf("OPT entry %d: Subpage %d must be 0 or a power of two in %d..%d", i, e.Subpage, n.cfg.FIFOWidthBytes, n.cfg.PageBytes)
	}
	n.out.opt[i] = e
	return nil
}

// optEntry returns OPT entry i, the zero entry when i is out of range.
func (n *NI) optEntry(i int) OPTEntry {
	if i < 0 || i >= len(n.out.opt) {
		return OPTEntry{}
	}
	return n.out.opt[i]
}
