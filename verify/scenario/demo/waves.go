package demo

import (
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
)

// waveView is the demo's waveform view: every signal is dumped (the system
// is small), and the save file opens on the path of a transfer, host to
// remote memory: the CPU and the PCI bus, the NI's DMA engines, the
// transmit FIFO and the link, the remote side.
func waveView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{Groups: []waves.ViewGroup{
		scenario.KeyGroup("host and PCI", "host.cpu.state", "host.bus.phase", "host.bus.master",
			"host.bus.target", "host.bus.addr"),
		scenario.KeyGroup("NI", "ni.sram.state", "ni.hdma.state", "ni.hdma.queue.occupancy",
			"ni.sdma.state", "ni.tx_fifo.occupancy", "ni.link_out.state"),
		scenario.KeyGroup("link", "link.ab.busy", "link.ab.credits0", "link.ba.busy"),
		scenario.KeyGroup("remote", "remote.rx_fifo.occupancy", "remote.rdma.state", "remote.sram.state"),
	}}
}
