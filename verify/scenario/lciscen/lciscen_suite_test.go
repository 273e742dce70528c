package lciscen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLCIScenarios(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/scenario/lciscen")
}
