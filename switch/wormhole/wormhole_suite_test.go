package wormhole_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestWormhole(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switch/wormhole")
}
