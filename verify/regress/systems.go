package regress

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/nisim/nisim/verify/scenario"
)

// Systems returns the tier's systems, in the order of the table: the
// wormhole mesh, the Myrinet clusters, the ATM switch, the Memory Channel
// hub, the Memory Channel cluster, Cashmere on it, Telegraphos, LCI, SHRIMP,
// SVM on SHRIMP and the ATM remote memory.
//
// Each draws jobs' parameters across what its scenario offers (traffic
// pattern, load, sizes, node count, buffers) and keeps the load below
// saturation: a saturated network run stops at its drain limit with
// packets in flight and fails its "drained" check, which is a finding about
// the load, not the model.
func Systems() []*System {
	return []*System{
		{Name: "mesh", Noun: "packets", Unit: "packets delivered or dropped in the measurement window (mesh scenario)",
			Chunk: 60_000, Cost: 1.0 / 15_000, Draw: drawMesh, Count: SumMetrics("packets", "dropped")},
		{Name: "myrinet", Noun: "packets", Unit: "packets delivered or dropped in the measurement window (myrinet-grid and myrinet-clos)",
			Chunk: 50_000, Cost: 1.0 / 9_000, Draw: drawMyrinet, Count: SumMetrics("packets", "dropped")},
		{Name: "atm", Noun: "cells", Unit: "cells delivered or dropped at the switch, whole run (atm-star)",
			Chunk: 100_000, Cost: 1.0 / 50_000, Draw: drawATM, Count: SumMetrics("delivered", "dropped")},
		{Name: "mchub", Noun: "deliveries", Unit: "writes delivered at a receiver, each (write, receiver) pair once, whole run (mchub-star)",
			Chunk: 100_000, Cost: 1.0 / 80_000, Draw: drawMC, Count: SumMetrics("deliveries")},
		mcSystem(),
		cashSystem(),
		{Name: "telegraphos", Noun: "packets", Unit: "remote packets: updates forwarded to the owner and reflected writes sent to the copies (telegraphos-coherence)",
			Chunk: 80_000, Cost: 1.0 / 40_000, Draw: drawTelegraphos, Count: SumMetrics("updates", "reflects")},
		{Name: "lci", Noun: "operations", Unit: "operations completed: a unicast delivered, a multicast at every member, a fetch-and-add answered (lci-traffic)",
			Chunk: 40_000, Cost: 1.0 / 650, Draw: drawLCI, Count: SumMetrics("operations")},
		{Name: "lci-rx", Noun: "packets", Unit: "reliable packets I-nirx or I-hrx sent (first transmissions) while every link corrupted and lost packets at random (lci-traffic)",
			Chunk: 40_000, Cost: 1.0 / 1500, Draw: drawRx, Count: SumMetrics("packets")},
		shrimpSystem(),
		svmSystem(),
		atmRMASystem(),
	}
}

// pick returns one of xs.
func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// between returns a value in [lo, hi) rounded to 3 decimals (short repro
// lines), at least 0.001.
func between(r *rand.Rand, lo, hi float64) float64 {
	return max(0.001, math.Round((lo+(hi-lo)*r.Float64())*1000)/1000)
}

