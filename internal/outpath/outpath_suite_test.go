package outpath_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestOutpath(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/outpath")
}
