package env

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// A mutation is a test-only fault: a component that misbehaves, when the
// run switches the mutation on (Options.Mutations), in exactly the way one
// checker exists to catch. Mutation specs run a system with it on and
// expect the checker to fire, and without it and expect a clean run: the
// checker discriminates. The model code carries the fault behind a field it
// reads once, when it is built (Env.Mutation); with the mutation off that
// field is zero and the model is unchanged.
//
// Every mutation is declared once, by the package that implements it, with
// DeclareMutation in a package-level variable, so the names and what they
// do are listed in one place (Mutations) and a misspelt name is an error
// (CheckMutations) instead of a run that silently tests nothing.

// MutationInfo is a declared mutation.
type MutationInfo struct {
	// Name is the key in Options.Mutations, "package.fault".
	Name string
	// Doc says what the fault does and what its parameter N means.
	Doc string
}

var (
	mutMu    sync.Mutex
	declared = map[string]string{}
)

// DeclareMutation declares the test-only fault name with its description
// and returns name, for a package-level variable:
//
//	var mutLose = env.DeclareMutation("link.lose", "every Nth packet vanishes ...")
//
// It panics (at program start) on an empty name, a name with spaces or
// '=' or ',', an empty description, or a name declared twice.
func DeclareMutation(name, doc string) string {
	mutMu.Lock()
	defer mutMu.Unlock()
	switch {
	case name == "" || strings.ContainsAny(name, " \t\n=,"):
		panic(fmt.Sprintf("env.DeclareMutation: bad mutation name %q", name))
	case doc == "":
		panic(fmt.Sprintf("env.DeclareMutation: mutation %q has no description", name))
	}
	if _, dup := declared[name]; dup {
		panic(fmt.Sprintf("env.DeclareMutation: mutation %q declared twice", name))
	}
	declared[name] = doc
	return name
}

// Mutations returns every declared mutation, sorted by name.
func Mutations() []MutationInfo {
	mutMu.Lock()
	defer mutMu.Unlock()
	out := make([]MutationInfo, 0, len(declared))
	for n, d := range declared {
		out = append(out, MutationInfo{Name: n, Doc: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CheckMutations validates Options.Mutations: every name must be declared
// and every parameter non-negative. The error names the first offending
// key (in name order) and, for an unknown one, lists the declared names.
func CheckMutations(m map[string]int) error {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	mutMu.Lock()
	defer mutMu.Unlock()
	for _, n := range names {
		if _, ok := declared[n]; !ok {
			known := make([]string, 0, len(declared))
			for k := range declared {
				known = append(known, k)
			}
			sort.Strings(known)
			return fmt.Errorf("unknown mutation %q (declared: %s)", n, strings.Join(known, ", "))
		}
		if m[n] < 0 {
			return fmt.Errorf("mutation %q: parameter %d must be 0 (off) or positive", n, m[n])
		}
	}
	return nil
}

// ParseMutation parses a command-line "name=N" (or a bare "name", N = 1)
// into m, checking the name and N as CheckMutations does.
func ParseMutation(m map[string]int, s string) error {
	name, val, has := strings.Cut(s, "=")
	n := 1
	if has {
		v, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil {
			return fmt.Errorf("mutation %q: parameter %q is not an integer", name, val)
		}
		n = v
	}
	name = strings.TrimSpace(name)
	if err := CheckMutations(map[string]int{name: n}); err != nil {
		return err
	}
	m[name] = n
	return nil
}
