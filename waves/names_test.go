package waves_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/waves"
)

var _ = Describe("Signal names", func() {
	DescribeTable("accepts names that follow the convention",
		func(name string) { Expect(waves.CheckName(name)).To(Succeed()) },
		Entry("a NI block's address", "n0.ni.sram.addr"),
		Entry("snake_case and an index", "n12.ni.hdma.reads_out"),
		Entry("a firmware machine under its NI", "n0.ni.fw.tx.state"),
		Entry("a link between two nodes", "graph.link3_4.ab.tx0.occupancy"),
		Entry("a per-VC credit count", "mesh.link_x5.ba.credits1"),
		Entry("a single-host system", "host.pci.master"),
	)
	DescribeTable("refuses names that break it, naming the part and the rule",
		func(name, msg string) {
			err := waves.CheckName(name)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(ContainSubstring(msg))
		},
		Entry("upper case", "N0.NI.SRAM.addr", `part "N0" must start with a lower-case letter`),
		Entry("camel case", "host.cpu.readsOut", `part "readsOut" has "O"`),
		Entry("brackets", "host.bus.Master[0].full", `part "Master[0]"`),
		Entry("brackets after a lower-case word", "host.bus.master[0].full", `has "["`),
		Entry("a leading digit", "mesh.0r.flits", `part "0r" must start with a lower-case letter`),
		Entry("a trailing underscore", "n0.ni.tx_", `empty snake_case word`),
		Entry("a double underscore", "n0.ni.tx__fifo", `empty snake_case word`),
		Entry("an empty part", "n0..ni", `part "" is empty`),
		Entry("a long form of an abbreviation", "n0.ni.memory.state", `spells "memory": use mem`),
		Entry("a long form inside snake_case", "n0.ni.host_memory", `spells "memory": use mem`),
		Entry("a long form with an index", "node3.cpu.state", `spells "node": use n`),
		Entry("the demo's old DMA name", "ni.hostdma.state", `spells "hostdma": use hdma`),
		Entry("the demo's old DMA name converted", "ni.host_dma.state", `spells "host_dma": use hdma`),
		Entry("a multiword long form inside a longer part", "remote.recv_dma_queue", `spells "recv_dma": use rdma`),
		Entry("firmware beside its NI", "n0.fw.tx.state", "fw must sit directly under its ni"),
		Entry("firmware at the top", "fw.tx.state", "fw must sit directly under its ni"),
		Entry("an empty name", "", "empty signal name"),
	)
})

var _ = Describe("Names in the registry", func() {
	DescribeTable("ScopeName turns Akita's CamelCase component names into the convention",
		func(in, want string) {
			Expect(waves.ScopeName(in)).To(Equal(want))
			Expect(waves.ScopeName(want)).To(Equal(want), "idempotent")
		},
		Entry("acronyms are one word", "N0.NI.SRAM", "n0.ni.sram"),
		Entry("an index in brackets", "Host.Bus.Master[0].Down", "host.bus.master0.down"),
		Entry("CamelCase words", "NI.TxFifo", "ni.tx_fifo"),
		Entry("an acronym before a word", "N0.PCIBridge", "n0.pci_bridge"),
		Entry("a letter before a word", "Mesh.LinkX[3]", "mesh.link_x3"),
		Entry("two indices", "Graph.Link[3][4]", "graph.link3_4"),
		Entry("a firmware machine", "N1.NI.FW.tx", "n1.ni.fw.tx"),
		Entry("a name already in the convention", "n0.ni.fw.fc.credits_3", "n0.ni.fw.fc.credits_3"),
	)

	It("converts a declared scope, so Lookup and Select use the converted name", func() {
		r := waves.NewRegistry(waves.Options{Select: []string{"n0.ni"}})
		s := r.Wire("N0.NI.SRAM", "addr", 32)
		Expect(s).NotTo(BeNil())
		Expect(s.Name()).To(Equal("n0.ni.sram.addr"))
		Expect(r.Lookup("n0.ni.sram.addr")).To(BeIdenticalTo(s))
		Expect(r.Wire("N0.CPU", "irq", 1)).To(BeNil(), "not selected")
		Expect(r.Err()).NotTo(HaveOccurred())
	})

	It("refuses a name that breaks the convention, even when it is not selected", func() {
		r := waves.NewRegistry(waves.Options{Select: []string{"other"}})
		Expect(r.String("Node3.FW.tx", "state")).To(BeNil())
		Expect(r.Err()).To(MatchError(`waves: name node3.fw.tx.state: part "node3" spells "node": use n`))
	})

	It("refuses a firmware scope beside its NI", func() {
		r := waves.NewRegistry(waves.Options{})
		Expect(r.String("N0.FW.tx", "state")).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: name n0.fw.tx.state: firmware scope fw must sit directly under its ni"))
	})

	It("refuses a name that is both a scope and a signal, in either order", func() {
		r := waves.NewRegistry(waves.Options{})
		Expect(r.Integer("N0.Bridge.Down", "credits", 8)).NotTo(BeNil())
		Expect(r.Integer("N0.Bridge.Down.Credits", "occupancy", 2)).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: name n0.bridge.down.credits is both a scope and a signal"))

		r = waves.NewRegistry(waves.Options{})
		Expect(r.Integer("N0.Bridge.Down.Credits", "occupancy", 2)).NotTo(BeNil())
		Expect(r.Integer("N0.Bridge.Down", "credits", 8)).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: name n0.bridge.down.credits is both a scope and a signal"))
	})

	It("refuses a name declared twice after conversion, selected or not", func() {
		r := waves.NewRegistry(waves.Options{Select: []string{"nothing"}})
		Expect(r.Wire("NI.TxFifo", "full", 1)).To(BeNil())
		Expect(r.Wire("ni.tx_fifo", "full", 1)).To(BeNil())
		Expect(r.Err()).To(MatchError("waves: signal ni.tx_fifo.full declared twice"))
	})
})

var _ = Describe("Select patterns", func() {
	It("go through ScopeName, so a component's Akita name selects its signals", func() {
		r := waves.NewRegistry(waves.Options{Select: []string{"N0.NI.SDMA", "Host.Bus[0]", "Nope"},
			Exclude: []string{"*.Queue"}})
		Expect(r.String("N0.NI.SDMA", "state")).NotTo(BeNil())
		Expect(r.Integer("N0.NI.SDMA.Queue", "occupancy", 4)).To(BeNil(), "excluded")
		Expect(r.Wire("Host.Bus[0]", "addr", 32)).NotTo(BeNil())
		Expect(r.String("N0.NI.RDMA", "state")).To(BeNil())
		Expect(r.UnusedSelects()).To(Equal([]string{"Nope"}), "reported as given")
		Expect(r.Err()).NotTo(HaveOccurred())
	})
})
