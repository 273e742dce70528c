package dma_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestDMA(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rtl/dma")
}
