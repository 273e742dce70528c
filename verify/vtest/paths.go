package vtest

import (
	"github.com/google/go-cmp/cmp"
	"github.com/nisim/nisim/rtl/env"
)

// TracedAndUntraced runs run twice with the same seed: in an env that
// records a trace and in one that does not, and returns what the traced
// run returned and the go-cmp diff of the two results ("" when they are
// the same). Tracing (like error injection) puts credit links on their
// slow path, where flits wait on a wire list until they land, while
// untraced runs take the fast path, where they land in the receive buffer
// when they are sent: golden traces exercise the one, every other run the
// other. A spec returns its delivery records (packet ids and delivery
// times) from run and expects an empty diff. o.Trace is ignored; o.Seed
// 0 derives one seed for both runs from the spec, as NewEnv does.
func TracedAndUntraced[T any](o Options, run func(e *env.Env) T, opts ...cmp.Option) (traced T, diff string) {
	if o.Seed == 0 {
		o.Seed = Seed()
	}
	o.Trace = true
	traced = run(NewEnv(o))
	o.Trace = false
	untraced := run(NewEnv(o))
	return traced, cmp.Diff(traced, untraced, opts...)
}
