package atmscen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestAtmscen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/scenario/atmscen")
}
