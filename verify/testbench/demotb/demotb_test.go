package demotb_test

import (
	"bytes"

	"github.com/nisim/nisim/rtl/bus"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/link"
	"github.com/nisim/nisim/verify/testbench/demotb"
	"github.com/nisim/nisim/verify/trace"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// config is the demo scenario's defaults (verify/scenario/demo's Params
// give the sources): a 200 MHz host with 236 ns memory on 32-bit 33 MHz
// PCI, a 33 MHz NI, a 160 MHz byte-wide credit link, 256 bytes by PIO and
// 2048 by DMA.
func config() demotb.Config {
	pci, err := bus.Preset("pci32")
	Expect(err).NotTo(HaveOccurred())
	return demotb.Config{
		Host: demotb.HostConfig{Clock: clock.MHz(200), IssueCycles: 4, WriteBuffer: 4,
			MemClock: clock.MHz(66), MemLatency: 236 * clock.Nanosecond, MemBytesPerCycle: 8},
		Bus: pci,
		NI: demotb.NIConfig{Clock: clock.MHz(33), SramLatency: 1, SramBytesPerCycle: 4,
			DMASetup: 4, DMABurst: 256, DMABuffer: 512, DMAQueue: 4, FifoDepth: 64, FifoWidth: 8},
		Link: demotb.LinkConfig{Clock: clock.MHz(160), BytesPerCycle: 1, DelayCycles: 16,
			BufferFlits: 8, CreditDelay: 16, FlitBytes: 32, PacketBytes: 512},
		Workload: demotb.Workload{PIOBytes: 256, StoreBytes: 4, DMABytes: 2048},
	}
}

var _ = Describe("the demo system", func() {
	It("moves the PIO and DMA data into the remote memory, in packets of 512 bytes", func() {
		rec := trace.NewRecorder()
		e := env.New(env.Options{Seed: 1, Trace: rec})
		s, res, err := demotb.Run(e, config())
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Stopped).To(BeFalse())
		got, err := s.Remote.Storage().Bytes(0, 256+2048)
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Equal(got, append(append([]byte(nil), s.PIOData...), s.DMAData...))).To(BeTrue())
		Expect(s.Readback).To(Equal(s.PIOData[:4]))
		t := s.Times
		Expect(t.DMASubmitted && t.SendSubmitted && t.RecvAccepted).To(BeTrue())
		Expect(t.FirstStore).To(BeNumerically("<", t.PIODone))
		Expect(t.PIODone).To(BeNumerically("<=", t.LoadStart))
		Expect(t.Doorbell).To(BeNumerically(">", t.LoadDone))
		Expect(t.RecvDone).To(BeNumerically(">", t.DMADone))
		// 256 + 2048 = 2304 bytes: 4 packets of 512 and one of 256.
		sent, recv, dropped := s.Packets.Counts()
		Expect([]int{sent, recv, dropped}).To(Equal([]int{5, 5, 0}))
		Expect(s.Link.From(link.A).Stats().CRCErrors).To(BeZero())
		// The posted 4-byte stores cross PCI (30 ns cycles) 4 cycles
		// apart: address, medium-DEVSEL decode, data, idle (arbitration
		// hidden); the first one's address phase is at cycle 4 = 120 ns.
		var stores []clock.Time
		for _, r := range rec.Records() {
			if r.Kind == "bus.pio.write" && r.Path == "Host.Bus" {
				if m, _ := r.Get("target"); m == "Sram" {
					stores = append(stores, r.Time)
				}
			}
		}
		Expect(stores).To(HaveLen(64))
		Expect(stores[0]).To(Equal(120 * clock.Nanosecond))
		for i := 1; i < len(stores); i++ {
			Expect(stores[i]-stores[i-1]).To(Equal(120*clock.Nanosecond), "store %d", i)
		}
	})

	DescribeTable("refuses a workload the address map or the bus cannot take, naming the field",
		func(change func(*demotb.Config), msg string) {
			c := config()
			change(&c)
			_, err := demotb.Build(env.New(env.Options{}), c)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("a store of 3 bytes", func(c *demotb.Config) { c.Workload.StoreBytes = 3 }, "Workload.StoreBytes = 3"),
		Entry("a store wider than the bus", func(c *demotb.Config) { c.Workload.StoreBytes = 8 }, "Workload.StoreBytes = 8: wider than the 4-byte bus"),
		Entry("PIO not a multiple of the store", func(c *demotb.Config) { c.Workload.PIOBytes = 6 }, "Workload.PIOBytes = 6"),
		Entry("no DMA", func(c *demotb.Config) { c.Workload.DMABytes = 0 }, "Workload.DMABytes = 0"),
		Entry("more than the SRAM region", func(c *demotb.Config) { c.Workload.DMABytes = demotb.SRAMRegion }, "exceed the 524288 bytes"),
		Entry("a packet smaller than a flit", func(c *demotb.Config) { c.Link.PacketBytes = 16 }, "Link.PacketBytes = 16"),
		Entry("a block's own parameter", func(c *demotb.Config) { c.NI.FifoDepth = 0 }, "depth"),
		// Issue 12: 10^12 FIFO entries of 8 bytes in two FIFOs:
		// 2 x (32 + 8) = 80 B each, 2^30 / 80 = 13421772.
		Entry("a FIFO deeper than the memory budget", func(c *demotb.Config) { c.NI.FifoDepth = 1_000_000_000_000 },
			"demotb: NI.FifoDepth = 1000000000000: above the limit 13421772 (80 B per entry x 13421772 = 1 GiB, the memory budget)"),
		// 2 x (64 + 32) = 192 B a flit, 2^30 / 192 = 5592405.
		Entry("a link buffer beyond it", func(c *demotb.Config) { c.Link.BufferFlits = 1_000_000_000 }, "Link.BufferFlits = 1000000000: above the limit 5592405"),
		Entry("a DMA queue beyond it", func(c *demotb.Config) { c.NI.DMAQueue = 1_000_000_000 }, "NI.DMAQueue = 1000000000: above the limit"),
		Entry("a write buffer beyond it", func(c *demotb.Config) { c.Host.WriteBuffer = 1_000_000_000 }, "Host.WriteBuffer = 1000000000: above the limit"),
	)
})
