package cashapps_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCashapps(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/cashapps")
}
