package multigame_test

import (
	"encoding/binary"

	"github.com/nisim/nisim/host/multigame"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("a Multigame job descriptor", func() {
	It("is 32 bytes naming its sender and job, distinct per job", func() {
		d := multigame.Descriptor(3, 9)
		Expect(d).To(HaveLen(multigame.JobBytes))
		Expect(binary.LittleEndian.Uint32(d[0:])).To(Equal(uint32(3)))
		Expect(binary.LittleEndian.Uint32(d[4:])).To(Equal(uint32(9)))
		Expect(d).NotTo(Equal(multigame.Descriptor(3, 10)))
	})
})
