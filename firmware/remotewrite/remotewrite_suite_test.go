package remotewrite_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestRemoteWrite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "firmware/remotewrite")
}
