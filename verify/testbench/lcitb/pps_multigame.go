package lcitb

import (
	"fmt"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/host/multigame"
	"github.com/nisim/nisim/host/panda"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
)

// MultigameResult is what RunMultigame saw.
type MultigameResult struct {
	// Sent and Received are job descriptors, Messages the Panda messages
	// that carried them, Bad the descriptors that arrived damaged.
	Sent, Received, Messages, Bad uint64
	// PerNodeRate is the descriptors a node sent per second of the run.
	PerNodeRate float64
	Run         env.Result
}

// RunMultigame runs Multigame's traffic on c.Nodes nodes: each works
// through jobs jobs (multigame.Node.Run, its random destinations from e's
// seed), then polls until every descriptor of every node has arrived.
func RunMultigame(e *env.Env, c Config, mc multigame.Config, jobs int) (r MultigameResult, err error) {
	defer named(&err, "multigame")
	if jobs < 1 {
		return r, fmt.Errorf("%d jobs: at least one", jobs)
	}
	if e == nil {
		e = env.New(env.Options{})
	}
	var mg []*multigame.Node
	finished := 0
	var serr error
	_, res, err := runIn(e, c, func(cl *Cluster) {
		pn, err := PandaNodes(cl, panda.Config{Costs: panda.DefaultCosts()})
		if err != nil {
			serr = err
			return
		}
		for _, p := range pn {
			g, err := multigame.New(p, len(cl.Nodes), mc)
			if err != nil {
				serr = err
				return
			}
			mg = append(mg, g)
		}
		total := func() (sent, recv uint64) {
			for _, g := range mg {
				sent += g.Sent
				recv += g.Received
			}
			return
		}
		for k, n := range cl.Nodes {
			rng := e.Rand(fmt.Sprintf("multigame.N%d", k))
			n.Host.Run(func(s *lcilib.Seq) {
				mg[k].Run(s, jobs, rng)
				finished++
				for _, o := range cl.Nodes {
					o.CPU.Wake(s.Now())
				}
				mg[k].Drain(s, func() bool {
					sent, recv := total()
					return finished == len(cl.Nodes) && sent == recv
				})
				for _, o := range cl.Nodes {
					o.CPU.Wake(s.Now())
				}
			})
		}
	})
	if serr != nil {
		return r, serr
	}
	for _, g := range mg {
		r.Sent += g.Sent
		r.Received += g.Received
		r.Messages += g.Messages
		r.Bad += g.Bad
	}
	r.Run = res
	if res.End > 0 {
		r.PerNodeRate = float64(r.Sent) / float64(c.Nodes) / (float64(res.End) / float64(clock.Second))
	}
	return r, err
}
