package clock

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"strings"
)

// Cycle counts the rising edges of one clock. Edge n of a clock happens at
// Clock.TimeOf(n); edge 0 is at time 0.
type Cycle uint64

// A Clock is a free-running clock of a rational frequency num/den Hz whose
// edge 0 is at time 0. A rational frequency lets a 33.33 MHz PCI clock
// (100e6/3 Hz) have an exact 30000 ps period. Edges of clocks whose periods
// are not whole picoseconds are placed on the next whole picosecond
// (TimeOf rounds up), so two clocks that share an edge in exact arithmetic
// share it in Time too. All arithmetic is integer: there is no float drift.
//
// The zero Clock is invalid; build one with Hz, Ratio or ParseFreq.
type Clock struct {
	num, den uint64 // frequency = num/den Hz, in lowest terms
	periodPS uint64 // period in ps when it is whole, else 0
}

const psPerSecond = uint64(Second)

// Hz returns a clock of hz cycles per second. It panics if hz is zero; use
// Ratio or ParseFreq for values that come from users.
func Hz(hz uint64) Clock {
	c, err := Ratio(hz, 1)
	if err != nil {
		panic(err)
	}
	return c
}

// MHz returns a clock of a whole number of megahertz.
func MHz(mhz uint64) Clock { return Hz(mhz * 1_000_000) }

// Ratio returns a clock of num/den Hz, e.g. Ratio(100_000_000, 3) for the
// 33.33 MHz PCI clock. The frequency must be at least 1 Hz and at most
// 1 THz (a period of at least one picosecond). The lower bound keeps a
// clock's edges representable (a period of at most a second gives
// millions of edges within Time's range; a 1e-9 Hz clock's first edge
// already lies beyond it) and String exact to its six decimals.
func Ratio(num, den uint64) (Clock, error) {
	if num == 0 || den == 0 {
		return Clock{}, errors.New("clock frequency must be positive")
	}
	g := gcd(num, den)
	num, den = num/g, den/g
	if num < den {
		return Clock{}, fmt.Errorf("clock frequency %d/%d Hz is below 1 Hz", num, den)
	}
	// period = den*1e12/num ps; it must be at least 1 ps.
	hi, lo := bits.Mul64(den, psPerSecond)
	if hi == 0 && lo < num {
		return Clock{}, fmt.Errorf("clock frequency %d/%d Hz is above 1 THz", num, den)
	}
	c := Clock{num: num, den: den}
	if hi < num {
		q, r := bits.Div64(hi, lo, num)
		if r == 0 {
			c.periodPS = q
		}
	}
	return c, nil
}

// ParseFreq parses a frequency such as "33MHz", "12.5 MHz", "100/3 MHz",
// "1.28GHz" or "33000000" (plain hertz). Decimal fractions are exact.
func ParseFreq(s string) (Clock, error) {
	t := strings.TrimSpace(s)
	mult := big.NewRat(1, 1)
	lower := strings.ToLower(t)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"ghz", 1e9}, {"mhz", 1e6}, {"khz", 1e3}, {"hz", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			mult.SetInt64(u.m)
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			break
		}
	}
	v, ok := new(big.Rat).SetString(t)
	if !ok || t == "" {
		return Clock{}, fmt.Errorf("malformed frequency %q (want e.g. \"33MHz\" or \"100/3MHz\")", s)
	}
	v.Mul(v, mult)
	if v.Sign() <= 0 {
		return Clock{}, fmt.Errorf("frequency %q must be positive", s)
	}
	if !v.Num().IsUint64() || !v.Denom().IsUint64() {
		return Clock{}, fmt.Errorf("frequency %q is out of range", s)
	}
	c, err := Ratio(v.Num().Uint64(), v.Denom().Uint64())
	if err != nil {
		return Clock{}, fmt.Errorf("frequency %q: %w", s, err)
	}
	return c, nil
}

// Valid reports whether the clock was built by a constructor.
func (c Clock) Valid() bool { return c.num != 0 }

// Hz returns the frequency num/den in hertz.
func (c Clock) Hz() (num, den uint64) { return c.num, c.den }

// HzFloat returns the frequency in hertz as a float, for reports only.
func (c Clock) HzFloat() float64 { return float64(c.num) / float64(c.den) }

