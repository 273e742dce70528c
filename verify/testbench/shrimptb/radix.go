package shrimptb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/vmmc"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// Radix-VMMC (shrimp-design-choices.txt section 3: «A port of the
// SPLASH-2 integer radix sort kernel to the VMMC API. The versions for
// automatic update and deliberate update differ in the method by which
// sorted keys are distributed. In the automatic update version, each
// processor distributes its keys by placing them directly into arrays on
// remote processors using automatic update mappings. In the deliberate
// update version, the keys for each remote processor are gathered into
// large message transfers, and scattered by remote processors»; issue 14
// design section 7).
//
// Every node holds KeysPerNode keys of the distributed array; a pass
// sorts by one digit of log2(Radix) bits (Passes passes). Per pass, each
// node: counts its keys' digits (local histogram); sends its histogram row
// and the row's flag to every node's histogram matrix, one deliberate-
// update send per node, and waits for every row (the same code in both
// versions, sendRows: the paper's versions «differ in the method by which
// sorted keys are distributed», nothing else); computes its keys' global
// ranks; moves every key to its rank (AU: a store into the local shadow
// of the destination node's key array, bound to it; DU: gathered per
// destination, one send per destination into a staging area there); sets
// its done flag at every node after the keys, through the channel that
// carried them (AU: a store through a page bound to that node's matrix,
// behind the key stores in the Outgoing FIFO; DU: a send after the keys'
// send, the DU engine keeping their order); waits for every done flag;
// and (DU) scatters what it received into its key array. The done flag is
// part of the key distribution: a deliberate update after automatic ones
// is not ordered behind them (the NI's arbiter takes the Outgoing FIFO
// and the DU engine's stream in turn), so an AU version's flag sent by DU
// could arrive before its keys. Messages per pair per pass: DU three (row,
// keys, done flag), Table 3's 2,160 = 16 x 15 x 3 x 3; AU one (the row),
// 720.

// RadixConfig is one Radix-VMMC run.
type RadixConfig struct {
	// KeysPerNode is the keys each node holds (n/p); Radix the digit's
	// values (r, a power of two, at most MaxRadix: a histogram row of r
	// counts and its two flags take RadixRowBytes, so the p rows of the
	// matrix take one or more pages); Passes the digits.
	KeysPerNode, Radix, Passes int
	// AU selects the automatic-update version, else deliberate update;
	// Combine turns combining on in the AU version's bindings (the key
	// arrays' shadows and the done flags' matrix pages: its only
	// automatic updates).
	AU, Combine bool
	// WorkCycles is the CPU cycles of work per key per pass besides the
	// modelled accesses (derived: Table 1's 10.9 s sequential for 2M keys
	// and 3 iterations is 1.82 µs = 109 cycles per key-pass at 60 MHz;
	// the modelled loads and stores, and the two Computes' boundaries,
	// stand for about 15 of them: 109 - 15 = 94. It was 97 with «about
	// 12» before host/cpu's 8e23296, under which an operation's
	// successor no longer shares its last cycle).
	WorkCycles int
	// Seed draws the keys.
	Seed uint64
}

// DefaultRadixCI is the CI size of design section 7: 1024 keys per node,
// radix 16 (the paper's histogram-to-keys ratio r(p-1)/(n/p) = 0.234),
// 3 passes (12-bit keys).
func DefaultRadixCI() RadixConfig {
	return RadixConfig{KeysPerNode: 1024, Radix: 16, Passes: 3, AU: true, WorkCycles: 94, Seed: 1}
}

// Validate checks the run's sizes; an error names the field.
func (r RadixConfig) Validate() error {
	switch {
	case r.KeysPerNode < 1 || r.KeysPerNode > 16384:
		return fmt.Errorf("shrimptb: radix KeysPerNode %d must be in 1..16384 (64 KB per key array)", r.KeysPerNode)
	case r.Radix < 2 || r.Radix > MaxRadix || r.Radix&(r.Radix-1) != 0:
		return fmt.Errorf("shrimptb: radix Radix %d must be a power of two in 2..%d", r.Radix, MaxRadix)
	case r.Passes < 1 || r.Passes*bits.TrailingZeros(uint(r.Radix)) > 31:
		return fmt.Errorf("shrimptb: radix Passes %d must be at least 1 with keys of at most 31 bits", r.Passes)
	case r.WorkCycles < 0:
		return fmt.Errorf("shrimptb: radix WorkCycles %d must not be negative", r.WorkCycles)
	}
	return nil
}

