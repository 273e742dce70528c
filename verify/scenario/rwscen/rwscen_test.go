package rwscen_test

import (
	"os"
	"path/filepath"

	"github.com/nisim/nisim/verify/scenario"
	"github.com/nisim/nisim/verify/scenario/rwscen"
	"github.com/nisim/nisim/waves/vcd"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the remotewrite scenario", func() {
	It("writes a waveform in which the receiving machine goes ARMED, DELIVER, COUNT, ARMED", func() {
		dir := GinkgoT().TempDir()
		path := filepath.Join(dir, "rw.vcd")
		s := rwscen.Scenario()
		p := s.Defaults()
		Expect(scenario.Configure(p, "", []string{"size=2000", "firmware.costs.transmit=48"})).To(Succeed())
		rep, _, violations, err := scenario.Exec(s, p, scenario.Options{Seed: 1, VCD: path, Select: []string{"n1.ni.fw"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(violations).NotTo(HaveOccurred())
		Expect(rep.Failed()).To(BeFalse())
		f, err := os.Open(path)
		Expect(err).NotTo(HaveOccurred())
		defer f.Close()
		Expect(vcd.Lint(f)).To(BeEmpty())
		v, err := vcd.ParseFile(path)
		Expect(err).NotTo(HaveOccurred())
		ch, err := v.Changes("n1.ni.fw.recv.state")
		Expect(err).NotTo(HaveOccurred())
		var states []string
		for _, c := range ch {
			states = append(states, c.Value.Str)
		}
		Expect(states).To(Equal([]string{"ARMED", "DELIVER", "COUNT", "ARMED"}))
	})

	DescribeTable("names the bad key",
		func(set, msg string) {
			p := rwscen.Defaults()
			Expect(scenario.Configure(p, "", []string{set})).To(MatchError(ContainSubstring(msg)))
		},
		Entry("dst = src", "dst=0", "dst: must be a node other than src"),
		Entry("too big", "size=5000", "size: must be 1..firmware.max_len = 4096"),
		Entry("a negative cost", "firmware.costs.receive=-3", "firmware.costs.receive: must not be negative"),
		Entry("an unknown key", "firmware.costs.recieve=3", "recieve"),
	)
})
