package vcd_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestVCD(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "waves/vcd")
}
