package shrimptb

import (
	"fmt"
	"math/rand/v2"

	"github.com/nisim/nisim/hib/shrimp"
	"github.com/nisim/nisim/host/cpu"
	"github.com/nisim/nisim/host/memsys"
	"github.com/nisim/nisim/host/vmmc"
)

// Traffic is a random VMMC load (issue 14 design section 5): every node's
// process makes Ops operations, each after 0..MaxGap CPU cycles of work,
// to a destination node other than itself drawn at random: with
// probability AUPercent an automatic-update run of 1..MaxRun consecutive
// StoreBytes stores (4 or 8; 0: each run draws one) into the page it
// binds to that destination's buffer, else a deliberate-update send of
// MinDU..MaxDU bytes (word multiples) from its source area to a random
// offset of the destination's DU page, with the notify bit with
// probability NotifyPercent. Combine is the combining mode of every
// binding: CombineOff, CombineOn, or CombineRandom (each binding draws).
// DUAlign (a power of two from 4, 0: 4) aligns the DU sends' source and
// destination offsets and sizes. Senders > 0 splits the nodes: nodes
// 0..Senders-1 send, to nodes Senders..n-1 only, which only receive.
type Traffic struct {
	Ops           int
	AUPercent     int
	StoreBytes    int
	MaxRun        int
	MinDU, MaxDU  int
	NotifyPercent int
	MaxGap        int
	Combine       int
	DUAlign       int
	Senders       int
}

// Combining modes of Traffic.Combine.
const (
	CombineOff = iota
	CombineOn
	CombineRandom
)

// Memory layout of the traffic (assumed: user memory below the kernel's
// proxy pool, vmmc.ProxyPoolFraction; program data never shares a page
// with it). Node d's receive buffer for source s is two pages at
// trafficRecv + 2·s pages: the first is the target of s's AU binding,
// the second of its DU sends. Node s's page bound to destination d is at
// trafficBind + d pages; its DU source area, trafficSrcPages pages of
// random bytes written before the run, at trafficSrc.
const (
	trafficBind     = 8 << 20
	trafficSrc      = 12 << 20
	trafficRecv     = 16 << 20
	trafficSrcPages = 16
)

// maxTrafficDU bounds MaxDU: a DU send stays inside one page (one UDMA
// transfer, SH-P13).
const maxTrafficDU = 4096

// Validate checks the traffic's parameters; an error names the field.
func (t Traffic) Validate() error {
	switch {
	case t.Ops < 0:
		return fmt.Errorf("shrimptb: traffic Ops %d must not be negative", t.Ops)
	case t.AUPercent < 0 || t.AUPercent > 100:
		return fmt.Errorf("shrimptb: traffic AUPercent %d must be in 0..100", t.AUPercent)
	case t.StoreBytes != 0 && t.StoreBytes != 4 && t.StoreBytes != 8:
		return fmt.Errorf("shrimptb: traffic StoreBytes %d must be 4, 8 or 0 (either)", t.StoreBytes)
	case t.MaxRun < 1 || t.MaxRun > 512:
		return fmt.Errorf("shrimptb: traffic MaxRun %d must be in 1..512", t.MaxRun)
	case t.MinDU < 4 || t.MinDU%4 != 0:
		return fmt.Errorf("shrimptb: traffic MinDU %d must be a positive multiple of 4", t.MinDU)
	case t.MaxDU < t.MinDU || t.MaxDU%4 != 0 || t.MaxDU > maxTrafficDU:
		return fmt.Errorf("shrimptb: traffic MaxDU %d must be a multiple of 4 in MinDU %d..%d", t.MaxDU, t.MinDU, maxTrafficDU)
	case t.NotifyPercent < 0 || t.NotifyPercent > 100:
		return fmt.Errorf("shrimptb: traffic NotifyPercent %d must be in 0..100", t.NotifyPercent)
	case t.MaxGap < 0:
		return fmt.Errorf("shrimptb: traffic MaxGap %d must not be negative", t.MaxGap)
	case t.DUAlign != 0 && (t.DUAlign < 4 || t.DUAlign&(t.DUAlign-1) != 0 || t.MinDU%t.DUAlign != 0 || t.MaxDU%t.DUAlign != 0):
		return fmt.Errorf("shrimptb: traffic DUAlign %d must be a power of two from 4 dividing MinDU %d and MaxDU %d", t.DUAlign, t.MinDU, t.MaxDU)
	case t.Senders < 0:
		return fmt.Errorf("shrimptb: traffic Senders %d must not be negative", t.Senders)
	case t.Combine < CombineOff || t.Combine > CombineRandom:
		return fmt.Errorf("shrimptb: traffic Combine %d must be CombineOff, CombineOn or CombineRandom", t.Combine)
	}
	return nil
}

