package fsm_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFSM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rtl/fsm")
}
