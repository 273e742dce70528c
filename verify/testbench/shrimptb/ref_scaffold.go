package shrimptb

// SCAFFOLD (E3 for E5): lets cluster.go compile until E5's ref.go and
// check.go define Ref, NewRef, checker, newChecker and checker.finish;
// E5 deletes this file when committing them.

import "github.com/nisim/nisim/rtl/clock"

// Ref is the reference model (E5's ref.go replaces this scaffold).
type Ref struct{}

// NewRef returns the reference model of a cluster of nodes nodes.
func NewRef(nodes int) *Ref { return &Ref{} }

// checker holds the cluster's always-on checkers (E5's check.go).
type checker struct{}

// newChecker hooks the checkers onto the built cluster.
func newChecker(cl *Cluster) *checker { return &checker{} }

// finish runs the end-of-run checks.
func (c *checker) finish(now clock.Time) {}
