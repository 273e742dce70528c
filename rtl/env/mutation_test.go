package env_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/nisim/nisim/rtl/env"
)

// Two mutations declared by this test binary only.
var (
	mutTestA = env.DeclareMutation("envtest.a", "a test-only fault: nothing uses it")
	mutTestB = env.DeclareMutation("envtest.b", "another one")
)

var _ = Describe("Mutations", func() {
	It("lists the declared mutations sorted by name, with their descriptions", func() {
		var mine []env.MutationInfo
		for _, m := range env.Mutations() {
			if m.Name == mutTestA || m.Name == mutTestB {
				mine = append(mine, m)
			}
		}
		Expect(mine).To(Equal([]env.MutationInfo{
			{Name: "envtest.a", Doc: "a test-only fault: nothing uses it"},
			{Name: "envtest.b", Doc: "another one"},
		}))
		all := env.Mutations()
		for i := 1; i < len(all); i++ {
			Expect(all[i-1].Name < all[i].Name).To(BeTrue(), "%s before %s", all[i-1].Name, all[i].Name)
		}
	})

	It("panics on a name declared twice, an empty description or a bad name", func() {
		Expect(func() { env.DeclareMutation(mutTestA, "again") }).To(PanicWith(ContainSubstring(`"envtest.a" declared twice`)))
		Expect(func() { env.DeclareMutation("envtest.c", "") }).To(PanicWith(ContainSubstring("no description")))
		Expect(func() { env.DeclareMutation("envtest c", "x") }).To(PanicWith(ContainSubstring("bad mutation name")))
		Expect(func() { env.DeclareMutation("", "x") }).To(PanicWith(ContainSubstring("bad mutation name")))
	})

	It("accepts declared names with parameters >= 0", func() {
		Expect(env.CheckMutations(nil)).To(Succeed())
		Expect(env.CheckMutations(map[string]int{mutTestA: 0, mutTestB: 1000})).To(Succeed())
	})

	It("refuses an unknown name or a negative parameter, naming it", func() {
		err := env.CheckMutations(map[string]int{mutTestA: 1, "envtest.typo": 3})
		Expect(err).To(MatchError(HavePrefix(`unknown mutation "envtest.typo" (declared: `)))
		Expect(err.Error()).To(ContainSubstring("envtest.a, envtest.b"))
		Expect(env.CheckMutations(map[string]int{mutTestB: -1})).To(MatchError(`mutation "envtest.b": parameter -1 must be 0 (off) or positive`))
	})

	It("parses name=N and a bare name from the command line", func() {
		m := map[string]int{}
		Expect(env.ParseMutation(m, "envtest.a=7")).To(Succeed())
		Expect(env.ParseMutation(m, "envtest.b")).To(Succeed())
		Expect(m).To(Equal(map[string]int{mutTestA: 7, mutTestB: 1}))
		Expect(env.ParseMutation(m, "envtest.a=x")).To(MatchError(`mutation "envtest.a": parameter "x" is not an integer`))
		Expect(env.ParseMutation(m, "nope=1")).To(MatchError(HavePrefix(`unknown mutation "nope"`)))
		Expect(env.ParseMutation(m, "envtest.a=-2")).To(MatchError(ContainSubstring("must be 0 (off) or positive")))
	})

	It("hands a component its parameter, 0 when off", func() {
		e := env.New(env.Options{Mutations: map[string]int{mutTestA: 5}})
		Expect(e.Mutation(mutTestA)).To(Equal(5))
		Expect(e.Mutation(mutTestB)).To(BeZero())
	})
})
