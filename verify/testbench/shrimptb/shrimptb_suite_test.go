package shrimptb_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestShrimptb(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/testbench/shrimptb")
}
