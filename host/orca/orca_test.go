package orca_test

import (
	"github.com/nisim/nisim/host/orca"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Orca's operation record", func() {
	It("carries object, operation, argument and an OpPut's data", func() {
		b := append(orca.Encode(5, orca.OpPut, -3), 1, 2, 3)
		Expect(b).To(HaveLen(orca.OpBytes + 3))
		obj, op, arg, data, ok := orca.Decode(b)
		Expect(ok).To(BeTrue())
		Expect([]any{obj, op, arg, data}).To(Equal([]any{5, orca.OpPut, int64(-3), []byte{1, 2, 3}}))
	})
	It("refuses a record shorter than its 16 bytes", func() {
		_, _, _, _, ok := orca.Decode(make([]byte, orca.OpBytes-1))
		Expect(ok).To(BeFalse())
	})
})
