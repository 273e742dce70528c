package rmarig_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRmarig(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/rma/rmarig")
}
