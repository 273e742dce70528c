package remotewrite_test

import (
	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/firmware/remotewrite"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/trace"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("checkers", func() {
	It("reports an event the machine's state has no row for (fw.transition) and keeps its state", func() {
		e := env.New(env.Options{Trace: trace.NewRecorder()})
		p, err := remotewrite.New(e, "FW", remotewrite.DefaultConfig())
		Expect(err).NotTo(HaveOccurred())
		c := firmware.NewCtx(e, &fakeNI{}, 0, 0)
		Expect(p.Boot(c)).To(Succeed())
		// A SendDone while the send machine is IDLE: no packet was sent.
		p.Handle(c, firmware.HWEvent{Kind: firmware.SendDone})
		Expect(e.Monitor.Err()).To(MatchError("1 checker violation(s):\n  0ps FW.send [fw.transition] no transition on sent in state IDLE"))
		Expect(p.Machines()[0].State()).To(Equal(remotewrite.Idle))
		Expect(p.Idle()).To(BeTrue())
	})
})

// fakeNI is hardware that accepts every command, for calling a program's
// handlers directly.
type fakeNI struct{}

func (fakeNI) Node() int                                   { return 0 }
func (fakeNI) Nodes() int                                  { return 2 }
func (fakeNI) SRAMSize() uint32                            { return 1 << 20 }
func (fakeNI) ReadSRAM(addr uint32, n int) ([]byte, error) { return make([]byte, n), nil }
func (fakeNI) WriteSRAM(uint32, []byte) error              { return nil }
func (fakeNI) Watch(uint32, int)                           {}
func (fakeNI) HostDMAFree() int                            { return 1 }
func (fakeNI) SendFree() int                               { return 1 }
func (fakeNI) RecvArmed() bool                             { return false }
func (fakeNI) StartHostDMA(clock.Time, firmware.HostDMA)   {}
func (fakeNI) StartSend(clock.Time, firmware.Packet)       {}
func (fakeNI) ArmRecv(clock.Time, uint32, int)             {}
func (fakeNI) SetTimer(clock.Time, int)                    {}
func (fakeNI) CancelTimer(clock.Time)                      {}
func (fakeNI) Interrupt(clock.Time)                        {}
