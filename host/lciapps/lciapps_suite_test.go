package lciapps_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestLciapps(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/lciapps")
}