// The Radix memory map of every node (assumed: clear of each other and of
// the measurements' buffers, below the kernel's pool). The regions'
// largest sizes: the matrix 16 rows x RadixRowBytes(MaxRadix) = 32 KB; the
// staging area 16 slots of 64 KB; the links 16 matrices; the shadows 32
// arrays of 64 KB; the gather buffers 16 arrays.
const (
	radixKeys   = 0x20_0000 // two key arrays, 64 KB apart
	radixMatrix = 0x22_0000 // the histogram matrix: a row per node (RadixRowBytes)
	radixRow    = 0x22_8000 // the local row to send (both versions), then DU's done flag
	radixStage  = 0x23_0000 // DU: the staging area, a slot per source (stageSlot)
	radixLink   = 0x40_0000 // AU: the pages bound to node j's matrix at + j matrices (matrixBytes), for the done flags
	radixShadow = 0x50_0000 // AU: node j's array of parity q at + (2j+q) x 64 KB
	radixGather = 0x80_0000 // DU: keys for node j at + j x 64 KB
	radixArray  = 0x1_0000  // a key array's slot
)

// MaxRadix is the largest radix: a row of 256 counts and its flags take
// 2 KB, the 16 rows of the matrix 32 KB (assumed: beyond the paper's
// histogram-to-keys ratio at any key array that fits 64 KB).
const MaxRadix = 256

// RadixRowBytes is a histogram row's size in the matrix at radix r: the r
// 4-byte counts, the histogram flag after them and the done flag in the
// last word, rounded up to a power of two so that rows never straddle a
// page (a DU send of a row may not cross one, section 4.5.3), and at
// least 256 bytes (16 rows a page up to radix 62: radix 64 takes 512-byte
// rows, 8 a page).
func RadixRowBytes(r int) int {
	n := 256
	for n < 4*r+8 {
		n *= 2
	}
	return n
}

// matrixBytes is the histogram matrix of p rows at radix r, in whole
// pages: what each node exports and every other node binds (AU: page-
// aligned on both sides, section 2.2).
func matrixBytes(p, r, page int) int {
	return (p*RadixRowBytes(r) + page - 1) / page * page
}

// RadixResult is what a run measured.
type RadixResult struct {
	// Time is the sort's time: the start to the last node's end.
	Time clock.Time
	// Sorted is whether the key arrays ended sorted and a permutation of
	// the input.
	Sorted bool
	// Messages is the deliberate-update sends (Send calls: the AU
	// version's are its histogram rows); Notifications the notification
	// interrupts.
	Messages, Notifications uint64
	// Busy is the UDMA initiations the NI answered busy (the library
	// retried the LOAD): without a DU queue, an asynchronous send finds
	// the engine still moving the previous one (section 4.5.3).
	Busy uint64
	// Exchange is the time a node spends in the histogram exchange (its
	// sends and the wait for every row; the same code in both versions),
	// summed over the passes, the mean over the nodes.
	Exchange clock.Time
	// AUPackets is the AU packets the NIs made, Combined the stores that
	// joined an open packet, Thresholds the Outgoing FIFOs' threshold
	// interrupts, all summed over the nodes; FIFOMax the largest
	// Outgoing FIFO occupancy of any node, in bytes.
	AUPackets, Combined, Thresholds uint64
	FIFOMax                         int
	Run                             env.Result
}

// radixNode is one node's view of the run.
type radixNode struct {
	id      int
	pr      *vmmc.Process
	arrays  [2][]*vmmc.Proxy // [parity][j]
	matrix  []*vmmc.Proxy    // [j]
	stage   []*vmmc.Proxy    // [j]
	end     clock.Time
	sendErr error
	// exchange is the node's time in sendRows, summed over the passes.
	exchange clock.Time
	// ref takes the node's own stores into its exported pages (its own
	// matrix row, its own keys, DU's scattered keys): Ref.LocalWrite.
	ref *Ref
}

