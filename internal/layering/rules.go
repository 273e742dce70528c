// Package layering writes down which packages of nisim may import which,
// as one table of rules with a reason each (Rules), and checks an import
// graph against it (Check). It also checks every Go file for two imported
// packages of the same name, or an imported package named like the file's
// own package (CheckNames): issue 11 section 4 («no two packages that a
// file imports together share a name»).
//
// The package's test loads the real graph with `go list` and fails on a
// forbidden edge, listing the offenders with the rule and its reason; the
// README's package map summarises this table, which is the source.
package layering

// Rule is one line of the table: the importers it applies to (Packages,
// minus Except) may not import what Forbid matches (unless Permit matches
// it too), or, when Only is set, may import no package of the module that
// Only does not match. Patterns are paths relative to the module: "x"
// matches the package x, "x/..." matches x and every package below it.
// Standard-library and third-party imports are never judged.
type Rule struct {
	// Name is the rule as the issue states it.
	Name string
	// Packages and Except choose the importers.
	Packages, Except []string
	// Forbid and Permit choose the refused imports (when Only is empty).
	Forbid, Permit []string
	// Only, when not empty, lists everything of the module the importers
	// may import (their own subtree is not implied).
	Only []string
	// Tests applies the rule to the imports of the importers' test files
	// too; otherwise only to the packages as built.
	Tests bool
	// Reason is the one line that says why.
	Reason string
}

// The layers, as patterns.
var (
	// systemPkgs are everything that is not a shared block: boards, host
	// stacks and hardware, firmware, networks, and what assembles them.
	systemPkgs = []string{"hib/...", "lanai/...", "mcadapter/...", "host/...", "firmware/...", "switch/...",
		"verify/scenario/...", "verify/testbench/...", "verify/regress/...", "verify/jobs/...", "cmd/..."}
	// hostHardware are the host packages that are hardware: the CPU
	// model, the memory system, the platform presets.
	hostHardware = []string{"host/cpu", "host/memsys", "host/platform"}
	// boards are the network interface boards.
	boards = []string{"hib/...", "lanai/...", "mcadapter/..."}
	// hardware is every clocked model: shared blocks, boards, networks
	// and the host's hardware.
	hardware = append(append([]string{"rtl/...", "switch/..."}, boards...), hostHardware...)
	// software is what runs on the hardware or drives it: host stacks,
	// firmware programs (not the framework), scenarios, testbenches, the
	// regression tier, the job runner and the command line.
	software = []string{"host/...", "firmware/...", "verify/scenario/...", "verify/testbench/...", "verify/regress/...", "verify/jobs/...", "cmd/..."}
	// softwareExempt are the packages under software's patterns that are
	// not software: the host's hardware and the firmware framework, which
	// is the NI's execution model (a card runs any firmware.Program), and
	// the scenario framework is checked by its own rule.
	softwareExempt = append([]string{"firmware"}, hostHardware...)
	// verification are the checking libraries every model uses.
	verification = []string{"verify/trace", "verify/check", "verify/scoreboard", "verify/coverage"}
	// assemblers are the only places whole systems are put together and
	// run.
	assemblers = []string{"verify/testbench/...", "verify/scenario/...", "verify/regress/...", "cmd/..."}
)

// Rules is the layering of nisim (issue 11 section 4).
var Rules = []Rule{
	{
		Name:     "rtl/ imports no system package",
		Packages: []string{"rtl/..."},
		Forbid:   systemPkgs,
		Reason:   "shared blocks are reused by every board; one that knew a board, host, program, network or testbench could not be, and would hide system behaviour in a library",
	},
	{
		Name:     "boards import no host stack, firmware program, scenario or testbench",
		Packages: boards,
		Forbid:   []string{"host/...", "firmware/...", "verify/scenario/...", "verify/testbench/...", "verify/regress/...", "verify/jobs/...", "cmd/..."},
		Permit:   softwareExempt,
		Reason:   "a board is hardware: the stack and the program that run on it are chosen by the testbench that builds the system, never by the board",
	},
	{
		Name:     "firmware programs import only firmware/ and rtl/ (and internal/, waves)",
		Packages: []string{"firmware/..."},
		Except:   []string{"firmware"},
		Only:     []string{"firmware/...", "rtl/...", "internal/...", "waves"},
		Reason:   "a control program sees the card only through the framework (firmware.NI, Ctx), so it runs on any card that implements it; exceptions: internal/ holds plain data structures (firmware/lci's queues) and waves the signals a program declares (firmware/lci's)",
	},
	{
		Name:     "hardware never imports software",
		Packages: append([]string{"firmware"}, hardware...),
		Forbid:   software,
		Permit:   softwareExempt,
		Reason:   "timing must emerge from the models: hardware that called into a stack, a program or a scenario would take its behaviour from them (the firmware framework counts as hardware here: it is the card's execution model, which lanai imports)",
	},
	{
		Name:     "verification libraries import nothing above rtl/clock and waves",
		Packages: verification,
		Only:     append([]string{"rtl/clock", "waves", "internal/..."}, verification...),
		Reason:   "rtl/env and every component use the checkers and the trace recorder; anything they imported above the clock would be a cycle or tie them to one model",
	},
	{
		Name:     "waves imports no hardware",
		Packages: []string{"waves/..."},
		Only:     []string{"rtl/clock", "waves/...", "internal/..."},
		Reason:   "every component declares its signals in waves, so waves may depend on none of them (only on integer-picosecond time)",
	},
	{
		Name:     "only testbenches, scenarios, the regression tier and the command line import a testbench",
		Packages: []string{"..."},
		Except:   assemblers,
		Forbid:   []string{"verify/testbench/..."},
		Tests:    true,
		Reason:   "whole systems are assembled once, in verify/testbench/<system>; a board, stack or program (or its tests) that used one would depend on the whole system and keep whole-system tests out of the testbench",
	},
	{
		Name:     "scenarios import no network package but the traffic and statistics libraries",
		Packages: []string{"verify/scenario/..."},
		Except:   []string{"verify/scenario"},
		Forbid:   []string{"switch/..."},
		Permit:   []string{"switch/traffic", "switch/stats"},
		Tests:    true,
		Reason:   "a scenario gets its network built and run by a testbench (verify/testbench/noctb) and keeps parameters, report and verdicts; switch/traffic (patterns, injection, trace files) and switch/stats (latency statistics) build no hardware",
	},
	{
		Name:     "the job runner imports only the scenario framework, rtl/env and internal/",
		Packages: []string{"verify/jobs/..."},
		Only:     []string{"verify/scenario", "rtl/env", "rtl/clock", "internal/..."},
		Reason:   "a job runs any scenario by name from the catalog its caller passes (the command line's), so one manifest format serves every system, sweeps and regressions alike; a scenario or testbench imported here would tie the format to one system",
	},
	{
		Name:     "only scenarios, the regression tier and the command line import a scenario",
		Packages: []string{"..."},
		Except:   []string{"verify/scenario/...", "verify/regress/...", "cmd/..."},
		Forbid:   []string{"verify/scenario/..."},
		Permit:   []string{"verify/scenario"},
		Tests:    true,
		Reason:   "a scenario is the top of a system (parameters, report, checks against the paper): nothing below it may depend on one (the scenario framework, verify/scenario, is a library; hardware may not use it either)",
	},
}
