package myrinet_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMyrinet(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switch/myrinet")
}
