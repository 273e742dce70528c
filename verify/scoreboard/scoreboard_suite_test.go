package scoreboard_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestScoreboard(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "verify/scoreboard")
}
