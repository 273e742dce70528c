package cashscen

import "github.com/nisim/nisim/verify/scenario/mcscen"

// typicalReport is cashmere-report's typical wall time with the defaults
// (8:1, every program, the 1:1 runs and the costs): 115 s measured with
// /usr/bin/time on the 2-core machine shared with other jobs (load 2.4),
// 2026-11-28.
const typicalReport = "2 min"

// view is cashmere-report's waveform: the two-node cost run (section 3.1,
// Table 1) in the scenario's env, shown as mc-report's (the same cluster):
// node 0's CPU and PCI bus (the home), the hub, node 1's PCI bus and CPU
// (the faulting, twinning, diffing process).
var view = mcscen.View(0)
