package cam_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCAM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "rtl/cam")
}
