package tbutil_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestTbutil(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Tbutil Suite")
}
