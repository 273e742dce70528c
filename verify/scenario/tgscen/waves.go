package tgscen

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
)

// tgSpan is how much a Telegraphos save file shows from the first change:
// fifteen of telegraphos-calibration's back-to-back remote writes (one
// every 0.4 us from node 0) and the first three that node 1 services (from
// 3.7 us on, one every 0.7 us); 10 us made the bus phases unreadable.
const tgSpan = 6 * clock.Microsecond

// waveView is every Telegraphos scenario's waveform view: the systems are
// small (a few workstations on one switch), so everything is dumped; the
// save file opens on a remote access from node 0 to node 1: node 0's CPU,
// TURBOchannel and HIB, the links through the switch, and node 1's HIB
// server and shared memory (section 2.1's data path).
func waveView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{
		Groups: []waves.ViewGroup{
			scenario.KeyGroup("n0 requester", "n0.cpu.state", "n0.tc.phase", "n0.tc.master", "n0.tc.target",
				"n0.tc.addr", "n0.hib.ctl.state", "n0.hib.outstanding"),
			scenario.KeyGroup("links and switch", "n0.link.ab.busy", "n0.link.ba.busy", "switch.flits_out",
				"n1.link.ab.busy", "n1.link.ba.busy"),
			scenario.KeyGroup("n1 target", "n1.hib.srv.state", "n1.hib.sink.state", "n1.shared.state"),
		},
		Span: tgSpan,
	}
}

// withWaves sets each scenario's waveform view.
func withWaves(list []*scenario.Scenario) []*scenario.Scenario {
	for _, s := range list {
		s.Waves = waveView
	}
	return list
}
