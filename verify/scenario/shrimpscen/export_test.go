package shrimpscen

// RadixBatch runs shrimp-report's Radix-VMMC runs at p's size and
// returns each run's result and error, in the report's order (for the
// spec that the goroutines' order changes nothing).
func RadixBatch(seed uint64, p *ReportParams) []any {
	var out []any
	for _, j := range startRadix(seed, p).wait() {
		out = append(out, j.res.Time, j.res.Sorted, j.res.Messages, j.res.Notifications, j.res.Busy, j.err)
	}
	return out
}
