package firmware_test

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// nullNI is hardware that accepts every command (the machine specs need
// none).
type nullNI struct{ dmas, sends int }

func (n *nullNI) Node() int                                   { return 0 }
func (n *nullNI) Nodes() int                                  { return 2 }
func (n *nullNI) SRAMSize() uint32                            { return 4096 }
func (n *nullNI) ReadSRAM(addr uint32, k int) ([]byte, error) { return make([]byte, k), nil }
func (n *nullNI) WriteSRAM(uint32, []byte) error              { return nil }
func (n *nullNI) Watch(uint32, int)                           {}
func (n *nullNI) HostDMAFree() int                            { return 1 - n.dmas }
func (n *nullNI) SendFree() int                               { return 1 }
func (n *nullNI) RecvArmed() bool                             { return false }
func (n *nullNI) StartHostDMA(clock.Time, firmware.HostDMA)   { n.dmas++ }
func (n *nullNI) StartSend(clock.Time, firmware.Packet)       { n.sends++ }
func (n *nullNI) ArmRecv(clock.Time, uint32, int)             {}
func (n *nullNI) SetTimer(clock.Time, int)                    {}
func (n *nullNI) CancelTimer(clock.Time)                      {}
func (n *nullNI) Interrupt(clock.Time)                        {}

var _ = Describe("Machine", func() {
	var (
		e  *env.Env
		m  *firmware.Machine
		hw *nullNI
		c  *firmware.Ctx
	)
	BeforeEach(func() {
		e = env.New(env.Options{Trace: trace.NewRecorder()})
		hw = &nullNI{}
		var err error
		m, err = firmware.NewMachine(e, "fw.door", "SHUT", []firmware.Transition{
			{From: "SHUT", On: "open", To: "OPEN", Cost: 5},
			{From: "OPEN", On: "close", To: "SHUT", Cost: 3, Do: func(c *firmware.Ctx, _ any) {
				c.StartSend(firmware.Packet{Dst: 1, Len: 4})
			}},
			{From: "OPEN", On: "knock", Cost: 1},
		})
		Expect(err).NotTo(HaveOccurred())
		c = firmware.NewCtx(e, hw, 0, 0)
	})

	It("moves through its table, charging each row's cost", func() {
		Expect(c.Fire(m, "open", nil)).To(BeTrue())
		Expect(c.Fire(m, "knock", nil)).To(BeTrue())
		Expect(m.State()).To(Equal(firmware.State("OPEN")))
		Expect(c.Fire(m, "close", nil)).To(BeTrue())
		Expect(m.State()).To(Equal(firmware.State("SHUT")))
		Expect(c.Cycles()).To(Equal(9))
	})

	It("issues commands only at commit", func() {
		c.Fire(m, "open", nil)
		c.Fire(m, "close", nil)
		Expect(hw.sends).To(Equal(0))
		c.Commit(10)
		Expect(hw.sends).To(Equal(1))
	})

	It("reports an event its state has no row for, and stays", func() {
		Expect(c.Fire(m, "knock", nil)).To(BeFalse())
		Expect(m.State()).To(Equal(firmware.State("SHUT")))
		Expect(e.Monitor.Err()).To(MatchError(ContainSubstring("fw.transition")))
	})

	It("records every transition in the trace", func() {
		c.Fire(m, "open", nil)
		recs := e.Trace.Records()
		Expect(recs).To(HaveLen(1))
		Expect(recs[0].Kind).To(Equal("fw.state"))
		to, _ := recs[0].Get("to")
		Expect(to).To(Equal("OPEN"))
	})

	It("lists the rows that never fired", func() {
		c.Fire(m, "open", nil)
		Expect(firmware.Uncovered(m)).To(Equal([]string{"fw.door: close in OPEN", "fw.door: knock in OPEN"}))
	})

	DescribeTable("refuses a malformed table",
		func(rows []firmware.Transition, msg string) {
			_, err := firmware.NewMachine(e, "bad", "A", rows)
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("duplicate row", []firmware.Transition{{From: "A", On: "x"}, {From: "A", On: "x"}}, "both handle"),
		Entry("no event", []firmware.Transition{{From: "A"}}, "no state or event"),
		Entry("negative cost", []firmware.Transition{{From: "A", On: "x", Cost: -1}}, "negative cost"),
	)

	It("refuses a command beyond the engine's free slots", func() {
		c.StartHostDMA(firmware.HostDMA{Len: 4})
		c.StartHostDMA(firmware.HostDMA{Len: 4})
		Expect(e.Monitor.Err()).To(MatchError(ContainSubstring("fw.overflow")))
	})
})
