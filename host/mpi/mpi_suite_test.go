package mpi_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/mpi")
}
