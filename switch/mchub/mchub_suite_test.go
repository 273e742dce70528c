package mchub_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMCHub(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switch/mchub")
}
