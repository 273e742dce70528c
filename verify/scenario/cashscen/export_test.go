package cashscen

import "github.com/nisim/nisim/verify/scenario"

// VarRun and VarResults are the variant runs' results, for the findings'
// specs.
type (
	VarRun     = varRun
	VarResults = varResults
)

// CheckFindings reports the findings on r (ran: the programs run).
func CheckFindings(r VarResults, ran []string) *scenario.Report {
	rep := &scenario.Report{}
	checkFindings(r, ran, rep)
	return rep
}
