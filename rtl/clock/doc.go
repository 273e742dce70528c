// Package clock is nisim's time base: integer picoseconds (Time), cycle
// counts (Cycle), clocks of exact rational frequency (Clock) and the clocked
// component base every nisim block embeds (Ticking).
//
// Akita v3 keeps time as float64 seconds and computes tick times with float
// arithmetic, which can put two edges of "the same" cycle on different
// timestamps (Akita guide, section 1.1). nisim therefore computes every edge
// in integer picoseconds on one Clock, converts to Akita's float only when
// it schedules an event (ToSim) and back only in FromSim, the single place
// that reads Akita time. Reports use Time and Cycle, never floats.
package clock
