package vmmc

import "fmt"

// Buffer names an exported receive buffer: the node that exported it and
// its number there (section 2.2: «a process exports the buffer ... Any
// other process with proper permission can import the receive buffer»).
type Buffer struct{ Node, ID int }

// String formats the buffer as node/id.
func (b Buffer) String() string { return fmt.Sprintf("%d/%d", b.Node, b.ID) }

// Export is an exported receive buffer as the directory keeps it.
type Export struct {
	Buffer Buffer
	// Addr and Len are the buffer's physical range on its node (no address
	// translation is modelled: a process's addresses are physical).
	Addr uint64
	Len  int
	// Notify is whether the buffer's pages have the IPT interrupt bit.
	Notify bool
	// Name is what the exporter published it as ("" if unnamed).
	Name string
	proc *Process
}

// Directory is the cluster's name service for exported buffers: untimed,
// as the VMMC papers' export/import rendezvous is a setup step outside the
// measured communication. It keeps exports in creation order; lookups use
// maps, nothing iterates them.
type Directory struct {
	exports []*Export
	byBuf   map[Buffer]*Export
	byName  map[string]Buffer
	next    map[int]int // per node: the next buffer number
}

// NewDirectory returns an empty directory.
func NewDirectory() *Directory {
	return &Directory{byBuf: map[Buffer]*Export{}, byName: map[string]Buffer{}, next: map[int]int{}}
}

func (d *Directory) add(node int, addr uint64, n int, notify bool, pr *Process) *Export {
	b := Buffer{Node: node, ID: d.next[node]}
	d.next[node]++
	x := &Export{Buffer: b, Addr: addr, Len: n, Notify: notify, proc: pr}
	d.exports = append(d.exports, x)
	d.byBuf[b] = x
	return x
}

// Lookup returns the export of b.
func (d *Directory) Lookup(b Buffer) (Export, bool) {
	x, ok := d.byBuf[b]
	if !ok {
		return Export{}, false
	}
	return *x, true
}

// Publish names buffer b so that other programs can find it.
func (d *Directory) Publish(name string, b Buffer) error {
	x, ok := d.byBuf[b]
	if !ok {
		return fmt.Errorf("vmmc: publish %q: buffer %v was never exported", name, b)
	}
	if _, dup := d.byName[name]; dup {
		return fmt.Errorf("vmmc: publish %q: the name is taken", name)
	}
	d.byName[name] = b
	x.Name = name
	return nil
}

// Find returns the buffer published as name.
func (d *Directory) Find(name string) (Buffer, bool) {
	b, ok := d.byName[name]
	return b, ok
}

// Exports returns every export in creation order.
func (d *Directory) Exports() []Export {
	out := make([]Export, len(d.exports))
	for i, x := range d.exports {
		out[i] = *x
	}
	return out
}

// exportAt returns the export of node whose range holds physical address
// addr (nil if none), searching in creation order.
func (d *Directory) exportAt(node int, addr uint64) *Export {
	for _, x := range d.exports {
		if x.Buffer.Node == node && addr >= x.Addr && addr < x.Addr+uint64(x.Len) {
			return x
		}
	}
	return nil
}