// StartTraffic sets up the VMMC buffers of t (before the simulation
// runs, untimed: exports, imports, bindings) and gives every node's CPU 0
// its program. Each node draws from its own stream of the Env's seed
// (Env.Rand, named after the node), so the load is the same in every run
// with the same seed. Each program ends by waiting for its asynchronous
// sends and a fence. With one node there is nobody to send to: nothing
// is started.
func (c *Cluster) StartTraffic(t Traffic) error {
	if err := t.Validate(); err != nil {
		return err
	}
	nodes := len(c.Nodes)
	if nodes < 2 {
		return nil
	}
	if t.Senders >= nodes {
		return fmt.Errorf("shrimptb: traffic Senders %d must leave a receiver among the %d nodes", t.Senders, nodes)
	}
	page := uint64(c.Config.NI.PageBytes)
	procs := make([]*vmmc.Process, nodes)
	for i, n := range c.Nodes {
		procs[i] = n.Kernel.NewProcess(fmt.Sprintf("N%d.traffic", i))
		procs[i].OnNotify(func(p *cpu.Proc, _ shrimp.Notification) {})
	}
	// Exports: every node a two-page buffer per source.
	bufs := make([][]vmmc.Buffer, nodes)
	for d := range nodes {
		bufs[d] = make([]vmmc.Buffer, nodes)
		for s := range nodes {
			if s == d {
				continue
			}
			b, err := procs[d].Export(nil, trafficRecv+uint64(2*s)*page, int(2*page), t.NotifyPercent > 0)
			if err != nil {
				return fmt.Errorf("shrimptb: traffic: node %d: %w", d, err)
			}
			bufs[d][s] = b
		}
	}
	for s, n := range c.Nodes {
		rng := c.Env.Rand(fmt.Sprintf("N%d.traffic", s))
		pr := procs[s]
		proxies := make([]*vmmc.Proxy, nodes)
		for d := range nodes {
			if d == s {
				continue
			}
			px, err := pr.Import(nil, bufs[d][s])
			if err != nil {
				return fmt.Errorf("shrimptb: traffic: node %d: %w", s, err)
			}
			combine := t.Combine == CombineOn || t.Combine == CombineRandom && rng.IntN(2) == 0
			if err := pr.Bind(nil, trafficBind+uint64(d)*page, px, 0, int(page), combine, int(page)); err != nil {
				return fmt.Errorf("shrimptb: traffic: node %d: %w", s, err)
			}
			proxies[d] = px
		}
		// The DU source area: random bytes, in memory before the run and
		// never written during it (an asynchronous send may still be
		// reading it), write-through so no cache ever holds it dirty.
		src := make([]byte, trafficSrcPages*page)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		if err := n.Memory().Storage().Write(trafficSrc, src); err != nil {
			return fmt.Errorf("shrimptb: traffic: node %d: %w", s, err)
		}
		if err := n.Mem.SetPolicy(trafficSrc, uint64(len(src)), memsys.WriteThrough); err != nil {
			return fmt.Errorf("shrimptb: traffic: node %d: %w", s, err)
		}
		if t.Senders > 0 && s >= t.Senders {
			continue
		}
		n.CPUs[0].Run(cpu.Go(c.trafficProgram(t, s, rng, pr, proxies)))
	}
	return nil
}

// trafficProgram is node s's program of t's operations.
func (c *Cluster) trafficProgram(t Traffic, s int, rng *rand.Rand, pr *vmmc.Process, proxies []*vmmc.Proxy) func(p *cpu.Proc) {
	nodes := len(c.Nodes)
	page := c.Config.NI.PageBytes
	return func(p *cpu.Proc) {
		for range t.Ops {
			if t.MaxGap > 0 {
				if g := rng.IntN(t.MaxGap + 1); g > 0 {
					p.Compute(g)
				}
			}
			var d int
			if t.Senders > 0 {
				d = t.Senders + rng.IntN(nodes-t.Senders)
			} else if d = rng.IntN(nodes - 1); d >= s {
				d++
			}
			if rng.IntN(100) < t.AUPercent {
				size := t.StoreBytes
				if size == 0 {
					size = 4 << rng.IntN(2)
				}
				run := 1 + rng.IntN(t.MaxRun)
				run = min(run, page/size)
				off := size * rng.IntN(page/size-run+1)
				base := uint64(trafficBind + d*page + off)
				for k := range run {
					v := make([]byte, size)
					for i := range v {
						v[i] = byte(rng.Uint32())
					}
					p.As("au").Store(base+uint64(k*size), v)
				}
				continue
			}
			al := max(t.DUAlign, 4)
			size := t.MinDU + al*rng.IntN((t.MaxDU-t.MinDU)/al+1)
			srcOff := al * rng.IntN((page-size)/al+1)
			src := uint64(trafficSrc + rng.IntN(trafficSrcPages)*page + srcOff)
			dstOff := uint64(page + al*rng.IntN((page-size)/al+1))
			notify := rng.IntN(100) < t.NotifyPercent
			if err := pr.Send(p, src, proxies[d], dstOff, size, notify); err != nil {
				c.Env.Report(p.Now(), fmt.Sprintf("N%d.traffic", s), RuleOnce, "send of %d bytes to node %d: %v", size, d, err)
				return
			}
		}
		pr.Wait(p)
		p.Fence()
	}
}
