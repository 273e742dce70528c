package scenario

import (
	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/waves"
)

// WaveView is what a scenario's waveform shows by default (issue 12
// section 5): the scopes worth dumping and the key signals a GTKWave save
// file opens with, grouped and zoomed to the action. Patterns are globs
// over the dump's names, matching a signal by its full name or one of its
// scopes, as --select does.
type WaveView struct {
	// Select is the --select a run without one gets: the interesting
	// scopes of a system whose fabric is mostly idle (nil: everything).
	// The user widens it with --select '*' or an explicit --select.
	Select []string
	// Groups are the key signals, one GTKWave group each.
	Groups []waves.ViewGroup
	// Span, when positive, is how much time the save file shows from the
	// first change of a key signal: a run of many repetitions opens on
	// its first, not on all of them squeezed into one window. Zero shows
	// everything from the first to the last change of a key signal.
	Span clock.Time
}

// WithWaves sets the scenario's waveform view and returns it, for
// registration lists.
func (s *Scenario) WithWaves(view func(p Params) WaveView) *Scenario {
	s.Waves = view
	return s
}

// View returns the scenario's waveform view for p (the zero WaveView if it
// declares none).
func (s *Scenario) View(p Params) WaveView {
	if s.Waves == nil {
		return WaveView{}
	}
	return s.Waves(p)
}

// KeyGroup is a waves.ViewGroup: a group of key signals named name holding
// the signals the patterns match.
func KeyGroup(name string, patterns ...string) waves.ViewGroup {
	return waves.ViewGroup{Name: name, Patterns: patterns}
}
