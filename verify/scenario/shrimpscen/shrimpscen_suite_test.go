package shrimpscen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestShrimpscen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/scenario/shrimpscen")
}
