package lanai_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nisim/nisim/firmware"
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/onsi/gomega"
)

// FuzzNetDMA sends one packet of any bytes from any SRAM address of card A
// to any receive buffer (address and size) of card B over a link with or
// without bit errors: the send engine packetises SRAM into flits, the
// receive engine writes them back into SRAM in bursts (the LANai's packet
// codec). An empty packet is refused and reported (ni.send); otherwise B
// gets one RecvDone of min(length, buffer) bytes, which are the packet's
// first bytes exactly when Bad (the link CRC) is unset (for a packet that
// fits; a cut one may be Bad for a byte cut off); a packet longer
// than the buffer is cut there and reported (ni.recv); nothing is written
// outside the buffer; A gets its SendDone; and no other checker fires.
func FuzzNetDMA(f *testing.F) {
	f.Add([]byte("a small packet"), uint16(1024), uint32(0x1000), uint32(0x2000), false, false)
	f.Add(bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 300), uint16(4096), uint32(0x1003), uint32(0x2005), false, false)
	f.Add(bytes.Repeat([]byte{9}, 700), uint16(300), uint32(0x10000), uint32(0x20001), true, false)
	f.Add([]byte{}, uint16(16), uint32(0), uint32(0x100), false, false)
	f.Add(bytes.Repeat([]byte("corrupt me "), 40), uint16(2048), uint32(0x4000), uint32(0x8000), false, true)
	f.Fuzz(func(t *testing.T, payload []byte, buf uint16, srcAt, dstAt uint32, armLate, corrupt bool) {
		gomega.RegisterTestingT(t) // the helpers use Gomega
		payload = payload[:min(len(payload), 1<<14)]
		n, size := len(payload), int(buf)
		e := env.New(env.Options{Seed: 3, TimeLimit: 10 * clock.Millisecond})
		fa, fb := newFW(firmware.SendDone), newFW(firmware.RecvDone, firmware.Timer)
		a := newNode(e, "A", 0, 2, fa, nodeOpts{})
		b := newNode(e, "B", 1, 2, fb, nodeOpts{})
		cfg := netPlat.Link
		if corrupt {
			cfg.CorruptProb = 0.5
		}
		connect(e, a, b, cfg)
		sram := int(a.card.SRAMSize())
		src := uint32(int(srcAt) % (sram - n + 1))
		dst := uint32(int(dstAt) % (sram - size - 64 + 1))
		guard := bytes.Repeat([]byte{0xee}, size+64)
		if err := b.card.WriteSRAM(dst, guard); err != nil {
			t.Fatal(err)
		}
		var recv []firmware.HWEvent
		fa.boot = func(f *testFW, c *firmware.Ctx) error {
			c.Write(src, payload)
			if n == 0 {
				c.StartSend(firmware.Packet{Dst: 1, SRAM: src, Len: n}) // refused: no completion to wait for
			} else {
				f.send(c, firmware.Packet{Dst: 1, SRAM: src, Len: n, Tag: 5})
			}
			return nil
		}
		arm := func(f *testFW, c *firmware.Ctx) {
			if n > 0 {
				f.arm(c, dst, size)
			}
		}
		fb.boot = func(f *testFW, c *firmware.Ctx) error {
			if armLate {
				f.timer(c, 500)
			} else {
				arm(f, c)
			}
			return nil
		}
		fb.handle = func(f *testFW, c *firmware.Ctx, ev firmware.HWEvent) {
			switch ev.Kind {
			case firmware.Timer:
				arm(f, c)
			case firmware.RecvDone:
				recv = append(recv, ev)
			}
		}
		a.card.Start()
		b.card.Start()
		res, _ := e.Run()
		if res.Stopped {
			t.Fatalf("%d bytes into a %d-byte buffer: still running at %v", n, size, res.End)
		}
		var rules []string
		for _, v := range e.Monitor.Violations() {
			rules = append(rules, v.Check)
		}
		if n == 0 {
			if len(rules) != 1 || rules[0] != "ni.send" || len(recv) != 0 {
				t.Fatalf("an empty packet: violations %v, %d received", e.Monitor.Violations(), len(recv))
			}
			return
		}
		want := []string(nil)
		if n > size {
			want = []string{"ni.recv"}
		}
		if strings.Join(rules, ",") != strings.Join(want, ",") {
			t.Fatalf("%d bytes into a %d-byte buffer: violations %v", n, size, e.Monitor.Violations())
		}
		if len(recv) != 1 || len(fa.events(firmware.SendDone)) != 1 {
			t.Fatalf("%d bytes: %d RecvDone, %d SendDone", n, len(recv), len(fa.events(firmware.SendDone)))
		}
		ev, k := recv[0], min(n, size)
		if ev.Len != k || ev.Addr != dst || ev.Src != 0 {
			t.Fatalf("%d bytes into a %d-byte buffer at %#x: RecvDone %+v", n, size, dst, ev)
		}
		got, err := b.card.ReadSRAM(dst, size+64)
		if err != nil {
			t.Fatal(err)
		}
		// A cut packet's CRC covers the bytes cut off too: there Bad only
		// says that some byte of the packet was hit.
		if intact := bytes.Equal(got[:k], payload[:k]); (n <= size && intact == ev.Bad) || (!intact && !ev.Bad) {
			t.Fatalf("%d bytes into %d (corrupt %v): intact %v but Bad %v", n, size, corrupt, intact, ev.Bad)
		}
		if !bytes.Equal(got[k:], guard[k:]) {
			t.Fatalf("%d bytes into a %d-byte buffer: SRAM written beyond the %d bytes received", n, size, k)
		}
	})
}