// String formats the frequency, e.g. "33.333333MHz".
func (c Clock) String() string {
	if !c.Valid() {
		return "invalid clock"
	}
	hz := c.HzFloat()
	switch {
	case hz >= 1e9:
		return trimFloat(hz/1e9) + "GHz"
	case hz >= 1e6:
		return trimFloat(hz/1e6) + "MHz"
	case hz >= 1e3:
		return trimFloat(hz/1e3) + "kHz"
	}
	return trimFloat(hz) + "Hz"
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.6f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Period returns the clock period rounded to the nearest picosecond. Use it
// for display; use TimeOf for edge times.
func (c Clock) Period() Time {
	if c.periodPS != 0 {
		return Time(c.periodPS)
	}
	return c.TimeOf(1000) / 1000
}

// TimeOf returns the time of edge n: ceil(n * den * 1e12 / num) ps.
func (c Clock) TimeOf(n Cycle) Time {
	if c.periodPS != 0 { // the common case, small enough to inline
		return Time(uint64(n) * c.periodPS)
	}
	return c.timeOfRational(n)
}

func (c Clock) timeOfRational(n Cycle) Time {
	// n*den*1e12 as a 128-bit value, then ceiling division by num.
	hi, lo := bits.Mul64(uint64(n), c.den)
	if hi != 0 {
		panic("clock: cycle count out of range")
	}
	hi, lo = bits.Mul64(lo, psPerSecond)
	if hi >= c.num {
		panic("clock: cycle count out of range")
	}
	q, r := bits.Div64(hi, lo, c.num)
	if r != 0 {
		q++
	}
	return Time(q)
}

// CycleAt returns the number of the last edge at or before t (0 for t <= 0).
func (c Clock) CycleAt(t Time) Cycle {
	if c.periodPS != 0 && t > 0 { // the common case, small enough to inline
		return Cycle(uint64(t) / c.periodPS)
	}
	return c.cycleAtSlow(t)
}

func (c Clock) cycleAtSlow(t Time) Cycle {
	if t <= 0 {
		return 0
	}
	// floor(t*num / (den*1e12)), computed so that CycleAt(TimeOf(n)) == n.
	hi, lo := bits.Mul64(uint64(t), c.num)
	dhi, dlo := bits.Mul64(c.den, psPerSecond)
	if dhi != 0 {
		// den*1e12 does not fit in 64 bits: only for absurdly slow clocks.
		q := new(big.Int).Mul(big.NewInt(int64(t)), new(big.Int).SetUint64(c.num))
		d := new(big.Int).Mul(new(big.Int).SetUint64(c.den), new(big.Int).SetUint64(psPerSecond))
		return Cycle(q.Quo(q, d).Uint64())
	}
	if hi >= dlo {
		panic("clock: time out of range")
	}
	// With P the exact period, TimeOf(n) = ceil(n*P) and every t in
	// [TimeOf(n), TimeOf(n+1)) satisfies n <= t/P < n+1, so floor(t/P) is
	// exactly the edge at or before t.
	q, _ := bits.Div64(hi, lo, dlo)
	return Cycle(q)
}

// NextEdge returns the time of the first edge strictly after t. A register
// written at t is seen by this clock at NextEdge(t).
func (c Clock) NextEdge(t Time) Time {
	if t < 0 {
		return 0
	}
	return c.TimeOf(c.CycleAt(t) + 1)
}

// EdgeAtOrAfter returns t if t is an edge of this clock, else NextEdge(t).
func (c Clock) EdgeAtOrAfter(t Time) Time {
	if t <= 0 {
		return 0
	}
	e := c.TimeOf(c.CycleAt(t))
	if e == t {
		return t
	}
	return c.NextEdge(t)
}

// IsEdge reports whether t is an edge of this clock.
func (c Clock) IsEdge(t Time) bool { return t >= 0 && c.TimeOf(c.CycleAt(t)) == t }

// After returns the time of the edge n cycles after the edge at or before t.
func (c Clock) After(t Time, n Cycle) Time { return c.TimeOf(c.CycleAt(t) + n) }

// Cycles converts a duration to a whole number of cycles, rounding up: the
// number of cycles a delay of d occupies on this clock.
func (c Clock) Cycles(d Time) Cycle {
	if d <= 0 {
		return 0
	}
	n := c.CycleAt(d)
	if c.TimeOf(n) < d {
		n++
	}
	return n
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
