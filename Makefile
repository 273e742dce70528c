# nisim: cycle-level models of 1990s cluster network interfaces.
# `make run` and `make test` work on a fresh machine with only Go installed.

GO       ?= go
NISIM    := bin/nisim
OUT      := out
PKGS     := ./...

.PHONY: help run test regress fuzz bench lint golden build clean slurm-check xval-booksim

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

build: ## build the nisim command into bin/
	$(GO) build -o $(NISIM) ./cmd/nisim

# The network scenarios make run reports on (paper vs model where the papers
# give figures), each with a waveform in out/.
NETWORKS := mesh myrinet-grid myrinet-clos atm-star mchub-star
# The Telegraphos scenarios make run reports on: section 3.2's measurements,
# model vs paper (the others: `bin/nisim list`).
TELEGRAPHOS := telegraphos-calibration
# The Myrinet/LCI reports: every figure of the LCI paper's microbenchmarks
# and of its parallel-programming-system layers (Tables V and VI), model vs
# paper, on both platforms, and section 7's applications at 64 nodes (QR
# with every variant; the whole matrix goes through the sweep path, see
# docs/lci-validation.md) (the others: `bin/nisim list`).
LCI := lci-report lci-pps lci-apps
# The Memory Channel report: section 2.1's network figures and 2.3's lock,
# model vs paper (docs/mc-validation.md).
MC := mc-report
# The Cashmere-2L report: section 3.1 / Table 1 costs and the programs'
# Table 3 statistics and speedups, model vs paper
# (docs/cashmere-validation.md).
CASH := cashmere-report
# The SHRIMP report: sections 4.1-4.5's figures, model vs paper
# (docs/shrimp-validation.md).
SHRIMP := shrimp-report
# The FORE ATM report: sections 2.3-3.1's figures (Tables 1-4), model vs
# paper (docs/atm-validation.md).
ATM := atm-report

run: build ## run the main job: the demo, the network scenarios, the Telegraphos calibration, the LCI (microbenchmarks, PPS layers and applications), Memory Channel, Cashmere-2L, SHRIMP and FORE ATM reports, with waveforms (and the demo's trace) in out/
	@mkdir -p $(OUT)
	$(NISIM) run demo --vcd $(OUT)/demo.vcd --trace $(OUT)/demo.trace
	$(NISIM) vcd lint $(OUT)/demo.vcd
	$(NISIM) trace diff verify/scenario/demo/testdata/demo.trace $(OUT)/demo.trace
	@for s in $(NETWORKS) $(TELEGRAPHOS) $(LCI) $(MC) $(CASH) $(SHRIMP) $(ATM); do \
		echo; echo "== $$s"; \
		$(NISIM) run $$s --vcd $(OUT)/$$s.vcd || exit 1; \
		$(NISIM) vcd lint $(OUT)/$$s.vcd || exit 1; \
	done

test: ## run every test suite (what CI runs)
	$(GO) test -count=1 $(PKGS)

# The regression tier: randomised runs of every system with every checker on,
# at least 10^6 transactions per system, as seeded jobs over all cores.
REGRESS_FLAGS ?=
regress: build ## run the long randomised regressions (>= 10^6 transactions per system, checkers on) with a summary table
	$(NISIM) regress $(REGRESS_FLAGS)

# A sweep as a Slurm job array on a real, private, single-node Slurm
# (tools/slurm-check.sh: installs Debian's slurm-wlm and munge if missing,
# so it needs root and apt; stops its daemons and removes its files at the
# end), compared byte for byte with the same sweep run locally.
slurm-check: build ## run a sweep as a Slurm job array plus merge on a private single-node Slurm (root; installs slurm-wlm, munge) and cmp it with a local sweep
	NISIM=$(NISIM) bash tools/slurm-check.sh

# Every Go fuzz target of the tree, one after the other, FUZZTIME each.
FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME each (default 30s; e.g. make fuzz FUZZTIME=10m)
	FUZZTIME=$(FUZZTIME) bash tools/fuzz.sh

bench: ## run the benchmarks and print a table of simulation rates
	@mkdir -p $(OUT)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS) > $(OUT)/bench.txt
	@$(GO) run ./internal/benchtable < $(OUT)/bench.txt

# nisim's 8x8 mesh against a BookSim 2 build on this machine
# (tools/xval-booksim.sh: same configuration and simulated cycles, runs
# alternating; RATES, ROUNDS, SAMPLE_PERIOD, WARMUP_PERIODS, SEED override
# its defaults). docs/booksim-crosscheck.md has a run's table.
BOOKSIM ?=
xval-booksim: build ## time nisim's 8x8 mesh against BookSim 2 (BOOKSIM=path/to/booksim), alternating runs; ratios with min/median/max
	BOOKSIM=$(BOOKSIM) NISIM=$(NISIM) bash tools/xval-booksim.sh

lint: ## check formatting (gofmt) and run go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

golden: ## regenerate the golden traces (never run by CI); review and explain the diff in the commit
	NISIM_UPDATE_GOLDEN=1 $(GO) test -count=1 $(PKGS) -ginkgo.label-filter=golden
	@git status --short -- '*testdata*' || true

clean: ## remove build and run outputs
	rm -rf bin $(OUT)
