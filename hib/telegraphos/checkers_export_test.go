package telegraphos

// Apply feeds c with node applying write origin#seq=v to word off of its
// copy: the checker fed by hand instead of by a HIB (Watch).
func (c *Coherence) Apply(node int, off uint32, origin int, seq uint64, v uint32) {
	c.applied(node, int(off%PageBytes), write{origin, seq, v})
}
