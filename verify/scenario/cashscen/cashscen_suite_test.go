package cashscen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCashscen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/scenario/cashscen")
}
