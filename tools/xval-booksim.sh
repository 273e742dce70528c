#!/usr/bin/env bash
# xval-booksim.sh: nisim's 8x8 mesh against BookSim 2 on the same machine,
# same simulated cycles, runs alternating (make xval-booksim BOOKSIM=...).
#
# For each injection rate (flits/node/cycle) it runs BookSim's own example
# src/examples/mesh88_lat with uniform traffic and nisim's `run mesh` with
# the same configuration (verify/scenario/noc/testdata/mesh88_lat.toml, the
# same example written down in nisim), ROUNDS times in the order BookSim,
# nisim, BookSim, nisim, ..., timing each run by the wall clock, and prints
# per rate: the cycles each simulated, the latencies each reported, the
# wall seconds and router-cycles per second (64 routers x simulated cycles /
# wall seconds) with min/median/max over the rounds, and the ratio nisim /
# BookSim router-cycles per second of each round's adjacent pair, with
# min/median/max. Everything but the times is deterministic: both programs
# run the same seed every round, and the script fails if a round reports
# other latencies than the first.
#
# Equal cycles: both warm up for WARMUP_PERIODS x SAMPLE_PERIOD cycles and
# measure for 3 x SAMPLE_PERIOD, then drain the measured packets (traffic
# continuing) and empty the network (traffic stopped). BookSim's latency
# mode measures until three consecutive periods change latency and
# throughput by less than stopping_thres / acc_stopping_thres (up to
# max_samples periods in all); with both thresholds negative every period
# counts as converged, so it measures exactly 3 periods. The script checks
# that BookSim warmed up for exactly WARMUP_PERIODS x SAMPLE_PERIOD cycles
# and ran WARMUP_PERIODS + 3 periods, and prints the cycle at which each
# program finished (BookSim's "Time taken", nisim's last delivery, read
# from one extra untimed nisim run with --trace): they differ only by the
# drains, by a few hundred cycles.
#
# Environment (make passes them through):
#   BOOKSIM         the BookSim 2 binary (required)
#   BOOKSIM_CONFIG  its mesh88_lat (default: examples/mesh88_lat beside BOOKSIM)
#   NISIM           the nisim binary (default bin/nisim)
#   RATES           injection rates, flits/node/cycle (default "0.01 0.05 0.30 0.40")
#   ROUNDS          alternating rounds per rate (default 3)
#   SAMPLE_PERIOD   cycles per sample period (default 10000)
#   WARMUP_PERIODS  warm-up periods, at least 1 (default 3; BookSim's 0 means
#                   "until converged", which would not be a fixed count)
#   SEED            the seed both programs run (default 1)
#   DRAIN_LIMIT     nisim's drain limit in cycles (default 100000)
#
# Exit status: 0 when every run completed, 1 when a run failed or reported
# something inconsistent, 2 on bad usage (BOOKSIM unset or not executable,
# no nisim binary, a bad parameter).
set -euo pipefail

die() { echo "xval-booksim: $*" >&2; exit 2; }
fail() { echo "xval-booksim: $*" >&2; exit 1; }

