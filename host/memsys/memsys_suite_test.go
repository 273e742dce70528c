package memsys_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMemsys(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/memsys")
}
