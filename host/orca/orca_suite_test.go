package orca_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestOrca(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/orca")
}
