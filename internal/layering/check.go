package layering

import (
	"fmt"
	"slices"
	"strings"
)

// Package is one package of the module in an import graph: its path and
// the module packages it imports, all relative to the module
// ("rtl/fifo"), and those its test files import (TestImports).
type Package struct {
	Path        string
	Imports     []string
	TestImports []string
}

// Graph is the module's import graph: its packages, sorted by path.
type Graph struct {
	Module   string
	Packages []Package
}

// Violation is one forbidden edge: From imports To against Rule.
type Violation struct {
	From, To string
	// Test says the edge is only in From's test files.
	Test bool
	Rule *Rule
}

// String names the edge, the rule and its reason on one line.
func (v Violation) String() string {
	edge := v.From + " -> " + v.To
	if v.Test {
		edge += " (tests)"
	}
	return fmt.Sprintf("%s: %s (%s)", edge, v.Rule.Name, v.Rule.Reason)
}

// Match reports whether path (relative to the module) matches pattern:
// "x" matches x only, "x/..." matches x and every package below it, and
// "..." matches every package.
func Match(pattern, path string) bool {
	if pattern == "..." {
		return true
	}
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == p || strings.HasPrefix(path, p+"/")
	}
	return path == pattern
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return Match(p, path) })
}

// Applies reports whether r judges the imports of package path.
func (r *Rule) Applies(path string) bool {
	return matchAny(r.Packages, path) && !matchAny(r.Except, path)
}

// Refuses reports whether r refuses an import of to (by a package r
// applies to). A package's imports of its own subtree are judged like any
// other.
func (r *Rule) Refuses(to string) bool {
	if len(r.Only) > 0 {
		return !matchAny(r.Only, to)
	}
	return matchAny(r.Forbid, to) && !matchAny(r.Permit, to)
}

// Check returns every edge of g that a rule refuses, in package order,
// then import order, then rule order.
func Check(rules []Rule, g Graph) []Violation {
	var out []Violation
	for _, p := range g.Packages {
		for i := range rules {
			r := &rules[i]
			if !r.Applies(p.Path) {
				continue
			}
			for _, to := range p.Imports {
				if to != p.Path && r.Refuses(to) {
					out = append(out, Violation{From: p.Path, To: to, Rule: r})
				}
			}
			if !r.Tests {
				continue
			}
			for _, to := range p.TestImports {
				if to != p.Path && !slices.Contains(p.Imports, to) && r.Refuses(to) {
					out = append(out, Violation{From: p.Path, To: to, Test: true, Rule: r})
				}
			}
		}
	}
	return out
}

// With returns a copy of g in which from also imports to (a package that
// does not exist yet is added): what a spec uses to show that a forbidden
// edge is caught.
func (g Graph) With(from, to string) Graph { return g.with(from, to, false) }

// WithTest is With for an import by from's test files.
func (g Graph) WithTest(from, to string) Graph { return g.with(from, to, true) }

func (g Graph) with(from, to string, test bool) Graph {
	c := Graph{Module: g.Module}
	found := false
	for _, p := range g.Packages {
		p.Imports, p.TestImports = slices.Clone(p.Imports), slices.Clone(p.TestImports)
		if p.Path == from {
			found = true
			if test {
				p.TestImports = append(p.TestImports, to)
			} else {
				p.Imports = append(p.Imports, to)
			}
		}
		c.Packages = append(c.Packages, p)
	}
	if !found {
		p := Package{Path: from, Imports: []string{to}}
		if test {
			p = Package{Path: from, TestImports: []string{to}}
		}
		c.Packages = append(c.Packages, p)
		slices.SortFunc(c.Packages, func(a, b Package) int { return strings.Compare(a.Path, b.Path) })
	}
	return c
}
