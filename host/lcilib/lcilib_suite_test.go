package lcilib_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLCI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/lcilib")
}
