package check

// QueueLen returns the entries of c's send-order queue (outstanding keys
// and resolved ones not yet removed) and of its window of resolved keys:
// what the checker holds besides its counters.
func QueueLen[K comparable](c *Conservation[K]) (queue, window int) {
	return len(c.queue) - c.head, len(c.recent)
}
