package noc

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
)

// The network scenarios' waveform views (issue 12 section 5). A 64-node
// network dumps 2,000 to 15,000 signals that all look alike, so by default
// a VCD holds one corner of it: the first router or switch with its
// terminal and the neighbouring router; the save file opens on that
// corner's traffic. Spans are a few dozen packets at the default load,
// read off the full dumps: a mesh router moves a flit a nanosecond, a
// Myrinet host link a packet every few microseconds, an ATM host a cell
// every 3 us, the Memory Channel hub a write every few hundred ns.
const (
	wormholeSpan = 1 * clock.Microsecond
	myrinetSpan  = 20 * clock.Microsecond
	atmSpan      = 100 * clock.Microsecond
	mcSpan       = 20 * clock.Microsecond
)

// waveView is the view of the wormhole and Myrinet networks, by topology.
func waveView(sp scenario.Params) scenario.WaveView {
	switch p := sp.(*Params); p.Topology {
	case "mesh", "graph":
		// The link from router 0 to router 1: the mesh's first x link,
		// the graph's link 0-1 (testdata/example.graph).
		net, link := p.Topology+".", "link_x0"
		if p.Topology == "graph" {
			link = "link0_1"
		}
		return scenario.WaveView{
			Select: []string{net + "router0", net + "router1", net + "link_t0", net + "link_t1", net + link},
			Groups: []waves.ViewGroup{
				scenario.KeyGroup("router 0", net+"router0.flits_out", net+"router0.active_vcs"),
				scenario.KeyGroup("terminal 0 link", net+"link_t0.ab.busy", net+"link_t0.ab.credits0", net+"link_t0.ba.busy"),
				scenario.KeyGroup("link 0-1", net+link+".ab.busy", net+link+".ab.credits0", net+link+".ba.busy"),
				scenario.KeyGroup("router 1", net+"router1.flits_out", net+"link_t1.ab.busy", net+"link_t1.ba.busy"),
			},
			Span: wormholeSpan,
		}
	}
	return scenario.WaveView{
		Select: []string{"myri.link_h0", "myri.link_h1", "myri.switch0"},
		Groups: []waves.ViewGroup{
			scenario.KeyGroup("host 0 link", "myri.link_h0.ab.busy", "myri.link_h0.ab.stop", "myri.link_h0.ba.busy", "myri.link_h0.ba.stop"),
			scenario.KeyGroup("switch 0 outputs", "myri.switch0.out*_owner"),
			scenario.KeyGroup("host 1 link", "myri.link_h1.ab.busy", "myri.link_h1.ba.busy"),
		},
		Span: myrinetSpan,
	}
}

// atmView is atm-star's: four hosts on one switch, all dumped; the save
// file opens on host 0's cells, the switch and its output queues.
func atmView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{
		Groups: []waves.ViewGroup{
			scenario.KeyGroup("host 0", "atm.host0.queued", "atm.host0.cells_sent", "atm.link0.ab.busy"),
			scenario.KeyGroup("switch", "atm.switch.in_flight", "atm.switch.out*.occupancy", "atm.switch.out*.drops"),
		},
		Span: atmSpan,
	}
}

// mcView is mchub-star's: eight adapters on one hub, all dumped; the save
// file opens on the hub's write order and adapter 0's writes.
func mcView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{
		Groups: []waves.ViewGroup{
			scenario.KeyGroup("hub", "mc.hub.state", "mc.hub.serving", "mc.hub.order"),
			scenario.KeyGroup("adapter 0", "mc.adapter0.queued", "mc.adapter0.writes_sent", "mc.adapter0.writes_received",
				"mc.link0.ab.busy", "mc.link0.ba.busy"),
		},
		Span: mcSpan,
	}
}

// withWaves sets each scenario's waveform view.
func withWaves(list []*scenario.Scenario) []*scenario.Scenario {
	for _, s := range list {
		switch s.Name {
		case "atm-star":
			s.Waves = atmView
		case "mchub-star":
			s.Waves = mcView
		default:
			s.Waves = waveView
		}
	}
	return list
}
