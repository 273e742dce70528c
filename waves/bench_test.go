package waves_test

import (
	"fmt"
	"io"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
	"github.com/nisim/nisim/waves"
)

// BenchmarkVCDWriter measures value changes per second into io.Discard: 64
// signals (16 flags, 16 16-bit wires, 16 32-bit integers, 8 reals, 8
// strings) that all change at every step, one step per iteration.
func BenchmarkVCDWriter(b *testing.B) {
	r := waves.NewRegistry(waves.Options{})
	var flags, wires, ints, reals, strs []*waves.Signal
	for i := range 16 {
		scope := fmt.Sprintf("Bench.Unit[%d]", i)
		flags = append(flags, r.Wire(scope, "valid", 1))
		wires = append(wires, r.Wire(scope, "addr", 16))
		ints = append(ints, r.Integer(scope, "beats", 32))
		if i < 8 {
			reals = append(reals, r.Real(scope, "lat"))
			strs = append(strs, r.String(scope, "state"))
		}
	}
	if err := r.DumpVCD(io.Discard, waves.VCDOptions{}); err != nil {
		b.Fatal(err)
	}
	states := []string{"IDLE", "ADDR", "DATA", "WAIT"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := clock.Time(i+1) * 10 * clock.Nanosecond
		n := uint64(i)
		for k, s := range flags {
			s.SetBool(t, (n+uint64(k))&1 == 1) // toggles every step
		}
		for k, s := range wires {
			s.Set(t, n*7+uint64(k)) // +7 per step: never equal mod 2^16
		}
		for k, s := range ints {
			s.Set(t, n+uint64(k))
		}
		for k, s := range reals {
			s.SetReal(t, float64(n)+float64(k)/8)
		}
		for k, s := range strs {
			s.SetString(t, states[(i+k)%len(states)])
		}
	}
	if err := r.Close(clock.Time(b.N+1) * 10 * clock.Nanosecond); err != nil {
		b.Fatal(err)
	}
	changes := r.Changes()
	if want := uint64(64 * b.N); b.N > 1 && changes < want-64 {
		b.Fatalf("%d changes, want about %d", changes, want)
	}
	b.ReportMetric(float64(changes)/b.Elapsed().Seconds(), "changes/s")
}

// holder mimics a component whose signal fields are nil when waveforms are
// off; a package variable keeps the compiler from proving the nil.
type holder struct{ sig *waves.Signal }

var disabled, enabled holder

// BenchmarkSetNilSignal is the cost of an update on a disabled signal.
func BenchmarkSetNilSignal(b *testing.B) {
	s := disabled.sig
	for i := 0; i < b.N; i++ {
		s.Set(clock.Time(i), 5)
	}
}

// BenchmarkSetUnchanged is the cost of an update that changes nothing on an
// enabled signal, one per cycle as a component that sets its outputs on
// every edge does (time advances, so each call also closes a step).
func BenchmarkSetUnchanged(b *testing.B) {
	r := waves.NewRegistry(waves.Options{})
	enabled.sig = r.Integer("Bench", "occ", 8)
	if err := r.DumpVCD(io.Discard, waves.VCDOptions{}); err != nil {
		b.Fatal(err)
	}
	s := enabled.sig
	s.Set(0, 5)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Set(clock.Time(i+1), 5)
	}
	b.StopTimer()
	if err := r.Close(clock.Time(b.N + 1)); err != nil {
		b.Fatal(err)
	}
	if r.Changes() != 1 {
		b.Fatalf("%d changes, want 1", r.Changes())
	}
}

// BenchmarkDeclare measures declaring the 8x8 mesh's 14912 signals (the
// largest default dump) from Akita-style component names: each declaration
// converts its name (ScopeName), checks it (CheckName) and records its
// scopes. One iteration is one registry.
func BenchmarkDeclare(b *testing.B) {
	var scopes []string
	for i := range 64 * 11 {
		scopes = append(scopes, fmt.Sprintf("Mesh.LinkX[%d].AB.Tx[%d]", i/2, i%2))
	}
	b.ReportAllocs()
	for b.Loop() {
		r := waves.NewRegistry(waves.Options{})
		n := 0
		for n < 14912 {
			for _, sc := range scopes {
				r.Integer(sc, fmt.Sprintf("occupancy%d", n), 4)
				n++
				if n == 14912 {
					break
				}
			}
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/14912, "ns/signal")
}
