package mctb_test

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/rtl/env"
	"github.com/nisim/nisim/verify/testbench/mctb"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("measurement programs", func() {
	It("refuse bad parameters with an error naming them", func() {
		ok := mctb.OneWay{Tx: 0x4000_0000, Rounds: 2, Gap: 10, Patience: clock.Microsecond}
		Expect(ok.Validate()).To(Succeed())
		for _, x := range []struct {
			err  error
			want string
		}{
			{mctb.OneWay{Tx: 0x4000_0000, Rounds: 0, Patience: 1}.Validate(), "OneWay.Rounds 0"},
			{mctb.OneWay{Tx: 0x4000_0000, Rounds: 1, Gap: -1, Patience: 1}.Validate(), "OneWay.Gap -1"},
			{mctb.OneWay{Tx: 0x4000_0000, Rounds: 1}.Validate(), "OneWay.Patience"},
			{mctb.OneWay{Tx: 0x4000_0002, Rounds: 1, Patience: 1}.Validate(), "OneWay.Tx 0x40000002"},
			{mctb.Stream{Tx: 0, Span: 64, Bytes: 48}.Validate(), "Stream.Bytes 48"},
			{mctb.Stream{Tx: 0, Span: 48, Bytes: 64}.Validate(), "Stream.Span 48"},
			{mctb.Stream{Tx: 16, Span: 64, Bytes: 64}.Validate(), "Stream.Tx 0x10"},
			{mctb.Lock{Nodes: 0, Patience: 1}.Validate(), "Lock.Nodes 0"},
			{mctb.Lock{Nodes: 8, Node: 8, Patience: 1}.Validate(), "Lock.Node 8"},
			{mctb.Lock{Nodes: 8, Backoff: -1, Patience: 1}.Validate(), "Lock.Backoff -1"},
			{mctb.Lock{Nodes: 8}.Validate(), "Lock.Patience"},
			{mctb.Lock{Nodes: 8, Flag: 2, Patience: 1}.Validate(), "Flag 0x2"},
		} {
			Expect(x.err).To(MatchError(ContainSubstring(x.want)))
		}
		Expect(mctb.Stream{Tx: 0x4000_0000, Span: 8192, Bytes: 32}.Validate()).To(Succeed())
		Expect(mctb.Lock{Nodes: 8, Node: 7, Patience: 1}.Validate()).To(Succeed())
	})

	It("take a write's latency to its last and its first reader", func() {
		w := mctb.NewWriteRounds(2, 3)
		w.Sent[0] = 100
		w.Seen[0] = []clock.Time{400, 250, 300}
		last, first, ok := w.Latency(0)
		Expect(ok).To(BeTrue())
		// 400-100 and 250-100.
		Expect([]clock.Time{last, first}).To(Equal([]clock.Time{300, 150}))
		// Round 1 was never seen by anyone.
		w.Sent[1] = 500
		_, _, ok = w.Latency(1)
		Expect(ok).To(BeFalse())
	})

	It("refuse measurements that cannot measure anything", func() {
		c := mctb.DefaultConfig()
		_, _, err := mctb.MeasureUnicast(env.New(env.Options{Seed: 1}), c, 1)
		Expect(err).To(MatchError(ContainSubstring("rounds 1 must be more than the 1 warm-up")))
		_, _, err = mctb.MeasureLock(env.New(env.Options{Seed: 1}), c, 1, true)
		Expect(err).To(MatchError(ContainSubstring("rounds 1")))
		_, _, err = mctb.MeasureFlush(env.New(env.Options{Seed: 1}), c, 0)
		Expect(err).To(MatchError(ContainSubstring("rounds 0")))
		c.Nodes = 1
		_, _, err = mctb.MeasureMulticast(env.New(env.Options{Seed: 1}), c, 3)
		Expect(err).To(MatchError(ContainSubstring("needs 2 nodes (Nodes 1)")))
		_, _, err = mctb.MeasureLinkBandwidth(env.New(env.Options{Seed: 1}), c, 1024)
		Expect(err).To(MatchError(ContainSubstring("needs 2 nodes (Nodes 1)")))
	})
})
