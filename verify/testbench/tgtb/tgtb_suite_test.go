package tgtb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestTgtb(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/testbench/tgtb")
}
