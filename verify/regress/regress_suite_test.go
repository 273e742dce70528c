package regress_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRegress(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/regress")
}
