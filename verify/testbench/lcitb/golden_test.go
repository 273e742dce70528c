package lcitb_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/nisim/nisim/host/lcilib"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/lcitb"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"
	"github.com/nisim/nisim/waves/vcd"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// golden keeps the records a reviewer reads: the host's library calls, the
// firmware's transitions, the NI's events, packets and DMAs, and the bus
// transactions.
func golden(recs []trace.Record) []trace.Record {
	var out []trace.Record
	for _, r := range recs {
		switch {
		case r.Kind == "fw.state", strings.HasPrefix(r.Kind, "ni."), strings.HasPrefix(r.Kind, "bus."),
			r.Kind == "cpu.retire", r.Kind == "dma.done":
			out = append(out, r)
		}
	}
	return out
}

func build(e *env.Env, mod func(c *lcitb.Config)) *lcitb.Cluster {
	c := lcitb.DefaultConfig()
	if mod != nil {
		mod(&c)
	}
	cl, err := lcitb.Build(e, c)
	Expect(err).NotTo(HaveOccurred())
	return cl
}

func runAll(e *env.Env) {
	_, err := e.Run()
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("LCI goldens", Label("golden"), func() {
	// oneMessage runs node 0 sending 16 bytes to node 1 and returns the
	// golden's records.
	oneMessage := func() []trace.Record {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Trace: true, Seed: 1})
		cl := build(e, nil)
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		// Node 0 waits for the NIs to boot, then sends; node 1 polls.
		h0.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			s.Send(1, []byte("0123456789abcdef"), 42)
		})
		var got *lcilib.Msg
		h1.Run(func(s *lcilib.Seq) { s.Recv(func(_ *lcilib.Seq, m *lcilib.Msg) { got = m }) })
		runAll(e)
		Expect(string(got.Data)).To(Equal("0123456789abcdef"))
		return golden(e.Trace.Records())
	}

	It("fails when the golden is wrong", func() {
		data, err := os.ReadFile("testdata/one_message.trace")
		Expect(err).NotTo(HaveOccurred())
		// One cycle later for the send engine's last byte.
		bad := strings.Replace(string(data), "18456250 2953 N0.NI.SDMA", "18462500 2954 N0.NI.SDMA", 1)
		Expect(bad).NotTo(Equal(string(data)))
		path := GinkgoT().TempDir() + "/one_message.trace"
		Expect(os.WriteFile(path, []byte(bad), 0o644)).To(Succeed())
		if os.Getenv(trace.UpdateEnv) != "" {
			Skip("regenerating goldens")
		}
		Expect(vtest.Golden(path, oneMessage())).To(MatchError(ContainSubstring("N0.NI.SDMA")))
	})

	It("times one 16-byte I-sdma message from host to host", func() {
		Expect(vtest.Golden("testdata/one_message.trace", oneMessage(),
			"LCI I-sdma on the PPro platform, nodes 0 and 1 (two grid switches apart): node 0's process",
			"sends 16 bytes with tag 42 to node 1, whose process is polling. Times in ps; cycles of the",
			"recording component (CPU 200 MHz = 5 ns, memory bus 66.7 MHz = 15 ns, PCI 33.3 MHz = 30 ns,",
			"LANai 33 MHz = 30.303 ns, link 160 MHz = 6.25 ns). Firmware costs are cycles at CPI 1.25",
			"(firmware/lci/config.go): Dispatch 10, HostSend 25, DMAStart 15, DMADone 13, Transmit 25,",
			"SendDone 50, Receive 25, Deliver 25, Release 50, Replenish 20.",
			"Sender: the send call (337 cycles) copies the 16 bytes into the host send buffer (one store",
			"through the cache; the line is not present, so the cache reads it for ownership: rfo.read,",
			"8 memory wait states), writes the send buffer's 8-byte address and size field (section 4.1,",
			"«it writes an address and size field»: 0x1640, the header space of send buffer 0) and ends",
			"with the 32-byte descriptor: two write-combined bursts that wait for the copy's store",
			"(program order): uncached through the cache onto the memory bus (posted into the bridge,",
			"N0.MemBus records) and from the bridge onto PCI into SRAM (N0.PCI records); only the send",
			"queue is watched, so the descriptor's write raises HostWrite. The NI's main loop finds it;",
			"hsq reads the field and fetches the data by host DMA:",
			"the bridge retries the PCI read as a delayed read (CrossCycles 2 + DelayedReadCycles 52,",
			"calibrated to g), reads the line and its read-ahead on the memory bus (bus.hostdma.read at",
			"N0.MemBus, waits = the DRAM's cycles), and the retried PCI read is then served from the",
			"bridge buffer (waits=2: ReadHitCycles); hsq spins on it, then tx writes the header and the",
			"send engine puts 32 bytes on the link; SendDone posts the send completion into node 0's own",
			"receive queue (a 16-byte slot header). Receiver: RecvDone re-arms the engine, hrq takes a",
			"host buffer from the Recv Completions queue and one DMA writes the data and the slot header",
			"behind it (the full flag last): slot 0's header is at 0x100000 + 2064 = 0x100810, 16 bytes",
			"into the 32-byte line 0x100800 whose first 16 bytes take the data (lci.SlotHeaderAt), so the",
			"DMA is one 32-byte burst on PCI and one line write on the memory bus; its completion",
			"releases the NI buffer and counts one credit owed to node 0 (no ack yet: W/2 = 2). Node 1's",
			"process wakes on the flag and loads the header's line, which holds the data too (one miss:",
			"fill.read of 0x100800), takes the upcall (469 cycles) and returns the buffer by PIO",
			"(HostWrite on the Recv Completions ring, Replenish). Node 0's send completion goes to its",
			"own slot 0's header, 0x100810.",
			"CPU cycles (host/cpu: an operation of n >= 1 cycles that executes in cycle e lets the next",
			"begin in e+1; a 0-cycle Wait lets it begin in the cycle it retires; a load's successor begins",
			"in the cycle its data arrives; a store that finds the write buffer full executes in the",
			"cycle the buffer takes its last beat). Node 0: boot-wait, Compute(2000), runs 0-1999",
			"(cpu.retire at 1999 = 9.995 us); the send's buffer Wait (0 cycles) is in 2000, its",
			"Compute(337) 2000-2336, the copy's Compute(14) (16 bytes at 1 a cycle less the store's",
			"1 + 16/8 - 1 = 2) 2337-2350, the copy's store begins in 2351 and executes in 2352, the",
			"field's (one 8-byte beat) in 2353, the descriptor's (4 beats) begins in 2354 and, 2 of its",
			"beats waiting for room behind the field's, executes in 2359: the call returns in 2360",
			"(11.800 us), 360 cycles, the calibration's os = 1.8 us. The copy's miss reaches the memory",
			"bus: cache.fill at 2358 (11.790 us), on bus edge 786, so the rfo.read tenure starts at the",
			"next, 787, data at 800 (12.000 us). Then the field's pio.write, 801-803 (arbitration,",
			"address, one data phase), and the descriptor's, 806-811 (four data phases); the bridge",
			"posts them at 804 and 812 (12.060, 12.180 us), and PCI carries them at 405-411 and 413-424",
			"(12.330, 12.720 us). The LANai slave stores the field at LANai cycle 408 and the descriptor",
			"at 421; HostWrite at 422 (12.788 us).",
			"What the address and size field moved (each record against the golden before it, where the",
			"descriptor was the only PIO: memory bus 801-806, posted at 12.105 us, PCI 405-417, HostWrite",
			"at 415, 12.576 us): the descriptor reaches the NI 7 LANai cycles later (212.1 ns), the",
			"field's transactions ahead of it on both buses, and from there every NI, firmware and",
			"dma.done record of both nodes is +7 LANai cycles (SendDone 603 -> 610, RecvDone 616 -> 623,",
			"N1 HostDMADone 710 -> 717, N0 HostDMADone 718 -> 725, HostWrite/Replenish 822 -> 829), the",
			"link records +34 link cycles (212.5 ns: ni.sent 2919 -> 2953, ni.received 2982 -> 3016),",
			"the PCI records +7 cycles (210 ns: N0's retried hostdma.read 547-554, N1's DMA writes",
			"716-722 and 724-729, N0's 728-734, N1's buffer return 827-835) and the memory-bus records",
			"+14 cycles (210 ns: N0's read-ahead 1078-1089 ... 1223-1231, N1's DMA writes 1448-1451 and",
			"1462-1465, N0's 1472-1475, N1's fills 1471-1484 and 1488-1501, its buffer return",
			"1645-1648, 42 CPU cycles later).",
			"Node 1 now (the receive slot layout of lci.SlotHeaderAt): node 1's DMA of 16 bytes of data",
			"and the slot header to [0x100800, 0x100820) is one PCI burst, 718-728, where the old slot's",
			"[0x1007f0, 0x100810) crossed the LANai host DMA engine's 256-byte burst boundary 0x100800",
			"(lanai HostDMABurst) and went as two, 716-722 and 724-729; the engine stages the 32 bytes",
			"before its bus request, so dma.done is at 718 (was 716) and HostDMADone, the release and",
			"freed at 719 (was 717), 2 LANai cycles later. On the memory bus the bridge writes the one",
			"line, 1460-1467 (waits=2), where it wrote 1448-1451 and 1462-1465: the flag lands at 22.005",
			"us, 30 ns later. One load, one fill: fill.read of 0x100800, 1471-1484 (its hash now the",
			"data and the header), data at 22.260 us = CPU cycle 4452, in the CPU in 4454; the fill of",
			"0x1007e0 (1488-1501) is gone. The upcall's Compute(469) runs 4454-4922, the release's store",
			"begins in 4923 and executes in 4924 (24.620 us); its pio.write tenure starts 2 bus cycles",
			"after the next bus edge (ceil(24620/15) = 1642): 1644, data at 1647 (24.705 us); PCI",
			"826-834 and HostWrite/Replenish at LANai 828 (25.091 us). Costs.Recv was re-fitted from 422",
			"to 469 cycles with this layout (or = 2.6 us again): with 422 the store executed in 4877",
			"(24.385 us), the tenure was 1628-1631, PCI 818-826 and HostWrite 820 (24.848 us), 17 bus",
			"cycles before the two-miss layout's 1645-1648 (255 ns: from the first fill's end, 1484, to",
			"the gone second's, 1501); the 47 cycles (235 ns) put them 16 bus cycles, 8 PCI cycles and",
			"8 LANai cycles later. Node 0's send completion DMA goes to 0x100810 at the same cycles (PCI",
			"728-734, memory bus 1472-1475).")).To(Succeed())
	})

	It("shows a credit stall and its release (W = 2)", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Trace: true, Seed: 1})
		// 130 receive buffers, 4 spare, 63 senders: W = 2 (MY-P23's rule).
		cl := build(e, func(c *lcitb.Config) { c.Platform.RecvBufs = 130; c.Variant = 1 })
		h0, h1 := cl.Nodes[0].Host, cl.Nodes[1].Host
		h0.Run(func(s *lcilib.Seq) {
			s.As("boot-wait").Compute(2000)
			for i := range 4 {
				s.Send(1, []byte(fmt.Sprintf("msg%d", i)), uint32(i))
			}
		})
		h1.Run(func(s *lcilib.Seq) {
			for range 4 {
				s.Recv(nil)
			}
		})
		runAll(e)
		Expect(cl.Nodes[0].FW.Credits(1)).To(Equal(2))
		fc := ""
		for _, r := range e.Trace.Records() {
			if r.Path == "N0.NI.FW.fc" {
				on, _ := r.Get("on")
				fc += on + " "
			}
		}
		Expect(fc).To(ContainSubstring("close"))
		Expect(fc).To(ContainSubstring("open"))
		var fwRecs []trace.Record
		for _, r := range golden(e.Trace.Records()) {
			if r.Kind == "fw.state" || strings.HasPrefix(r.Kind, "ni.") {
				fwRecs = append(fwRecs, r)
			}
		}
		Expect(vtest.Golden("testdata/credit_stall.trace", fwRecs,
			"LCI I-pio on the PPro platform with 130 receive buffers, so W = (130 - 4 spare) / 63 = 2:",
			"node 0's process sends four 4-byte messages to node 1 back to back. Firmware and NI records",
			"only. Node 0 transmits two (credits 2 -> 0); the third and fourth find no credit, fc closes",
			"(BLOCKED) and they wait on node 1's queue. Node 1 delivers each packet and, on releasing W/2",
			"= 1 buffer with nothing of its own going back, sends an explicit half-window acknowledgment",
			"(fc ack, a 16-byte packet from a control buffer) carrying one credit. The first ack's arrival",
			"at node 0 (RecvDone, Credit, 24.7 us) restarts the third message and fc stays BLOCKED; the",
			"second (31.1 us) restarts the fourth and fc opens. At the end node 0 has its 2 credits back.",
			"Hosts on the memory bus and PCI bridge (host/platform's PPro): the same records as with the",
			"folded bridge, 0.1 to 0.4 us later (PIO crosses the bridge, the receiver's loads miss and",
			"fill over the memory bus), and node 1's RecvDone of the second packet after node 0's",
			"SendDone of it rather than before. Host receive slots with the header 16 bytes into a",
			"32-byte line (lci.SlotHeaderAt): node 1's first delivery, 4 bytes and the header to slot 0",
			"([0x10080c, 0x100820)), is one DMA burst where [0x1007fc, 0x100810) crossed the LANai host",
			"DMA engine's 256-byte burst boundary 0x100800 and went as two; it completes 1 LANai cycle",
			"later (HostDMADone 589 -> 590), and with it every later record of node 1 (30.3 ns; its",
			"ni.sent records 5 link cycles) and the acks' arrivals at node 0 (ni.received 4-5 link",
			"cycles later); node 0's RecvDone of the first three acks (814, 1027, 1278) stays where it",
			"was, that of the fourth moves 1523 -> 1524.")).To(Succeed())
	})
})

