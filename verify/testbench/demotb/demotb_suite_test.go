package demotb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestDemotb(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/testbench/demotb")
}
