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
		Entry("a firmware machine under its NI", "n0.ni.fw.lci.tx.state"),
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
		Entry("firmware beside its NI", "n0.fw.tx.state", "fw must sit directly under its ni"),
		Entry("firmware at the top", "fw.tx.state", "fw must sit directly under its ni"),
		Entry("an empty name", "", "empty signal name"),
	)
})
