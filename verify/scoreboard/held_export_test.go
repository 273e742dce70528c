package scoreboard

// Held returns what s holds besides its counters and kept problems: the
// entries of its Expect-order list (pending items and paired ones not yet
// removed) and the keys with pending items.
func Held[T any](s *Scoreboard[T]) (order, keys int) { return len(s.order), len(s.byKey) }