// MeasureRadix runs Radix-VMMC on c.Nodes nodes.
func MeasureRadix(e *env.Env, c Config, rc RadixConfig) (RadixResult, *Cluster, error) {
	if err := rc.Validate(); err != nil {
		return RadixResult{}, nil, err
	}
	if c.Nodes < 2 || c.Nodes > 16 {
		return RadixResult{}, nil, fmt.Errorf("shrimptb: radix needs 2..16 nodes (a matrix row each, at most 32 KB), got %d", c.Nodes)
	}
	cl, err := Build(e, c)
	if err != nil {
		return RadixResult{}, nil, err
	}
	p, n := c.Nodes, rc.KeysPerNode
	arrBytes := 4 * n
	mb := matrixBytes(p, rc.Radix, c.NI.PageBytes)
	// The keys: drawn from the seed, written into memory before time 0.
	rng := rand.New(rand.NewPCG(rc.Seed, 0x5a17))
	mask := uint32(1)<<(rc.Passes*bits.TrailingZeros(uint(rc.Radix))) - 1
	var input []uint32
	nodes := make([]*radixNode, p)
	for i := range p {
		nodes[i] = &radixNode{id: i, pr: process(cl, i), ref: cl.Ref}
		buf := make([]byte, arrBytes)
		for k := range n {
			v := rng.Uint32() & mask
			input = append(input, v)
			binary.LittleEndian.PutUint32(buf[4*k:], v)
		}
		if err := cl.Nodes[i].Memory().Storage().Write(radixKeys, buf); err != nil {
			cl.Close()
			return RadixResult{}, nil, err
		}
	}
	fail := func(err error) (RadixResult, *Cluster, error) {
		cl.Close()
		return RadixResult{}, nil, fmt.Errorf("shrimptb: radix setup: %w", err)
	}
	// Exports: both key arrays, the matrix and (DU) the staging area.
	type exp struct {
		arrays        [2]vmmc.Buffer
		matrix, stage vmmc.Buffer
	}
	exps := make([]exp, p)
	for j, nd := range nodes {
		for q := range 2 {
			b, err := nd.pr.Export(nil, radixKeys+uint64(q*radixArray), arrBytes, false)
			if err != nil {
				return fail(err)
			}
			exps[j].arrays[q] = b
		}
		b, err := nd.pr.Export(nil, radixMatrix, mb, false)
		if err != nil {
			return fail(err)
		}
		exps[j].matrix = b
		if !rc.AU {
			if exps[j].stage, err = nd.pr.Export(nil, radixStage, p*stageSlot(rc, c), false); err != nil {
				return fail(err)
			}
		}
	}
	// Imports and (AU) bindings.
	for i, nd := range nodes {
		nd.arrays = [2][]*vmmc.Proxy{make([]*vmmc.Proxy, p), make([]*vmmc.Proxy, p)}
		nd.matrix, nd.stage = make([]*vmmc.Proxy, p), make([]*vmmc.Proxy, p)
		for j := range p {
			if j == i {
				continue
			}
			var err error
			if nd.matrix[j], err = nd.pr.Import(nil, exps[j].matrix); err != nil {
				return fail(err)
			}
			if rc.AU {
				if err := nd.pr.Bind(nil, radixLink+uint64(j*mb), nd.matrix[j], 0, mb, rc.Combine, c.NI.PageBytes); err != nil {
					return fail(err)
				}
				for q := range 2 {
					if nd.arrays[q][j], err = nd.pr.Import(nil, exps[j].arrays[q]); err != nil {
						return fail(err)
					}
					if err := nd.pr.Bind(nil, shadow(j, q), nd.arrays[q][j], 0, arrBytes, rc.Combine, c.NI.PageBytes); err != nil {
						return fail(err)
					}
				}
			} else if nd.stage[j], err = nd.pr.Import(nil, exps[j].stage); err != nil {
				return fail(err)
			}
		}
	}
	for i, nd := range nodes {
		start(cl, i, radixProgram(rc, p, stageSlot(rc, c), mb, nd))
	}
	res, err := finishRun(e, cl)
	out := RadixResult{Run: res}
	for _, nd := range nodes {
		out.Time = max(out.Time, nd.end)
		err = errors.Join(err, nd.sendErr)
		out.Messages += nd.pr.Stats().Sends
		out.Busy += nd.pr.Stats().Busy
		out.Notifications += cl.Nodes[nd.id].Kernel.Stats().Notify
		out.Exchange += nd.exchange
		k := cl.Nodes[nd.id].NI.Counters()
		out.AUPackets += k.AUPackets
		out.Combined += k.Combined
		out.Thresholds += k.ThresholdIRQs
		out.FIFOMax = max(out.FIFOMax, k.FIFOMax)
	}
	out.Exchange /= clock.Time(p)
	// The result: the last pass wrote the array of parity Passes%2.
	var got []uint32
	buf := make([]byte, arrBytes)
	for i := range p {
		if rerr := cl.Nodes[i].Memory().Storage().Read(radixKeys+uint64((rc.Passes%2)*radixArray), buf); rerr != nil {
			return out, cl, errors.Join(err, rerr)
		}
		for k := range n {
			got = append(got, binary.LittleEndian.Uint32(buf[4*k:]))
		}
	}
	want := slices.Clone(input)
	slices.Sort(want)
	out.Sorted = slices.Equal(got, want)
	return out, cl, err
}

