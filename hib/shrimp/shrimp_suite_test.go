package shrimp_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestShrimp(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "hib/shrimp")
}
