package firmware_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestFirmware(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "firmware")
}