var _ = Describe("LCI waveforms", func() {
	It("show the firmware states, the DMA engines, the queues and the credits of a ping-pong", func() {
		e := vtest.NewEnv(vtest.Options{Clock: clock.MHz(33), Seed: 1})
		b := lcitb.DefaultBench()
		b.Warm, b.Iters = 1, 3
		_, err := lcitb.PingPong(e, lcitb.DefaultConfig(), b)
		Expect(err).NotTo(HaveOccurred())
		f, err := vcd.ParseFile(vtest.WriteWaves(e, GinkgoT().TempDir()+"/lci.vcd"))
		Expect(err).NotTo(HaveOccurred())
		values := func(name string) []string {
			v, err := f.Values(name)
			Expect(err).NotTo(HaveOccurred())
			return v
		}
		Expect(values("n0.ni.fw.hsq.state")).To(ContainElements("IDLE", "FETCH"))
		Expect(values("n0.ni.fw.tx.state")).To(ContainElements("IDLE", "BUSY"))
		Expect(values("n1.ni.fw.dma.state")).To(ContainElements("IDLE", "BUSY"))
		Expect(values("n0.ni.cpu.state")).To(ContainElements("HostWrite", "HostDMADone", "SendDone", "RecvDone", "SPIN", "IDLE"))
		Expect(values("n0.ni.sdma.state")).To(ContainElements("SEND", "IDLE"))
		Expect(values("n1.ni.rdma.state")).To(ContainElements("ARMED", "RECV", "STORE", "UNARMED"))
		Expect(values("n0.ni.hdma.state")).NotTo(BeEmpty())
		// A credit spent and returned (piggybacked on the reply).
		Expect(values("n0.ni.fw.fc.credits1")).To(ContainElements("4", "3"))
		Expect(values("n0.ni.cpu.events_pending")).NotTo(BeEmpty())
	})
})
