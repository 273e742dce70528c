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
		bad := strings.Replace(string(data), "18212500 2914 N0.NI.SDMA", "18218750 2915 N0.NI.SDMA", 1)
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
			"recording component (CPU 200 MHz, memory bus 66.7 MHz, PCI 33.3 MHz, LANai 33 MHz, link",
			"160 MHz). Each host is CPU -> L2 cache -> memory bus with host memory -> PCI host bridge ->",
			"PCI with the card (host/platform's PPro). Firmware costs are cycles at CPI 1.25",
			"(firmware/lci/config.go): Dispatch 10, HostSend 25, DMAStart 15, DMADone 13, Transmit 25,",
			"SendDone 50, Receive 25, Deliver 25, Release 50, Replenish 20.",
			"Sender: the send call (338 cycles) copies the 16 bytes into the host send buffer as one",
			"store through the cache (write-back memory): the line is not present (first use), so the",
			"cache reads it for ownership (N0.MemBus rfo.read of 0x1000000, memory's 8 wait states) and",
			"the store is posted; the call ends with the 32-byte descriptor, one write-combined store",
			"that waits until the copy's store is performed (stores in program order), then the cache",
			"passes it on uncached (N0.MemBus pio.write to the bridge, 13 bus cycles later than without",
			"the copy's claim of the line; the records after it are about 0.18 µs later), posted in the",
			"bridge and written on PCI into the send queue; the NI's main loop finds it (HostWrite), hsq",
			"fetches the data by host DMA and spins on it: the bridge answers the PCI read with retries",
			"while it crosses (2 cycles) and runs its delayed-read logic (52, the re-fitted calibrated",
			"value), then reads the 16 bytes on the memory bus (host memory: 7 cycles, the measured",
			"236 ns less the bus phases and the cache lookup) and the retried read takes them (PCI",
			"start 533, done 540); behind it the bridge reads ahead to 512 bytes past the request",
			"(the rest of the line, then 15 lines), which nothing uses. tx writes the header and the send",
			"engine puts 32 bytes on the link; SendDone posts the send completion into node 0's own",
			"receive queue (a 16-byte slot header, a posted PCI write that the bridge writes on the",
			"memory bus). Receiver: RecvDone re-arms the engine, hrq takes a host buffer from the Recv",
			"Completions queue and one DMA writes the data and the slot header behind it (the full flag",
			"last), each 16 bytes posted in the bridge and written on the memory bus; its completion",
			"releases the NI buffer and counts one credit owed to node 0 (no ack yet: W/2 = 2). Node 1's",
			"process wakes when the flag lands in memory, loads the header and the data: both lines",
			"miss in its cache (the DMA wrote them; fill.read of 0x100800 and 0x1007e0), takes the",
			"upcall (422 cycles) and returns the buffer by PIO through the bridge (HostWrite on the Recv",
			"Completions ring, Replenish). The firmware's and the NI's records are those of the",
			"folded-bridge model in the same order, at later or earlier times.")).To(Succeed())
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
			"SendDone of it rather than before.")).To(Succeed())
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
