package mem_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/rtl/mem"
	"github.com/nisim/nisim/verify/trace"
	"github.com/nisim/nisim/verify/vtest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// got is a beat the master received, with the cycle it was popped.
type got struct {
	Cycle clock.Cycle
	Len   int
	Last  bool
}

var _ = Describe("Storage", func() {
	It("holds real bytes across page boundaries and reads zero elsewhere", func() {
		s := mem.NewStorage(1 << 20)
		data := make([]byte, 10000)
		for i := range data {
			data[i] = byte(i * 7)
		}
		Expect(s.Write(4000, data)).To(Succeed())
		back, err := s.Bytes(4000, len(data))
		Expect(err).NotTo(HaveOccurred())
		Expect(back).To(Equal(data))
		z, _ := s.Bytes(200_000, 16)
		Expect(z).To(Equal(make([]byte, 16)))
		Expect(s.Pages()).To(Equal([]uint64{0, 1, 2, 3}))
		Expect(s.Write(1<<20-2, []byte{1, 2, 3})).To(MatchError(ContainSubstring("outside memory")))
	})

	It("agrees with a flat byte array over random reads, writes and views that hop between pages", func() {
		// The storage remembers the last page it found; the accesses below
		// alternate between pages, reread unwritten ones (which must stay
		// zero and unallocated) and write through views.
		const size = 8 * 4096
		s := mem.NewStorage(size)
		flat := make([]byte, size)
		r := rand.New(rand.NewPCG(1, 2))
		written := map[uint64]bool{}
		for range 5000 {
			addr := uint64(r.IntN(size))
			n := r.IntN(min(600, size-int(addr)) + 1)
			switch r.IntN(3) {
			case 0:
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(r.Uint32())
				}
				Expect(s.Write(addr, data)).To(Succeed())
				copy(flat[addr:], data)
				for a := addr; a < addr+uint64(n); a++ {
					written[a>>12] = true
				}
			case 1:
				back, err := s.Bytes(addr, n)
				Expect(err).NotTo(HaveOccurred())
				Expect(back).To(Equal(flat[addr : addr+uint64(n)]))
			default:
				n = min(n, 4096-int(addr&4095))
				v, err := s.View(addr, n)
				Expect(err).NotTo(HaveOccurred())
				Expect(v).To(Equal(flat[addr : addr+uint64(n)]))
				if n > 0 {
					v[0]++
					flat[addr]++
				}
				written[addr>>12] = true
			}
		}
		var want []uint64
		for p := range uint64(size / 4096) {
			if written[p] {
				want = append(want, p)
			}
		}
		Expect(s.Pages()).To(Equal(want))
		all, _ := s.Bytes(0, size)
		Expect(all).To(Equal(flat))
	})

	It("splits transfers at width-aligned boundaries", func() {
		Expect(mem.Chunks(0x1006, 20, 8)).To(Equal([]int{2, 8, 8, 2}))
		Expect(mem.Chunks(0x1000, 16, 8)).To(Equal([]int{8, 8}))
		Expect(mem.Chunks(0x1000, 3, 4)).To(Equal([]int{3}))
		Expect(mem.Chunks(0x1000, 0, 4)).To(BeNil())
	})

	It("gives the beats of a write one per chunk, first and last marked", func() {
		r := rand.New(rand.NewPCG(3, 4))
		for range 2000 {
			width := []int{1, 4, 8, 32}[r.IntN(4)]
			addr := uint64(r.IntN(1 << 16))
			data := make([]byte, r.IntN(300))
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			req := &mem.Req{Op: mem.Write, Addr: addr, Len: len(data)}
			// The reference: every beat ends at a width boundary or at
			// the end of the data.
			var want []mem.Beat
			for off := 0; off < len(data); {
				end := off + 1
				for end < len(data) && (addr+uint64(end))%uint64(width) != 0 {
					end++
				}
				want = append(want, mem.Beat{Req: req, Data: data[off:end], First: off == 0, Last: end == len(data)})
				off = end
			}
			beats := mem.WriteBeats(req, data, width)
			Expect(beats).To(HaveLen(len(want)))
			if len(want) > 0 {
				Expect(beats).To(Equal(want))
			}
			chunks := mem.Chunks(addr, len(data), width)
			Expect(chunks).To(HaveLen(len(want)))
			for i, b := range want {
				Expect(chunks[i]).To(Equal(len(b.Data)))
			}
			Expect(cap(chunks)).To(Equal(len(chunks)))
		}
	})
})

