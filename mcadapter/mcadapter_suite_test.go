package mcadapter_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMCAdapter(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "mcadapter")
}
