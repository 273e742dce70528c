package star_test

import (
	"errors"
	"fmt"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/switch/star"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// center is a star's middle reduced to what star.Build needs: it records
// its attachments and pops what arrives on each input.
type center struct {
	*vtest.Agent
	ports   int
	refuse  int // port whose Attach fails (-1: none)
	in, out []*link.Dir
	got     []string
}

func newCenter(e *env.Env, clk clock.Clock, ports int) *center {
	c := &center{ports: ports, refuse: -1}
	c.Agent = vtest.NewAgent(e, "Net.Center", clk, func(now clock.Time, cy clock.Cycle) bool {
		for p, d := range c.in {
			if f, ok := d.Rx(0).Pop(now); ok {
				c.got = append(c.got, fmt.Sprintf("port %d: packet %d at %d", p, f.Packet(), cy))
			}
		}
		return false
	})
	return c
}

func (c *center) Ports() int { return c.ports }

func (c *center) Attach(p int, in, out *link.Dir) error {
	if p == c.refuse {
		return errors.New("port refused")
	}
	c.in, c.out = append(c.in, in), append(c.out, out)
	in.Connect(nil, c)
	out.Connect(c, nil)
	return nil
}

var _ = Describe("Star", func() {
	clk := clock.MHz(100)
	lc := func() link.Config {
		c := link.DefaultCredit(clk)
		c.BytesPerCycle, c.DelayCycles = 4, 2
		return c
	}

	It("makes a link per port, attaches side B to the center and connects each endpoint to side A", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		c := newCenter(e, clk, 3)
		st, err := star.Build(e, c, lc(), "Net")
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Links).To(HaveLen(3))
		Expect(st.Ports).To(HaveLen(3))
		for i, l := range st.Links {
			Expect(l.Name()).To(Equal(fmt.Sprintf("Net.Link%d", i)))
			Expect(c.in[i]).To(BeIdenticalTo(l.From(link.A)))
			Expect(c.out[i]).To(BeIdenticalTo(l.From(link.B)))
			Expect(st.Ports[i].Send).To(BeIdenticalTo(l.From(link.A)))
			Expect(st.Ports[i].Recv).To(BeIdenticalTo(l.From(link.B)))
		}
		// Endpoint 2 sends one 4-byte flit at cycle 0: one serialisation
		// cycle (4 bytes at 4 per cycle) and a 2-cycle wire put it in the
		// center's input buffer from cycle 0+1+2 = 3, and the arrival
		// wakes the center (the receiver Attach named), which pops it then.
		sent := false
		ep := vtest.NewAgent(e, "Net.Host2", clk, func(now clock.Time, _ clock.Cycle) bool {
			p := st.Ports[2]
			if !sent && p.Send.CanSend(now, 0) {
				p.Send.Send(now, &link.Flit{Head: true, Tail: true, Size: 4, Data: []byte{1, 2, 3, 4}, Info: &link.PacketInfo{ID: 7}})
				sent = true
			}
			return !sent
		})
		st.Ports[2].Connect(ep)
		ep.Start()
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(c.got).To(Equal([]string{"port 2: packet 7 at 3"}))
	})

	It("refuses a missing env or center and passes on a link's or the center's error", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clk})
		c := newCenter(e, clk, 2)
		_, err := star.Build(nil, c, lc(), "Net")
		Expect(err).To(MatchError("Net: star: no env"))
		_, err = star.Build(e, nil, lc(), "Net")
		Expect(err).To(MatchError("Net: star: no center"))
		bad := lc()
		bad.BytesPerCycle = 0
		_, err = star.Build(e, c, bad, "Net")
		Expect(err).To(MatchError(ContainSubstring("Net.Link0")))
		Expect(err).To(MatchError(ContainSubstring("bytes per cycle")))
		c.refuse = 1
		_, err = star.Build(e, c, lc(), "Net2")
		Expect(err).To(MatchError("Net2: star: port 1: port refused"))
	})
})
