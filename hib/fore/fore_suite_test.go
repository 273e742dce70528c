package fore_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFore(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "hib/fore")
}
