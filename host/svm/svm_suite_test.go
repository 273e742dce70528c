package svm

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSVM(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/svm")
}
