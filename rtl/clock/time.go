package clock

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/sarchlab/akita/v3/sim"
)

// Time is a simulated time in integer picoseconds. Everything nisim reports
// (traces, waveforms, statistics) is in Time or in Cycle, never in Akita's
// float seconds.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000 * Picosecond
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Never is a time later than any simulated time; it marks "not scheduled".
const Never Time = math.MaxInt64

// FromSim converts an Akita engine time (float seconds) to picoseconds. It is
// the only place in nisim that reads Akita's float time. Every event nisim
// schedules lies on an integer picosecond (see ToSim), so rounding recovers
// the exact value.
func FromSim(t sim.VTimeInSec) Time {
	return Time(math.Round(float64(t) * 1e12))
}

// ToSim converts a picosecond time to the float seconds Akita's engine orders
// events by. The conversion is a single correctly rounded division, so two
// equal picosecond times always give the same float and FromSim(ToSim(t)) == t
// for every t below about 100 days of simulated time.
func ToSim(t Time) sim.VTimeInSec {
	return sim.VTimeInSec(float64(t) / 1e12)
}

// String formats the time with the largest unit that keeps it exact, e.g.
// "30ns", "7518ps", "1.5us".
func (t Time) String() string {
	if t == Never {
		return "never"
	}
	units := []struct {
		d    Time
		name string
	}{{Second, "s"}, {Millisecond, "ms"}, {Microsecond, "us"}, {Nanosecond, "ns"}}
	for _, u := range units {
		if t != 0 && t%u.d == 0 {
			return strconv.FormatInt(int64(t/u.d), 10) + u.name
		}
	}
	if t >= Microsecond || t <= -Microsecond {
		return fmt.Sprintf("%.6gus", float64(t)/float64(Microsecond))
	}
	return strconv.FormatInt(int64(t), 10) + "ps"
}

// ParseTime parses a duration such as "30ns", "1.5us", "2ms", "7519ps" or a
// plain number of picoseconds. Fractions must come out to whole picoseconds.
func ParseTime(s string) (Time, error) {
	t := strings.TrimSpace(s)
	unit := Picosecond
	for _, u := range []struct {
		suffix string
		d      Time
	}{{"ps", Picosecond}, {"ns", Nanosecond}, {"us", Microsecond}, {"ms", Millisecond}, {"s", Second}} {
		if strings.HasSuffix(t, u.suffix) {
			unit = u.d
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			break
		}
	}
	v, ok := new(big.Rat).SetString(t)
	if !ok || t == "" || v.Sign() < 0 {
		return 0, fmt.Errorf("malformed time %q (want e.g. \"30ns\" or \"1.5us\")", s)
	}
	v.Mul(v, new(big.Rat).SetInt64(int64(unit)))
	if !v.IsInt() || !v.Num().IsInt64() {
		return 0, fmt.Errorf("time %q is not a whole number of picoseconds or is too large", s)
	}
	return Time(v.Num().Int64()), nil
}
