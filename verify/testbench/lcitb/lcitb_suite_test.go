package lcitb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLcitb(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/testbench/lcitb")
}
