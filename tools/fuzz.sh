#!/usr/bin/env bash
# Runs every Go fuzz target of the tree, one after the other, for FUZZTIME
# each (default 30s), with one worker (-parallel 1: the machine is shared),
# and prints one summary line per target: package, target, execs, new
# interesting inputs, result. A target that finds a crasher fails: its input
# is written under the package's testdata/fuzz/FuzzX/ (the path is printed),
# where `go test` replays it from then on as a regression seed; the script
# exits 1 if any target failed.
#
#   FUZZTIME=10m bash tools/fuzz.sh                 # every target, 10 minutes each
#   FUZZMATCH='clock|FuzzLink$' bash tools/fuzz.sh  # only "package.Target" matching the regex
#
# Each target's full output is kept in $FUZZLOG (default out/fuzz/), one
# file per target.
set -u -o pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
FUZZMATCH=${FUZZMATCH:-.}
FUZZLOG=${FUZZLOG:-out/fuzz}
mkdir -p "$FUZZLOG"

# The packages with a test file declaring a fuzz target, then the targets
# go test itself lists for them (so a commented-out or build-tagged one is
# not run).
pkgs=$($GO list -f '{{.ImportPath}} {{.Dir}}' ./... | while read -r pkg dir; do
	if grep -qs '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' "$dir"/*_test.go; then
		echo "$pkg"
	fi
done)
targets=()
for pkg in $pkgs; do
	list=$($GO test -list '^Fuzz' "$pkg") || { echo "fuzz.sh: cannot list the fuzz targets of $pkg" >&2; exit 2; }
	for name in $(echo "$list" | grep '^Fuzz'); do
		if [[ "$pkg.$name" =~ $FUZZMATCH ]]; then
			targets+=("$pkg $name")
		fi
	done
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "fuzz.sh: no fuzz target matches '$FUZZMATCH'" >&2
	exit 2
fi

echo "fuzzing ${#targets[@]} target(s) for $FUZZTIME each, one after the other (logs in $FUZZLOG/)"
failed=0
summary=()
for t in "${targets[@]}"; do
	read -r pkg name <<<"$t"
	log="$FUZZLOG/$(echo "$pkg" | tr '/' '_').$name.log"
	start=$(date +%s)
	$GO test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -parallel 1 "$pkg" >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
	newi=$(grep -o 'new interesting: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
	result=PASS
	extra=""
	if [ $rc -ne 0 ]; then
		result=FAIL
		failed=1
		crasher=$(grep -o 'testdata/fuzz/[^ ]*' "$log" | head -1)
		if [ -n "$crasher" ]; then
			extra="crasher $($GO list -f '{{.Dir}}' "$pkg")/$crasher"
		else
			extra="see $log: $(grep -m1 -E 'FAIL|panic|error' "$log")"
		fi
	fi
	line=$(printf '%-45s %-16s execs %10s  new interesting %5s  %4ss  %s %s' "$pkg" "$name" "${execs:-0}" "${newi:-0}" "$secs" "$result" "$extra")
	echo "$line"
	summary+=("$line")
done

echo
echo "summary ($FUZZTIME per target):"
printf '%s\n' "${summary[@]}"
if [ $failed -ne 0 ]; then
	echo "fuzz.sh: a target failed; a crasher stays in its testdata/fuzz directory as a regression seed once the cause is fixed" >&2
	exit 1
fi
