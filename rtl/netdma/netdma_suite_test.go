package netdma_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNetDMA(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rtl/netdma")
}
