package cashmere_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestCashmere(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/cashmere")
}
