package atmtb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestAtmtb(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/testbench/atmtb")
}