var _ = Describe("Memory", func() {
	var (
		e   *env.Env
		m   *mem.Memory
		clk = clock.MHz(100)
	)

	build := func(latency, bpc int) {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var err error
		m, err = mem.MakeBuilder().WithEnv(e).WithClock(clk).WithSize(1 << 16).
			WithLatency(latency).WithBytesPerCycle(bpc).WithPortWidth(8).Build("Mem")
		Expect(err).NotTo(HaveOccurred())
	}

	// master pushes the given beats from cycle 0, one per cycle, and
	// collects upstream beats.
	master := func(beats []mem.Beat, rx *[]got) *vtest.Agent {
		ch := m.Port(0)
		i := 0
		a := vtest.NewAgent(e, "Master", clk, func(now clock.Time, c clock.Cycle) bool {
			if b, ok := ch.Up.Pop(now); ok {
				*rx = append(*rx, got{c, len(b.Data), b.Last})
			}
			if i < len(beats) && ch.Down.CanPush(now) {
				ch.Down.Push(now, beats[i])
				i++
			}
			return i < len(beats)
		})
		ch.ConnectMaster(a)
		return a
	}

	It("streams a read after its latency, one beat per cycle", func() {
		build(3, 8)
		data := []byte("0123456789abcdefghijklmnopqrstuv")
		Expect(m.Storage().Write(0x100, data)).To(Succeed())
		var rx []got
		req := &mem.Req{Op: mem.Read, Addr: 0x100, Len: 32, Master: "Master"}
		master([]mem.Beat{{Req: req, First: true, Last: true}}, &rx).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Request pushed at c0, accepted at c1, data from c1+3 = c4 to c7,
		// each beat popped by the master one cycle later.
		Expect(rx).To(Equal([]got{{5, 8, false}, {6, 8, false}, {7, 8, false}, {8, 8, true}}))
		Expect(e.Trace.Records()).To(HaveLen(1))
		r := e.Trace.Records()[0]
		Expect(r.Format()).To(Equal("70000 7 Mem mem.read addr=0x100 len=32 port=0 hash=" + trace.HashBytes(data)))
	})

	It("halves the beat rate when the data path is half the port width", func() {
		build(0, 4)
		var rx []got
		req := &mem.Req{Op: mem.Read, Addr: 0, Len: 16}
		master([]mem.Beat{{Req: req, First: true, Last: true}}, &rx).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Accepted at c1 with latency 0: 4 bytes of credit at c1, 8 at c2
		// (beat 0), 4 at c3, 8 at c4 (beat 1); popped one cycle later.
		Expect(rx).To(Equal([]got{{3, 8, false}, {5, 8, true}}))
	})

	It("writes real data and answers non-posted writes with a completion", func() {
		build(2, 8)
		data := []byte("abcdefghijklmnop")
		var rx []got
		req := &mem.Req{Op: mem.Write, Addr: 0x40, Len: 16}
		master(mem.WriteBeats(req, data, 8), &rx).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// Beats pushed at c0 and c1; accepted at c1, data from c3: beat 0 at
		// c3, beat 1 at c4, completion pushed at c4 and popped at c5.
		Expect(rx).To(Equal([]got{{5, 0, true}}))
		back, _ := m.Storage().Bytes(0x40, 16)
		Expect(back).To(Equal(data))
		Expect(e.Trace.Records()[0].Format()).To(HavePrefix("40000 4 Mem mem.write addr=0x40 len=16"))
	})

	It("announces a finished write with its data to every subscriber, in subscription order", func() {
		build(2, 8)
		type seen struct {
			Who    string
			Cycle  clock.Cycle
			Port   int
			Addr   uint64
			Data   string
			Master string
		}
		var log []seen
		sub := func(who string) func(clock.Time, mem.WriteEvent) {
			return func(now clock.Time, w mem.WriteEvent) {
				log = append(log, seen{who, clk.CycleAt(now), w.Port, w.Addr, string(w.Data), w.Master})
			}
		}
		m.SubscribeWrites(sub("first"))
		var legacy []string
		m.OnWrite(func(now clock.Time, port int, addr uint64, n int) {
			legacy = append(legacy, fmt.Sprintf("c%d port%d %#x+%d", clk.CycleAt(now), port, addr, n))
		})
		m.SubscribeWrites(sub("second"))
		data := []byte("abcdefghijklmnop")
		req := &mem.Req{Op: mem.Write, Addr: 0x40, Len: 16, Posted: true, Master: "Dma"}
		var rx []got
		master(mem.WriteBeats(req, data, 8), &rx).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		// As in the non-posted case: accepted at c1, beats written at c3
		// and c4 (latency 2), so the write finishes, and is announced, at c4.
		Expect(log).To(Equal([]seen{
			{"first", 4, 0, 0x40, "abcdefghijklmnop", "Dma"},
			{"second", 4, 0, 0x40, "abcdefghijklmnop", "Dma"},
		}))
		Expect(legacy).To(Equal([]string{"c4 port0 0x40+16"}))
	})

	It("hands subscribers a copy: changing it leaves the storage alone", func() {
		build(0, 8)
		m.SubscribeWrites(func(_ clock.Time, w mem.WriteEvent) {
			for i := range w.Data {
				w.Data[i] = 0xff
			}
		})
		req := &mem.Req{Op: mem.Write, Addr: 0x80, Len: 8, Posted: true}
		var rx []got
		master(mem.WriteBeats(req, []byte("12345678"), 8), &rx).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		back, _ := m.Storage().Bytes(0x80, 8)
		Expect(string(back)).To(Equal("12345678"))
	})

	It("sends nothing back for a posted write", func() {
		build(1, 8)
		var rx []got
		req := &mem.Req{Op: mem.Write, Addr: 0, Len: 8, Posted: true}
		master(mem.WriteBeats(req, make([]byte, 8), 8), &rx).Start()
		_, err := e.Run()
		Expect(err).NotTo(HaveOccurred())
		Expect(rx).To(BeEmpty())
		Expect(m.Stats().Writes).To(Equal(uint64(1)))
	})

	It("reports an access outside the memory and answers with an error", func() {
		build(1, 8)
		var rx []got
		req := &mem.Req{Op: mem.Read, Addr: 1<<16 - 4, Len: 8}
		master([]mem.Beat{{Req: req, First: true, Last: true}}, &rx).Start()
		_, err := e.Run()
		Expect(err).To(MatchError(ContainSubstring("mem.range")))
	})

	It("serves its ports round-robin", func() {
		e = vtest.NewEnv(vtest.Options{Clock: clk, Trace: true})
		var err error
		m, err = mem.MakeBuilder().WithEnv(e).WithClock(clk).WithPorts(2).WithLatency(0).Build("Mem")
		Expect(err).NotTo(HaveOccurred())
		for p := 0; p < 2; p++ {
			ch := m.Port(p)
			sent := 0
			a := vtest.NewAgent(e, "M", clk, func(now clock.Time, c clock.Cycle) bool {
				ch.Up.Pop(now)
				if sent < 2 && ch.Down.CanPush(now) {
					ch.Down.Push(now, mem.Beat{Req: &mem.Req{Op: mem.Read, Addr: uint64(p*0x100 + sent*8), Len: 8}, First: true, Last: true})
					sent++
				}
				return sent < 2
			})
			ch.ConnectMaster(a)
			a.Start()
		}
		_, err = e.Run()
		Expect(err).NotTo(HaveOccurred())
		var addrs []string
		for _, r := range e.Trace.Records() {
			a, _ := r.Get("addr")
			addrs = append(addrs, a)
		}
		Expect(addrs).To(Equal([]string{"0x0", "0x100", "0x8", "0x108"}))
	})

	DescribeTable("rejects impossible parameters",
		func(b mem.Builder, msg string) {
			_, err := b.WithEnv(env.New(env.Options{})).Build("Bad")
			Expect(err).To(MatchError(ContainSubstring(msg)))
		},
		Entry("no clock", mem.MakeBuilder(), "no clock"),
		Entry("zero size", mem.MakeBuilder().WithClock(clk).WithSize(0), "size"),
		Entry("zero bandwidth", mem.MakeBuilder().WithClock(clk).WithBytesPerCycle(0), "bandwidth"),
		Entry("negative latency", mem.MakeBuilder().WithClock(clk).WithLatency(-1), "latency"),
	)
})

var _ = Describe("Storage.View", func() {
	It("is the storage itself within a page, and refuses to cross one", func() {
		s := mem.NewStorage(1 << 16)
		v, err := s.View(0x1010, 8)
		Expect(err).NotTo(HaveOccurred())
		copy(v, "viewed!!")
		back, _ := s.Bytes(0x1010, 8)
		Expect(string(back)).To(Equal("viewed!!"))
		Expect(s.Write(0x1010, []byte("written!"))).To(Succeed())
		Expect(string(v)).To(Equal("written!"))
		_, err = s.View(0x1ffc, 8)
		Expect(err).To(MatchError(ContainSubstring("crosses")))
		_, err = s.View(1<<16-4, 8)
		Expect(err).To(MatchError(ContainSubstring("outside memory")))
	})
})
