package nx_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestNX(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/nx")
}
