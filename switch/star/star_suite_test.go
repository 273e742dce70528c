package star_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestStar(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switch/star")
}
