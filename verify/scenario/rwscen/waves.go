package rwscen

import (
	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/waves"
)

// waveView is remotewrite's waveform view: the two nodes of the write and
// their host links (the other 62 hosts and the switches of the Myrinet
// grid are idle and left out unless --select widens the dump); the save
// file opens on the write's path: node 0's CPU and PCI bus, its LANai
// processor, remote_write send machine and DMA engines, the host links,
// node 1's receive machine, DMA engines and CPU.
func waveView(scenario.Params) scenario.WaveView {
	return scenario.WaveView{
		Select: []string{"n0", "n1", "net.link_h0", "net.link_h1"},
		Groups: []waves.ViewGroup{
			scenario.KeyGroup("n0 host", "n0.cpu.state", "n0.pci.phase", "n0.pci.master", "n0.pci.target", "n0.pci.addr"),
			scenario.KeyGroup("n0 NI", "n0.ni.cpu.state", "n0.ni.fw.send.state", "n0.ni.fw.dma.state",
				"n0.ni.hdma.state", "n0.ni.sdma.state"),
			scenario.KeyGroup("host links", "net.link_h0.ab.busy", "net.link_h0.ba.busy", "net.link_h1.ab.busy", "net.link_h1.ba.busy"),
			scenario.KeyGroup("n1 NI", "n1.ni.rdma.state", "n1.ni.cpu.state", "n1.ni.fw.recv.state",
				"n1.ni.fw.dma.state", "n1.ni.hdma.state"),
			scenario.KeyGroup("n1 host", "n1.cpu.state", "n1.pci.phase"),
		},
	}
}
