package clock_test

import (
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/nisim/nisim/rtl/clock"
)

// timeSeeds are time strings as the command line and the configurations
// write them.
var timeSeeds = []string{"30ns", "1.5us", "2ms", "7519ps", "0", "10us", " 20 us ", "1s", "0.000001ms",
	"9223372036854775807ps", "9223372036854775808ps", "1e-3ns", "1/3ns", "3/1000ns", "-1ns", "ns", "", "1e999999s"}

// FuzzParseTime checks ParseTime on any string: an error is one line, an
// accepted time is not negative and is written back by Time.String to a
// string ParseTime reads as the same time (exactly where String is exact:
// below 1 µs or a whole number of nanoseconds; else to String's six
// significant digits), and the plain picosecond count parses back exactly.
// The int64 argument checks the same round trip for any time.
func FuzzParseTime(f *testing.F) {
	for i, s := range timeSeeds {
		f.Add(s, int64(i)*7_518_797)
	}
	f.Add("1.23457us", int64(1_234_567))
	f.Add("never", int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, s string, v int64) {
		got, err := clock.ParseTime(s)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("ParseTime(%q): error %q is not one line", s, msg)
			}
		} else {
			if got < 0 {
				t.Fatalf("ParseTime(%q) = %d, negative", s, got)
			}
			roundTrip(t, got)
		}
		if v >= 0 {
			roundTrip(t, clock.Time(v))
		}
	})
}

// roundTrip checks that v's String and its picosecond count parse back.
func roundTrip(t *testing.T, v clock.Time) {
	t.Helper()
	ps, err := clock.ParseTime(fmt.Sprintf("%dps", int64(v)))
	if err != nil || ps != v {
		t.Fatalf("ParseTime(%dps) = %d, %v", int64(v), ps, err)
	}
	if plain, err := clock.ParseTime(fmt.Sprint(int64(v))); err != nil || plain != v {
		t.Fatalf("ParseTime(%d) = %d, %v", int64(v), plain, err)
	}
	if v == clock.Never {
		return // String writes "never"
	}
	str := v.String()
	back, err := clock.ParseTime(str)
	if err != nil {
		t.Fatalf("%d ps is written %q, which ParseTime refuses: %v", int64(v), str, err)
	}
	if v < clock.Microsecond || v%clock.Nanosecond == 0 {
		if back != v {
			t.Fatalf("%d ps is written %q, which parses as %d ps", int64(v), str, back)
		}
		return
	}
	// String's %.6g: a relative error of at most half a unit in the sixth
	// significant digit.
	if d := math.Abs(float64(back) - float64(v)); d > 5e-6*float64(v) {
		t.Fatalf("%d ps is written %q, which parses as %d ps (off by %g)", int64(v), str, back, d)
	}
}

// freqSeeds are frequencies as the scenario configurations write them.
var freqSeeds = []string{"33MHz", "12.5 MHz", "100/3 MHz", "1.28GHz", "8333333", "200MHz", "66MHz", "160MHz",
	"1GHz", "1THz", "1000GHz", "1001GHz", "0MHz", "-5MHz", "fast", "", "1e-3Hz", "1Hz", "17.5MHz", "133MHz",
	"1/3 kHz"}

// FuzzParseFreq checks ParseFreq on any string and Ratio on any pair: an
// error is one line; an accepted clock is valid, in lowest terms, at most
// 1 THz, its first edges are representable (edge 1 at or after 1 ps) and
// both its exact form "num/den Hz" and its String parse back (exactly, and
// to String's precision).
func FuzzParseFreq(f *testing.F) {
	for i, s := range freqSeeds {
		f.Add(s, uint64(100_000_000), uint64(i+1))
	}
	f.Add("1Hz", uint64(35_000_000), uint64(2))
	f.Fuzz(func(t *testing.T, s string, num, den uint64) {
		c, err := clock.ParseFreq(s)
		if err != nil {
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("ParseFreq(%q): error %q is not one line", s, msg)
			}
		} else {
			checkClock(t, s, c)
		}
		if r, err := clock.Ratio(num, den); err == nil {
			checkClock(t, fmt.Sprintf("Ratio(%d, %d)", num, den), r)
		} else if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
			t.Fatalf("Ratio(%d, %d): error %q is not one line", num, den, msg)
		}
	})
}

func checkClock(t *testing.T, what string, c clock.Clock) {
	t.Helper()
	if !c.Valid() {
		t.Fatalf("%s: an invalid clock without an error", what)
	}
	num, den := c.Hz()
	if g := new(big.Int).GCD(nil, nil, new(big.Int).SetUint64(num), new(big.Int).SetUint64(den)); g.Cmp(big.NewInt(1)) != 0 {
		t.Fatalf("%s: %d/%d Hz is not in lowest terms", what, num, den)
	}
	if e1 := c.TimeOf(1); e1 < 1 || c.TimeOf(0) != 0 || c.Period() < 1 {
		t.Fatalf("%s: edge 0 at %d, edge 1 at %d ps, period %d", what, c.TimeOf(0), e1, c.Period())
	}
	exact := fmt.Sprintf("%d/%d Hz", num, den)
	back, err := clock.ParseFreq(exact)
	if err != nil {
		t.Fatalf("%s: %q is refused: %v", what, exact, err)
	}
	if n2, d2 := back.Hz(); n2 != num || d2 != den {
		t.Fatalf("%s: %q parses as %d/%d Hz", what, exact, n2, d2)
	}
	str := c.String()
	near, err := clock.ParseFreq(str)
	if err != nil {
		t.Fatalf("%s (%s) is written %q, which ParseFreq refuses: %v", what, exact, str, err)
	}
	// String prints six decimals of the largest unit not above the
	// frequency, a relative error of at most 5e-7.
	if want, got := c.HzFloat(), near.HzFloat(); math.Abs(got-want) > 5.000001e-7*want {
		t.Fatalf("%s (%s) is written %q, which parses as %g Hz", what, exact, str, got)
	}
}
