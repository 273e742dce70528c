package crl_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCRL(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/crl")
}
