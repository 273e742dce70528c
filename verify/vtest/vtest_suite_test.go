package vtest_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestVtest(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/vtest")
}
