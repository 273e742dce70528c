package cashmere

import "fmt"

// Layout is where the runtime's data lives on every node (design section
// 3; section 2.3's four classes of data). Node-memory addresses are the
// same on every node; a Memory Channel region has a transmit address per
// sending node (Tx, in the adapter's PCI window) and a receive address per
// receiving node (Rx, host memory), 0 where the node has none.
type Layout struct {
	// SharedBase is the shared pages' address, the same on every node and
	// CPU (section 2.3 «each processor sharing the same virtual and
	// physical addresses»); on a page's home node its frame is the MC
	// receive frame of the page's global page (Figure 1(c)).
	SharedBase uint64
	// TwinBase is where the twins live in node memory (page i's twin at
	// TwinBase + i*PageBytes).
	TwinBase uint64
	// MetaBase is the node's protocol words in node memory (the local
	// locks, the logical clock, the barrier counters), one 64-byte line
	// each: metaBytes(cfg) bytes.
	MetaBase uint64
	// DataTx[n] is node n's transmit address of shared byte 0: the home
	// copies, one region per superpage, mapped consecutively, every node
	// transmitting (Figure 1(c): «Every node that creates a local copy of
	// a page in a given superpage creates a transmit mapping to the home
	// node copy»).
	DataTx []uint64
	// Dir is the global directory, broadcast without loop-back (Figure
	// 1(a)): one 32-bit word per page per node, page-major.
	DirTx, DirRx []uint64
	// Msg[r] is node r's point-to-point region (Figure 1(b)): one bin of
	// BinBytes per sending node (write notices, requests, replies).
	// MsgTx[r][s] is sender s's transmit address of it, MsgRx[r] r's copy.
	MsgTx [][]uint64
	MsgRx []uint64
	// Poll[r] is node r's poll flag (section 2.3 «the remote request
	// polling flag»), the one word several nodes write: PollTx[r][s],
	// PollRx[r].
	PollTx [][]uint64
	PollRx []uint64
	// Sync is the loop-back region of the locks' arrays (32 bytes per
	// lock, lock 0 the protocol's) and the MC flush words (one per
	// process): SyncBytes(cfg) bytes.
	SyncTx, SyncRx []uint64
	// Bar is the broadcast region of the barrier's node arrivals (one word
	// per node) and the flags (8 bytes each, from byte 64): BarBytes(cfg).
	BarTx, BarRx []uint64
	// Offset, under 1LD, displaces each protocol node's node-memory data
	// (its copy at SharedBase+Offset[n], its twins, its protocol words):
	// the processors of one cluster node keep separate copies at the same
	// shared addresses, which the runtime translates per process as a TLB
	// would, at no cost. nil: no displacement.
	Offset []uint64
}

// Bins: the layout of one sender's bin in a receiver's message region
// (Figure 2's global write-notice bin and the request and reply buffers of
// section 2.3, «structured very much like the global write notice lists»).
const (
	// binTail is the count of write notices the sender has put in the
	// bin (a circular queue's tail, written only by the sender).
	binTail = 0
	// binAck is the count of notices the sender has taken out of the
	// receiver's bin at the sender (the consumption index going back).
	binAck = 4
	// binReqSeq and binReqPage are the sender's page request.
	binReqSeq  = 8
	binReqPage = 12
	// binReplySeq is the sequence number of the sender's reply to the
	// receiver's request; the reply's page is at binReply.
	binReplySeq = 16
	// binNotices is the circular queue's first entry.
	binNotices = 64
	// binReply is the reply page.
	binReply = PageBytes
	// BinBytes is one bin.
	BinBytes = 2 * PageBytes
	// binQueue is the entries of the circular queue.
	binQueue = (binReply - binNotices) / 4
)

// MsgBytes is one node's message region: a bin per node (its own unused).
func MsgBytes(cfg Config) int { return cfg.Nodes * binBytes(cfg) }

// binBytes is one bin: BinBytes, and under 2LOffMC two more diff
// channels (section 2.6 «explicit messages to perform diff operations»):
// channel 0 for a processor's flushes (under the node's fetch lock),
// channel 1 for the page an exclusive holder sends home when it is asked
// for it (under the serving lock), each an 8 KB image and a bitmap of the
// words it carries.
func binBytes(cfg Config) int {
	if cfg.offMC() {
		return 5 * PageBytes
	}
	return BinBytes
}

// The explicit diff's fields in a bin (2LOffMC): per channel ch, the
// sender's sequence number and page in the header, the home's
// acknowledgement (written back into the sender's region), the image and
// the bitmap.
func binDiffSeq(ch int) uint64   { return 20 + 12*uint64(ch) }
func binDiffPage(ch int) uint64  { return 24 + 12*uint64(ch) }
func binDiffAck(ch int) uint64   { return 28 + 12*uint64(ch) }
func binDiffImage(ch int) uint64 { return uint64(2+ch) * PageBytes }
func binDiffBits(ch int) uint64  { return 4*PageBytes + 256*uint64(ch) }

// diffBitmapBytes is a page's bitmap of words: one bit per 8-byte word.
const diffBitmapBytes = PageBytes / 8 / 8

// DirBytes is the global directory; 2LMigr adds one shared word per page
// after the per-node words (section 2.6, MC-P24; migr.go).
func DirBytes(cfg Config) int {
	if cfg.migrating() {
		return cfg.Pages * (cfg.Nodes + 1) * 4
	}
	return cfg.Pages * cfg.Nodes * 4
}

// lockBytes is one lock's array: 8 longword entries (section 2.3).
const lockBytes = 4 * MaxNodes

