package vmmc_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestVMMC(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/vmmc")
}