[ -n "${BOOKSIM:-}" ] || die "BOOKSIM is not set: make xval-booksim BOOKSIM=path/to/booksim (a BookSim 2 build, github.com/booksim/booksim2, src/booksim)"
[ -f "$BOOKSIM" ] && [ -x "$BOOKSIM" ] || die "BOOKSIM=$BOOKSIM is not an executable file"
BOOKSIM_CONFIG=${BOOKSIM_CONFIG:-$(dirname "$BOOKSIM")/examples/mesh88_lat}
[ -f "$BOOKSIM_CONFIG" ] || die "BOOKSIM_CONFIG=$BOOKSIM_CONFIG: no such file (BookSim's src/examples/mesh88_lat)"
NISIM=${NISIM:-bin/nisim}
[ -f "$NISIM" ] && [ -x "$NISIM" ] || die "NISIM=$NISIM is not an executable file (make build)"
NISIM_CONFIG=verify/scenario/noc/testdata/mesh88_lat.toml
[ -f "$NISIM_CONFIG" ] || die "$NISIM_CONFIG: no such file (run from the repository's root)"
RATES=${RATES:-0.01 0.05 0.30 0.40}
ROUNDS=${ROUNDS:-3}
SAMPLE_PERIOD=${SAMPLE_PERIOD:-10000}
WARMUP_PERIODS=${WARMUP_PERIODS:-3}
SEED=${SEED:-1}
DRAIN_LIMIT=${DRAIN_LIMIT:-100000}
MEASURE_PERIODS=3 # fixed: see "Equal cycles" above
posint() { [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "$1=$2: want a positive integer"; }
posint ROUNDS "$ROUNDS"
posint SAMPLE_PERIOD "$SAMPLE_PERIOD"
posint WARMUP_PERIODS "$WARMUP_PERIODS"
posint DRAIN_LIMIT "$DRAIN_LIMIT"
[[ "$SEED" =~ ^[0-9]+$ ]] || die "SEED=$SEED: want a non-negative integer"
[ -n "$RATES" ] || die "RATES is empty"
for r in $RATES; do
	[[ "$r" =~ ^(0?\.[0-9]+|1(\.0*)?)$ ]] && awk -v r="$r" 'BEGIN{exit !(r > 0)}' ||
		die "RATES: $r is not a rate in (0, 1] flits/node/cycle"
done
WINDOW=$(( (WARMUP_PERIODS + MEASURE_PERIODS) * SAMPLE_PERIOD ))

tmp=$(mktemp -d /tmp/xval-booksim.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# now_ns: the wall clock in nanoseconds.
now_ns() { date +%s%N; }

# CPU time (user + system) as well where GNU time is installed: Go's garbage
# collector runs on other threads, so nisim may use more than one core while
# BookSim uses one; the CPU seconds show how much (informative; the ratios
# are by the wall clock).
GNUTIME=""
if [ -x /usr/bin/time ] && /usr/bin/time -f '%U' -o /dev/null true 2>/dev/null; then
	GNUTIME=/usr/bin/time
fi
# timed CPUFILE CMD...: runs CMD, writing its user + system seconds to CPUFILE.
timed() {
	local f=$1
	shift
	if [ -n "$GNUTIME" ]; then
		"$GNUTIME" -f '%U %S' -o "$f" "$@"
	else
		echo "- -" >"$f"
		"$@"
	fi
}

# booksim_run RATE OUT: one BookSim run; prints its wall seconds.
booksim_run() {
	local t0 t1
	t0=$(now_ns)
	# BookSim exits with 255 (-1) after a successful run and 0 after an
	# unstable one, so its output, not its status, tells (checked below).
	timed "$2.cpu" "$BOOKSIM" "$BOOKSIM_CONFIG" traffic=uniform injection_rate_uses_flits=1 injection_rate="$1" \
		sample_period="$SAMPLE_PERIOD" warmup_periods="$WARMUP_PERIODS" \
		max_samples=$((WARMUP_PERIODS + MEASURE_PERIODS)) stopping_thres=-1.0 acc_stopping_thres=-1.0 \
		seed="$SEED" >"$2" 2>&1 || true
	t1=$(now_ns)
	awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", (b-a)/1e9}'
}

# nisim_args RATE: the nisim command's arguments for RATE.
nisim_args() {
	echo run mesh --config "$NISIM_CONFIG" --set traffic=uniform --set injection_rate_uses_flits=true \
		--set injection_rate="$1" --set sample_period="$SAMPLE_PERIOD" --set warmup_periods="$WARMUP_PERIODS" \
		--set measure_periods="$MEASURE_PERIODS" --set drain_limit="$DRAIN_LIMIT" --seed "$SEED" --progress=false
}

# nisim_run RATE OUT: one nisim run (the report to OUT); prints its wall seconds.
nisim_run() {
	local t0 t1 rc=0
	t0=$(now_ns)
	# shellcheck disable=SC2046 # nisim_args is a list of plain words
	timed "$2.cpu" "$NISIM" $(nisim_args "$1") >"$2" 2>&1 || rc=$?
	t1=$(now_ns)
	[ "$rc" -eq 0 ] || { cat "$2" >&2; fail "nisim failed at rate $1 (exit $rc)"; }
	awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f\n", (b-a)/1e9}'
}

# booksim_figures OUT RATE: "cycles packet network flit hops accepted" of a
# BookSim run, after checking it warmed up and measured for the fixed window.
booksim_figures() {
	grep -q '^Time taken is ' "$1" && ! grep -q 'Simulation unstable' "$1" ||
		{ tail -20 "$1" >&2; fail "BookSim did not complete at rate $2 (output above)"; }
	local warm periods
	warm=$(sed -n 's/^Warmed up \.\.\.Time used is \([0-9]*\) cycles$/\1/p' "$1")
	[ "$warm" = $((WARMUP_PERIODS * SAMPLE_PERIOD)) ] ||
		fail "BookSim at rate $2 warmed up for ${warm:-?} cycles, not $((WARMUP_PERIODS * SAMPLE_PERIOD))"
	periods=$(grep -c '^latency change' "$1")
	[ "$periods" = $((WARMUP_PERIODS + MEASURE_PERIODS)) ] ||
		fail "BookSim at rate $2 ran $periods sample periods, not $((WARMUP_PERIODS + MEASURE_PERIODS))"
	awk '
		/^Time taken is / { cyc = $4 }
		/^====== Overall Traffic Statistics/ { overall = 1 }
		overall && /^Packet latency average = / { pl = $5 }
		overall && /^Network latency average = / { nl = $5 }
		overall && /^Flit latency average = / { fl = $5 }
		overall && /^Hops average = / { h = $4 }
		overall && /^Accepted flit rate average = / { a = $6 }
		END { printf "%d %.2f %.2f %.2f %.3f %.4f\n", cyc, pl, nl, fl, h, a }' "$1"
}

# nisim_figures OUT RATE: "packet network flit hops accepted" of a nisim
# report (its text table: latencies to 0.1 cycle).
nisim_figures() {
	grep -q '^PASS  drained' "$1" ||
		{ cat "$1" >&2; fail "nisim did not drain at rate $2 (report above)"; }
	awk '
		/^packet latency, mean/ { pl = $7 }
		/^network latency, mean/ { nl = $4 }
		/^flit latency, mean/ { fl = $4 }
		/^switches crossed, mean/ { h = $7 }
		/^offered \/ accepted/ { a = $7 }
		END { printf "%.1f %.1f %.1f %.2f %.4f\n", pl, nl, fl, h, a }' "$1"
}

# nisim_cycles RATE: the cycle of nisim's last delivery (when its network
# emptied; later no-op wake-ups of idle terminals do no work), from an
# untimed run with the transaction trace.
nisim_cycles() {
	# shellcheck disable=SC2046
	"$NISIM" $(nisim_args "$1") --trace - 2>/dev/null | awk '$4 == "net.deliver" { c = $2 } END { print c + 0 }'
}

# stats FORMAT: "min median max" of the numbers on standard input, each
# printed with the printf FORMAT.
stats() {
	sort -g | awk -v f="$1" '{ v[NR] = $1 }
		END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf f " " f " " f "\n", v[1], m, v[NR] }'
}

echo "nisim 8x8 mesh vs BookSim 2 mesh88_lat, uniform traffic, seed $SEED, $ROUNDS alternating rounds per rate"
echo "window: $WARMUP_PERIODS x $SAMPLE_PERIOD cycles warm-up + $MEASURE_PERIODS x $SAMPLE_PERIOD measured = $WINDOW cycles, then the drain"
echo "BookSim: $BOOKSIM $BOOKSIM_CONFIG traffic=uniform injection_rate_uses_flits=1 injection_rate=R sample_period=$SAMPLE_PERIOD warmup_periods=$WARMUP_PERIODS max_samples=$((WARMUP_PERIODS + MEASURE_PERIODS)) stopping_thres=-1.0 acc_stopping_thres=-1.0 seed=$SEED"
echo "nisim:   $NISIM $(nisim_args R)"
echo

summary="$tmp/summary"
: >"$summary"
for r in $RATES; do
	ncyc=$(nisim_cycles "$r")
	[ "$ncyc" -ge "$WINDOW" ] || fail "nisim at rate $r: last delivery at cycle $ncyc, before the window's end ($WINDOW)"
	bfig0="" nfig0=""
	: >"$tmp/b.s"; : >"$tmp/n.s"; : >"$tmp/b.rc"; : >"$tmp/n.rc"; : >"$tmp/ratio"; : >"$tmp/b.cpu"; : >"$tmp/n.cpu"
	for i in $(seq 1 "$ROUNDS"); do
		bs=$(booksim_run "$r" "$tmp/b.out")
		bfig=$(booksim_figures "$tmp/b.out" "$r")
		ns=$(nisim_run "$r" "$tmp/n.out")
		nfig=$(nisim_figures "$tmp/n.out" "$r")
		[ -z "$bfig0" ] && bfig0=$bfig && nfig0=$nfig
		[ "$bfig" = "$bfig0" ] || fail "BookSim at rate $r: round $i reported '$bfig', round 1 '$bfig0' (same seed)"
		[ "$nfig" = "$nfig0" ] || fail "nisim at rate $r: round $i reported '$nfig', round 1 '$nfig0' (same seed)"
		bcyc=${bfig%% *}
		echo "$bs" >>"$tmp/b.s"
		echo "$ns" >>"$tmp/n.s"
		# The last line: GNU time writes "Command exited with non-zero
		# status 255" before BookSim's times.
		awk 'END { if ($1 == "-") print "-"; else printf "%.2f\n", $1 + $2 }' "$tmp/b.out.cpu" >>"$tmp/b.cpu"
		awk 'END { if ($1 == "-") print "-"; else printf "%.2f\n", $1 + $2 }' "$tmp/n.out.cpu" >>"$tmp/n.cpu"
		awk -v c="$bcyc" -v s="$bs" 'BEGIN{printf "%.6g\n", 64 * c / s}' >>"$tmp/b.rc"
		awk -v c="$ncyc" -v s="$ns" 'BEGIN{printf "%.6g\n", 64 * c / s}' >>"$tmp/n.rc"
		awk -v bc="$bcyc" -v bs="$bs" -v nc="$ncyc" -v ns="$ns" 'BEGIN{printf "%.4f\n", (64 * nc / ns) / (64 * bc / bs)}' >>"$tmp/ratio"
	done
	read -r bcyc bpl bnl bfl bh ba <<<"$bfig0"
	read -r npl nnl nfl nh na <<<"$nfig0"
	read -r bs1 bs2 bs3 < <(stats %.2f <"$tmp/b.s")
	read -r ns1 ns2 ns3 < <(stats %.2f <"$tmp/n.s")
	read -r brc1 brc2 brc3 < <(stats %.4g <"$tmp/b.rc")
	read -r nrc1 nrc2 nrc3 < <(stats %.4g <"$tmp/n.rc")
	read -r q1 q2 q3 < <(stats %.2f <"$tmp/ratio")
	bcpu="-" ncpu="-"
	if [ -n "$GNUTIME" ]; then
		bcpu=$(stats %.2f <"$tmp/b.cpu" | awk '{ print $2 }')
		ncpu=$(stats %.2f <"$tmp/n.cpu" | awk '{ print $2 }')
	fi
	echo "rate $r flits/node/cycle"
	printf "  %-34s %20s %20s\n" "" BookSim nisim
	printf "  %-34s %20s %20s\n" "cycles simulated (to empty)" "$bcyc" "$ncyc"
	printf "  %-34s %20s %20s\n" "packet latency, mean (cycles)" "$bpl" "$npl"
	printf "  %-34s %20s %20s\n" "network latency, mean (cycles)" "$bnl" "$nnl"
	printf "  %-34s %20s %20s\n" "flit latency, mean (cycles)" "$bfl" "$nfl"
	printf "  %-34s %20s %20s\n" "hops, mean" "$bh" "$nh"
	printf "  %-34s %20s %20s\n" "accepted flits/node/cycle" "$ba" "$na"
	printf "  %-34s %20s %20s\n" "wall s, min / median / max" "$bs1 / $bs2 / $bs3" "$ns1 / $ns2 / $ns3"
	printf "  %-34s %20s %20s\n" "CPU s (user + system), median" "$bcpu" "$ncpu"
	printf "  %-34s %20s %20s\n" "router-cycles/s, median" "$(awk -v v="$brc2" 'BEGIN{printf "%.3gM", v/1e6}')" "$(awk -v v="$nrc2" 'BEGIN{printf "%.3gM", v/1e6}')"
	printf "  %-34s %s / %s / %s  (rounds: %s)\n" "nisim / BookSim router-cycles/s" \
		"$q1" "$q2" "$q3" "$(paste -sd' ' "$tmp/ratio" | awk '{for(i=1;i<=NF;i++) printf "%s%.2f", (i>1?" ":""), $i}')"
	echo
	printf "| %s | %s / %s | %s / %s / %s | %s / %s / %s | %s / %s / %s | %s / %s | %s / %s | %s / %s | %s / %s |\n" \
		"$r" "$bcyc" "$ncyc" "$bs1" "$bs2" "$bs3" "$ns1" "$ns2" "$ns3" "$q1" "$q2" "$q3" "$bcpu" "$ncpu" "$bpl" "$npl" "$bnl" "$nnl" "$bfl" "$nfl" >>"$summary"
done

echo "summary (markdown; times in wall seconds min / median / max over the rounds, ratio = nisim / BookSim router-cycles/s of each round's pair)"
echo
echo "| rate | cycles BookSim / nisim | BookSim s | nisim s | ratio min / median / max | CPU s B / n, median | packet latency B / n | network latency B / n | flit latency B / n |"
echo "|---|---|---|---|---|---|---|---|---|"
cat "$summary"
