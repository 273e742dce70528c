package panda_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestPanda(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/panda")
}
