package atm_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestATM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switch/atm")
}
