package lanai_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLANai(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "lanai")
}