// stageSlot is one source's part of a node's DU staging area: its key
// array's bytes, rounded up to pages (the pages the others import).
func stageSlot(rc RadixConfig, c Config) int {
	pg := c.NI.PageBytes
	return (4*rc.KeysPerNode + pg - 1) / pg * pg
}

// shadow is the local shadow of node j's key array of parity q.
func shadow(j, q int) uint64 { return radixShadow + uint64((2*j+q)*radixArray) }

// radixProgram is node nd's program.
func radixProgram(rc RadixConfig, p, slot, mb int, nd *radixNode) func(pp *cpu.Proc) {
	return func(pp *cpu.Proc) {
		i, n, r := nd.id, rc.KeysPerNode, rc.Radix
		logr := bits.TrailingZeros(uint(r))
		rowBytes := RadixRowBytes(r)
		histFlag, doneFlag := uint64(4*r), uint64(rowBytes-4)
		row := func(j int) uint64 { return radixMatrix + uint64(j*rowBytes) }
		// link is node i's row in the local pages bound to node j's matrix.
		link := func(j int) uint64 { return radixLink + uint64(j*mb) + uint64(i*rowBytes) }
		// local stores v at addr of the node's own exported pages.
		local := func(addr uint64, v uint32) {
			pp.Store32(addr, v)
			nd.ref.LocalWrite(i, addr, binary.LittleEndian.AppendUint32(nil, v))
		}
		fail := func(err error) {
			if nd.sendErr == nil {
				nd.sendErr = fmt.Errorf("node %d: %w", i, err)
			}
		}
		wait := func(off uint64, v uint32) bool {
			for j := range p {
				if j == i {
					continue
				}
				if _, ok := Poll(pp, row(j)+off, v, radixPatience); !ok {
					fail(fmt.Errorf("no flag from node %d", j))
					return false
				}
			}
			return true
		}
		// sendRows is the histogram exchange, the same in both versions
		// (section 3: they «differ in the method by which sorted keys are
		// distributed»): the row into the own matrix, then the row and its
		// flag, 4r+4 bytes, in one deliberate-update send to each other
		// node's matrix (the flag is the send's last word: the receiver
		// polls it, and the engine writes the row in order); then the
		// wait for every node's row.
		sendRows := func(count []uint32, flag uint32) bool {
			t0 := pp.Now()
			defer func() { nd.exchange += pp.Now() - t0 }()
			for d, v := range count {
				local(row(i)+uint64(4*d), v) // the own matrix
			}
			for d, v := range count {
				pp.Store32(radixRow+uint64(4*d), v)
			}
			pp.Store32(radixRow+histFlag, flag)
			for j := range p {
				if j == i {
					continue
				}
				if err := nd.pr.Send(pp, radixRow, nd.matrix[j], uint64(i*rowBytes), 4*r+4, false); err != nil {
					fail(err)
					return false
				}
			}
			nd.pr.Wait(pp)
			return wait(histFlag, flag)
		}
		for pass := range rc.Passes {
			flag := uint32(pass + 1)
			src := radixKeys + uint64((pass%2)*radixArray)
			dstQ := (pass + 1) % 2
			dst := radixKeys + uint64(dstQ*radixArray)
			shift := uint(pass * logr)
			digit := func(k uint32) int { return int(k>>shift) & (r - 1) }
			// Local histogram.
			count := make([]uint32, r)
			for k := range n {
				count[digit(pp.Load32(src+uint64(4*k)))]++
				if w := rc.WorkCycles / 2; w > 0 {
					pp.Compute(w)
				}
			}
			if !sendRows(count, flag) {
				return
			}
			// Global ranks: hist[j][d] from the matrix.
			hist := make([][]uint32, p)
			for j := range p {
				hist[j] = make([]uint32, r)
				for d := range r {
					hist[j][d] = pp.Load32(row(j) + uint64(4*d))
				}
			}
			// bucket[j][d]: the first global rank of node j's keys of digit d.
			bucket := make([][]int, p)
			for j := range p {
				bucket[j] = make([]int, r)
			}
			pos := 0
			for d := range r {
				for j := range p {
					bucket[j][d] = pos
					pos += int(hist[j][d])
				}
			}
			// Permutation.
			cursor := slices.Clone(bucket[i])
			gathered := make([]int, p)
			for k := range n {
				key := pp.Load32(src + uint64(4*k))
				d := digit(key)
				g := cursor[d]
				cursor[d]++
				to, idx := g/n, uint64(4*(g%n))
				switch {
				case to == i:
					local(dst+idx, key)
				case rc.AU:
					pp.Store32(shadow(to, dstQ)+idx, key)
				default:
					pp.Store32(radixGather+uint64(to*radixArray+4*gathered[to]), key)
					gathered[to]++
				}
				if w := rc.WorkCycles - rc.WorkCycles/2; w > 0 {
					pp.Compute(w)
				}
			}
			// Sends (DU) and the done flags.
			for s := 1; s < p; s++ {
				j := (i + s) % p
				if rc.AU {
					pp.Store32(link(j)+doneFlag, flag)
					continue
				}
				if gathered[j] > 0 {
					if err := nd.pr.Send(pp, radixGather+uint64(j*radixArray), nd.stage[j], uint64(i*slot), 4*gathered[j], false); err != nil {
						fail(err)
						return
					}
				}
				pp.Store32(radixRow+doneFlag, flag)
				if err := nd.pr.Send(pp, radixRow+doneFlag, nd.matrix[j], uint64(i*rowBytes)+doneFlag, 4, false); err != nil {
					fail(err)
					return
				}
			}
			if !rc.AU {
				nd.pr.Wait(pp)
			}
			if !wait(doneFlag, flag) {
				return
			}
			if rc.AU {
				continue
			}
			// Scatter (DU): node j's keys for this node arrive in j's
			// rank order; the part of bucket (j, d) in this node's range
			// starts at max(its first rank, i*n).
			lo, hi := i*n, (i+1)*n
			for s := 1; s < p; s++ {
				j := (i + s) % p
				at := make([]int, r)
				total := 0
				for d := range r {
					b, e := bucket[j][d], bucket[j][d]+int(hist[j][d])
					at[d] = max(b, lo)
					if m := min(e, hi) - at[d]; m > 0 {
						total += m
					}
				}
				base := radixStage + uint64(j*slot)
				for k := range total {
					key := pp.Load32(base + uint64(4*k))
					d := digit(key)
					local(dst+uint64(4*(at[d]-lo)), key)
					at[d]++
				}
			}
		}
		nd.end = pp.Now()
	}
}

// radixPatience is how long a node waits for a flag. assumed: 50 ms, many
// times a CI pass.
const radixPatience = 50 * clock.Millisecond
