package noc

import (
	"fmt"

	"github.com/nisim/nisim/verify/check"
	"github.com/nisim/nisim/verify/scenario"
)

// conserved adds a run's "no loss or duplication" check, computed from the
// conservation (and order) checkers' own violations and counts: it passes
// only when the checkers under paths reported nothing and every
// transaction was resolved (the run drained, so that a lost one would have
// been reported), and fails a run that sent nothing.
// what names the transactions ("packets", "cells").
func conserved(rep *scenario.Report, name string, mon *check.Monitor, drained bool, sent, recv, dropped int, what string, paths ...string) {
	v := mon.CountPath(paths...)
	ok := sent > 0 && v == 0 && drained
	var msg string
	switch {
	case sent == 0:
		msg = fmt.Sprintf("nothing measured: 0 %s sent, nothing to judge", what)
	case v > 0:
		msg = fmt.Sprintf("%d violation(s) reported by %v: %d %s sent, %d received, %d dropped", v, paths, sent, what, recv, dropped)
	case !drained:
		msg = fmt.Sprintf("not judged: %d of %d %s still in the network when the drain limit stopped the run",
			sent-recv-dropped, sent, what)
	default:
		msg = fmt.Sprintf("%d %s sent = %d received once + %d dropped and counted (checkers %v)", sent, what, recv, dropped, paths)
	}
	rep.Check(name, ok, "%s", msg)
}

// measured adds the "measured" check: the statistics window has to hold at
// least one delivered transaction. A run cut short by --time-limit before
// the window, or one that injected nothing, leaves every other verdict
// true of an empty set; this check fails it instead, saying that nothing
// was measured. what names the transactions ("packets", "cells").
func measured(rep *scenario.Report, delivered int, what string) {
	msg := fmt.Sprintf("%d %s delivered in the measurement window", delivered, what)
	if delivered == 0 {
		msg = "nothing measured: " + msg + " (cut off by --time-limit, or no traffic offered)"
	}
	rep.Check("measured", delivered > 0, "%s", msg)
}
