package rwscen_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRwscen(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/scenario/rwscen")
}
