package rma_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRMA(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/rma")
}
