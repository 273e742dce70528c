package fifo_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFIFO(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rtl/fifo")
}