func num[T int | float64 | bool](v T) string {
	switch x := any(v).(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

// sizeMix is a packet or write size distribution and its mean (and, for
// Memory Channel writes, the mean bytes a write takes on the wire).
type sizeMix struct {
	spec       string
	mean, wire float64
}

// periods returns the measurement periods of period cycles that carry
// about want transactions at perCycle, at least 1.
func periods(want, perCycle float64, period int) int {
	return max(1, int(math.Ceil(want/(perCycle*float64(period)))))
}

// drawMesh: BookSim's mesh88_lat router on a k x k mesh (k 4, 6 or 8)
// with every traffic pattern, loads from light to about 60% of a
// conservative saturation point, short and long packets and bimodal
// mixes, 1 to 8 VCs (1 VC: the network promises per-flow order, and the
// order checker is on) and 4- to 16-flit VC buffers.
func drawMesh(r *rand.Rand, want float64) Spec {
	k := pick(r, 4, 6, 8, 8)
	pattern := pick(r, "uniform", "uniform", "transpose", "bitcomp", "hotspot", "neighbor")
	if pattern == "bitcomp" && k == 6 {
		k = 8 // bitcomp needs a power-of-two node count
	}
	n := k * k
	size := pick(r, sizeMix{spec: "20", mean: 20}, sizeMix{spec: "1:0.5,20:0.5", mean: 10.5}, sizeMix{spec: "4", mean: 4}, sizeMix{spec: "8:0.7,16:0.3", mean: 10.4}, sizeMix{spec: "2", mean: 2})
	vcs := pick(r, 1, 2, 4, 8)
	buf := pick(r, 4, 8, 16)
	// Saturation (flits/node/cycle), conservatively, for 8 VCs of 8 flits
	// (measured on 8x8), and what fewer VCs, small buffers and short
	// packets (a VC is held until its tail's credit returns) take off.
	sat := map[string]float64{"uniform": 0.38, "transpose": 0.22, "bitcomp": 0.22, "neighbor": 0.45, "hotspot": 0.38}[pattern]
	f := 1.0
	switch {
	case vcs == 1:
		f *= 0.45
		if size.mean < 5 {
			f *= 0.8
		}
	case vcs == 2:
		f *= 0.7
	}
	if buf == 4 {
		f *= 0.8
	}
	sat *= f
	sets := []Set{{"k", num(k)}, {"traffic", pattern}}
	if pattern == "hotspot" {
		hf := pick(r, 0.05, 0.1, 0.2)
		// The hot node ejects hf of all traffic plus its uniform share:
		// keep that under 0.6 flits per cycle (less with fewer VCs).
		sat = min(sat, 0.6*f/(hf*float64(n)+1-hf))
		sets = append(sets, Set{"hotspots", fmt.Sprintf("[%d]", r.IntN(n))}, Set{"hot_fraction", num(hf)})
	}
	rate := between(r, 0.1*sat, 0.6*sat)
	perCycle := float64(n) * rate / size.mean
	mp := periods(want, perCycle, 1000)
	sets = append(sets, Set{"injection_rate", num(rate)}, Set{"packet_size", size.spec},
		Set{"router.num_vcs", num(vcs)}, Set{"router.input_speedup", num(min(2, vcs))}, Set{"router.vc_buf_size", num(buf)},
		Set{"warmup_periods", "1"}, Set{"measure_periods", num(mp)})
	return Spec{Scenario: "mesh", Sets: sets, Expect: perCycle * float64(mp*1000)}
}

// drawMyrinet: the LCI paper's two clusters (the PPro grid and the P3
// Clos, each also on the other platform's links), every traffic pattern,
// 16- to 256-byte packets and mixes, loads up to about 60% of a
// conservative saturation point; per-flow order is checked (source routes,
// one path).
func drawMyrinet(r *rand.Rand, want float64) Spec {
	topo := pick(r, "myrinet-grid", "myrinet-clos")
	plat := pick(r, "ppro", "p3")
	pattern := pick(r, "uniform", "uniform", "transpose", "bitcomp", "hotspot", "neighbor")
	size := pick(r, sizeMix{spec: "16", mean: 16}, sizeMix{spec: "4", mean: 4}, sizeMix{spec: "64", mean: 64}, sizeMix{spec: "4:0.5,64:0.5", mean: 34}, sizeMix{spec: "8:0.5,32:0.5", mean: 20})
	// Saturation (flits/node/cycle), conservatively: measured with
	// 4:0.5,64:0.5 packets (the P3's links saturate first; transpose
	// concentrates routes, most on the Clos).
	sat := map[string]float64{"uniform": 0.055, "bitcomp": 0.055, "neighbor": 0.065, "hotspot": 0.055, "transpose": 0.03}[pattern]
	if pattern == "transpose" && topo == "myrinet-clos" {
		sat = 0.016
	}
	sets := []Set{{"myrinet", plat}, {"traffic", pattern}}
	if pattern == "hotspot" {
		// The hot node's link saturates at about 0.25 flits per cycle.
		hf := pick(r, 0.05, 0.1)
		sat = min(sat, 0.2/(hf*64+1-hf))
		sets = append(sets, Set{"hotspots", fmt.Sprintf("[%d]", r.IntN(64))}, Set{"hot_fraction", num(hf)})
	}
	rate := between(r, 0.1*sat, 0.6*sat)
	perCycle := 64 * rate / size.mean
	mp := periods(want, perCycle, 1000)
	sets = append(sets, Set{"injection_rate", num(rate)}, Set{"packet_size", size.spec},
		Set{"warmup_periods", "1"}, Set{"measure_periods", num(mp)})
	return Spec{Scenario: topo, Sets: sets, Expect: perCycle * float64(mp*1000)}
}

// cellCycles is an ATM cell's time on a 140 Mb/s link in switch cycles
// (about 52.5: 53 bytes; measured from atm-star's defaults), rounded up so
// that the estimate is low.
const cellCycles = 53

// drawATM: 2 to 8 hosts on the ASX-100, uniform, bit-complement and
// hot-spot traffic (hot spots overload one output: drops, counted), loads
// from 0.1 to 0.95 of the link, output queues of 4 to 256 cells, switch
// latencies of 10 to 150 cycles.
func drawATM(r *rand.Rand, want float64) Spec {
	ports := pick(r, 2, 3, 4, 4, 6, 8)
	pattern := pick(r, "uniform", "uniform", "hotspot", "bitcomp")
	if pattern == "bitcomp" && ports&(ports-1) != 0 {
		pattern = "uniform"
	}
	sets := []Set{{"ports", num(ports)}, {"traffic", pattern}}
	if pattern == "hotspot" {
		sets = append(sets, Set{"hotspots", fmt.Sprintf("[%d]", r.IntN(ports))}, Set{"hot_fraction", num(pick(r, 0.3, 0.6, 1.0))})
	}
	rate := between(r, 0.1, 0.95)
	perCycle := float64(ports) * rate / cellCycles
	mp := periods(want, perCycle, 10000)
	sets = append(sets, Set{"injection_rate", num(rate)}, Set{"queue_depth", num(pick(r, 4, 16, 64, 256))},
		Set{"latency", num(pick(r, 10, 69, 150))}, Set{"warmup_periods", "1"}, Set{"measure_periods", num(mp)})
	return Spec{Scenario: "atm-star", Sets: sets, Expect: perCycle * float64(mp*10000)}
}

// drawMC: 2 to 16 adapters on the hub, pages mapped to everyone or each
// to one receiver, loop-back on or off, 4- to 256-byte writes and mixes,
// hub delays of 0 to 32 cycles, loads up to half the hub bus.
func drawMC(r *rand.Rand, want float64) Spec {
	ports := pick(r, 2, 3, 4, 8, 8, 16)
	mapping := pick(r, "broadcast", "broadcast", "single")
	loop := r.IntN(3) == 0
	pages := pick(r, 1, 4, 16)
	if mapping == "single" && pages < 2 && !loop {
		pages = 4
	}
	// Wire bytes: the data, the 8-byte header and up to 4 bytes of
	// rounding per 32-byte flit on the 4-byte-wide link (mchub.MC1).
	size := pick(r, sizeMix{"4", 4, 16}, sizeMix{"64", 64, 80}, sizeMix{"4:0.5,64:0.5", 34, 48},
		sizeMix{"8:0.3,32:0.3,256:0.4", 114.4, 137.6})
	// Receivers per write (mapped receivers, after the adapters' filters).
	recv := 1.0
	if mapping == "broadcast" {
		recv = float64(ports - 1)
		if loop {
			recv++
		}
	}
	// The hub is one bus as wide as a link (mchub.MC1), carrying every
	// writer's writes once whatever the mapping, each size.wire bytes for
	// size.mean of data: keep it under 0.5 of the bus. (Every output link
	// carries at most the same.)
	top := 0.5 * size.mean / (float64(ports) * size.wire)
	rate := between(r, 0.05*top, top)
	const bytesPerCycle = 4 // mchub.MC1's link
	perCycle := float64(ports) * rate * bytesPerCycle / size.mean * recv
	mp := periods(want, perCycle, 1000)
	sets := []Set{{"ports", num(ports)}, {"mapping", mapping}, {"pages", num(pages)}, {"loopback", num(loop)},
		{"write_size", size.spec}, {"queue_depth", "32"}, {"delay", num(pick(r, 0, 8, 32))},
		{"injection_rate", num(rate)}, {"warmup_periods", "1"}, {"measure_periods", num(mp)}}
	return Spec{Scenario: "mchub-star", Sets: sets, Expect: perCycle * float64(mp*1000)}
}

// drawTelegraphos: 2 to 16 Telegraphos II nodes writing a replicated
// page with no synchronisation, on 1 to 64 hot words, with gaps of 50 to
// 2000 processor cycles, with counter caches of 16 to 64 entries (the
// coherence checker judges every copy).
func drawTelegraphos(r *rand.Rand, want float64) Spec {
	nodes := pick(r, 2, 3, 4, 8, 8, 12, 16)
	// Per write: an update to the owner from every other node, and the
	// owner's reflection to every other node.
	perWrite := float64(nodes-1) * float64(nodes+1) / float64(nodes)
	writes := min(100_000, max(1, int(math.Ceil(want/(perWrite*float64(nodes))))))
	sets := []Set{{"nodes", num(nodes)}, {"words", num(pick(r, 1, 2, 4, 16, 64))}, {"gap", num(pick(r, 50, 200, 600, 2000))},
		{"counter_cache", num(pick(r, 16, 32, 64))}, {"writes", num(writes)}}
	return Spec{Scenario: "telegraphos-coherence", Sets: sets, Expect: perWrite * float64(nodes*writes)}
}

// drawLCI: 2 to 64 nodes of either platform running I-sdma or I-pio,
// payloads up to 0 to 2048 bytes, up to 20% multicasts (fewer on big
// clusters, where one reaches every node) on either tree and up to 20%
// fetch-and-adds.
func drawLCI(r *rand.Rand, want float64) Spec {
	nodes := pick(r, 2, 4, 8, 16, 16, 32, 64)
	mcast := pick(r, 0, 5, 10, 20)
	if nodes >= 32 {
		mcast = min(mcast, 2)
	}
	ops := min(100_000, max(1, int(math.Ceil(want/float64(nodes)))))
	size := pick(r, 0, 16, 64, 512, 2048)
	sets := []Set{{"platform", pick(r, "ppro", "p3")}, {"variant", pick(r, "sdma", "pio")}, {"nodes", num(nodes)},
		{"max_size", num(size)}, {"mcast_pct", num(mcast)}, {"fa_pct", num(pick(r, 0, 5, 10, 20))},
		{"tree", pick(r, "binary", "binomial")}, {"ops", num(ops)}}
	// The cost of an operation grows with its payload (the network and
	// DMA move it flit by flit and beat by beat) and with the members a
	// multicast reaches: about 0.1 ms plus 0.8 µs per byte per packet
	// (measured on a 2-core machine).
	perOp := 1e-4 + 8e-7*float64(size)/2*(1+float64(mcast)/100*float64(nodes-2))
	return Spec{Scenario: "lci-traffic", Sets: sets, Expect: float64(nodes * ops), Cost: perOp * float64(nodes*ops)}
}

// drawRx: 2 to 64 nodes of either platform running I-nirx or I-hrx with a 1, 2
// or 4 KB MTU while every link corrupts and loses packets, each with
// probability 10^-3, 3x10^-3 or 10^-2 per packet per link (issue 17
// section 2); payloads of 0 to 512 bytes, up to 10% multicasts (fewer on
// big clusters) and up to 20% fetch-and-adds; sometimes node 0 a busy
// receiver. Every checker of lci-traffic is on, the retransmitting
// variant's among them (lci.dup, lci.quiescent, lci.crcsum).
func drawRx(r *rand.Rand, want float64) Spec {
	nodes := pick(r, 2, 4, 8, 16, 16, 32, 64)
	mcast := pick(r, 0, 5, 10)
	if nodes >= 32 {
		mcast = min(mcast, 2)
	}
	fa := pick(r, 0, 10, 20)
	// First transmissions per operation: a unicast 1, a fetch-and-add 2
	// (request and reply), a multicast one per tree edge (nodes - 1).
	perOp := float64(100-mcast-fa)/100 + 2*float64(fa)/100 + float64(mcast)/100*float64(nodes-1)
	ops := min(100_000, max(1, int(math.Ceil(want/(perOp*float64(nodes))))))
	size := pick(r, 0, 16, 64, 256, 512)
	p := pick(r, 0.001, 0.003, 0.01)
	sets := []Set{{"platform", pick(r, "ppro", "p3")}, {"variant", pick(r, "nirx", "hrx")}, {"mtu", num(pick(r, 1024, 2048, 4096))},
		{"nodes", num(nodes)}, {"max_size", num(size)}, {"mcast_pct", num(mcast)}, {"fa_pct", num(fa)},
		{"tree", pick(r, "binary", "binomial")}, {"corrupt_prob", num(p)}, {"drop_prob", num(p)}, {"ops", num(ops)}}
	if pick(r, false, false, false, true) {
		sets = append(sets, Set{"hot_pct", "50"}, Set{"hot_pause_us", "100"})
	}
	return Spec{Scenario: "lci-traffic", Sets: sets, Expect: perOp * float64(nodes*ops)}
}

// Lookup is scenario.Catalog's lookup, for callers that hold systems and a
// catalog: it reports a job whose scenario is not in cat.
func Lookup(cat scenario.Catalog, jobs []*Job) error {
	for _, j := range jobs {
		if _, err := cat.Lookup(j.Scenario); err != nil {
			return fmt.Errorf("%s: %w", j.Name(), err)
		}
	}
	return nil
}
