package multigame_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMultigame(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "host/multigame")
}