// SyncBytes is the loop-back region: the protocol lock and the
// application's, then a flush word per process; 2LMigr adds a per-page
// migration lock's array after them (migr.go).
func SyncBytes(cfg Config) int {
	n := (cfg.Locks+1)*lockBytes + 4*cfg.Procs()
	if cfg.migrating() {
		n += cfg.Pages * lockBytes
	}
	return n
}

// flagBase is the first flag's offset in the barrier region.
const flagBase = 64

// BarBytes is the barrier and flag region.
func BarBytes(cfg Config) int { return flagBase + 8*max(cfg.Flags, 1) }

// Node-local words, one 64-byte line each, after one lock line per page.
const (
	metaClock = iota
	metaNoticeLock
	metaFetchLock
	metaServeLock
	metaSendLock
	metaBarArrive
	metaBarDone
	metaBarRelease
	metaLockFlags // lock l's per-node flag at metaLockFlags+l (l=0: the protocol lock)
)

// metaLine is the node-local words' spacing: a cache line each, so that
// spinning on one does not disturb another (assumed: the 21064A's 64-byte
// line, section 3 «A cache line is 64 bytes»).
const metaLine = 64

// MetaBytes is the node-local words; 2LS adds one shootdown mailbox line
// per (sender, target) pair of local processors after the lock flags.
func MetaBytes(cfg Config) int {
	n := cfg.Pages + metaLockFlags + cfg.Locks + 1
	if cfg.shootdown() {
		n += cfg.CPUs * cfg.CPUs
	}
	return n * metaLine
}

// A shootdown mailbox (2LS, section 2.6): the page and the request's
// sequence number, written by the sender; the acknowledged sequence
// number, written by the target.
const (
	shootPage = 0
	shootSeq  = 4
	shootAck  = 8
)

// shootSlot is the mailbox from local processor s to local processor q.
func (rt *Runtime) shootSlot(s, q int) uint64 {
	return rt.meta(metaLockFlags + rt.cfg.Locks + 1 + s*rt.cfg.CPUs + q)
}

// Validate checks that every region is there for every node that needs
// it; an error names the field.
func (l Layout) Validate(cfg Config) error {
	n := cfg.Nodes
	aligned := func(name string, a uint64) error {
		if a == 0 || a%PageBytes != 0 {
			return fmt.Errorf("cashmere: Layout.%s %#x must be a nonzero multiple of %d", name, a, PageBytes)
		}
		return nil
	}
	for _, x := range []struct {
		name string
		a    uint64
	}{{"SharedBase", l.SharedBase}, {"TwinBase", l.TwinBase}, {"MetaBase", l.MetaBase}} {
		if err := aligned(x.name, x.a); err != nil {
			return err
		}
	}
	all := func(name string, a []uint64) error {
		if len(a) != n {
			return fmt.Errorf("cashmere: Layout.%s has %d entries, want one per node (%d)", name, len(a), n)
		}
		for i, v := range a {
			if v == 0 {
				return fmt.Errorf("cashmere: Layout.%s[%d] is 0", name, i)
			}
		}
		return nil
	}
	for _, x := range []struct {
		name string
		a    []uint64
	}{{"DirTx", l.DirTx}, {"DirRx", l.DirRx}, {"MsgRx", l.MsgRx}, {"PollRx", l.PollRx},
		{"SyncTx", l.SyncTx}, {"SyncRx", l.SyncRx}, {"BarTx", l.BarTx}, {"BarRx", l.BarRx}} {
		if err := all(x.name, x.a); err != nil {
			return err
		}
	}
	if !cfg.offMC() {
		// 2LOffMC keeps the application's data out of MC space.
		if err := all("DataTx", l.DataTx); err != nil {
			return err
		}
	}
	for _, x := range []struct {
		name string
		a    [][]uint64
	}{{"MsgTx", l.MsgTx}, {"PollTx", l.PollTx}} {
		if len(x.a) != n {
			return fmt.Errorf("cashmere: Layout.%s has %d entries, want one per node (%d)", x.name, len(x.a), n)
		}
		for r, row := range x.a {
			if len(row) != n {
				return fmt.Errorf("cashmere: Layout.%s[%d] has %d entries, want %d", x.name, r, len(row), n)
			}
			for s, v := range row {
				if s != r && v == 0 {
					return fmt.Errorf("cashmere: Layout.%s[%d][%d] is 0", x.name, r, s)
				}
			}
		}
	}
	return nil
}

// Addresses.

func (rt *Runtime) pageAddr(pg int) uint64 { return rt.lay.SharedBase + uint64(pg)*PageBytes }
func (rt *Runtime) twinAddr(pg int) uint64 { return rt.lay.TwinBase + uint64(pg)*PageBytes }
func (rt *Runtime) homeTx(node, pg int) uint64 {
	return rt.lay.DataTx[node] + uint64(pg)*PageBytes
}
func (rt *Runtime) pageLock(pg int) uint64 { return rt.lay.MetaBase + uint64(pg)*metaLine }
func (rt *Runtime) meta(word int) uint64 {
	return rt.lay.MetaBase + uint64(rt.cfg.Pages+word)*metaLine
}
func (rt *Runtime) dirOff(pg, node int) uint64 { return 4 * uint64(pg*rt.cfg.Nodes+node) }

// bin returns the offset of sender's bin in a message region.
func (rt *Runtime) bin(sender int) uint64 { return uint64(sender) * uint64(binBytes(rt.cfg)) }

func (rt *Runtime) lockEntry(l, node int) uint64 { return uint64(l*lockBytes + 4*node) }
func (rt *Runtime) flushWord(id int) uint64 {
	return uint64((rt.cfg.Locks+1)*lockBytes + 4*id)
}
func flagOff(f int) uint64 { return flagBase + 8*uint64(f) }
