#!/usr/bin/env bash
# Submits a planned nisim sweep or regression tier to Slurm: its jobs as a
# job array (sweep.sbatch, one task per job) and its merge (merge.sbatch) as
# a job that starts when every task has ended, failed ones included
# (--dependency=afterany). Prints the array's job id and the merge's, one a
# line, on stdout.
#
#   bin/nisim sweep mesh --grid injection_rate=0.05,0.1,0.2 --seeds 3 --plan /shared/s1
#   NISIM=$PWD/bin/nisim bash deploy/slurm/submit.sh /shared/s1 [sbatch options...]
#   # ... when the merge job has ended:
#   cat /shared/s1/logs/merge-*.out; ls /shared/s1/sweep.csv /shared/s1/sweep.svg
#
# A regression tier: `bin/nisim regress --plan /shared/r1`, then the same
# (the merge prints the tier's table into its log). Options after DIR go to
# both sbatch calls (--partition, --time, --account, ...). DIR must be on a
# file system every node sees; the logs go to DIR/logs/. nisim is $NISIM if
# set (sbatch passes the environment on), else the first nisim on PATH.
#
# The kind and the job count N come from `nisim job DIR --info` (which
# checks the manifest; jq is not needed). A plan of more jobs than the
# cluster's MaxArraySize is submitted as several arrays, task I of the one
# starting at OFFSET running job OFFSET+I; the merge waits for all.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() {
	echo "submit.sh: $*" >&2
	exit 2
}
[ $# -ge 1 ] || die "usage: submit.sh DIR [sbatch options...] (DIR: written by nisim sweep ... --plan DIR or nisim regress --plan DIR)"
DIR=$1
shift
[ -f "$DIR/manifest.json" ] || die "$DIR/manifest.json: no such file (plan first: nisim sweep ... --plan $DIR)"
DIR=$(cd "$DIR" && pwd) # the tasks may start in another directory

NISIM=${NISIM:-nisim}
info=$("$NISIM" job "$DIR" --info) || die "$NISIM job $DIR --info failed (above)"
read -r KIND N <<<"$info"
[[ $N =~ ^[0-9]+$ ]] && ((N > 0)) || die "$NISIM job $DIR --info printed '$info', want a kind and a job count"
case $KIND in
sweep | regress) ;;
*) die "$DIR/manifest.json: kind '${KIND}': this script merges sweep or regress plans" ;;
esac

# MaxArraySize (default 1001): an array's task ids are below it.
max=$(scontrol show config 2>/dev/null | sed -n 's/^MaxArraySize *= *\([0-9]*\).*/\1/p')
max=${max:-1001}
((max > 0)) || die "the cluster's MaxArraySize is $max: no job arrays"

mkdir -p "$DIR/logs"
ids=()
for ((off = 0; off < N; off += max)); do
	n=$((N - off < max ? N - off : max))
	id=$(sbatch --parsable --array=0-$((n - 1)) --output="$DIR/logs/job-%A_%a.out" \
		"$@" "$here/sweep.sbatch" "$DIR" "$off") ||
		die "sbatch of the array (jobs $off to $((off + n - 1))) failed"
	ids+=("${id%%;*}")
done
dep=$(
	IFS=:
	echo "${ids[*]}"
)
merge=$(sbatch --parsable --dependency=afterany:"$dep" --output="$DIR/logs/merge-%j.out" \
	"$@" "$here/merge.sbatch" "$DIR" "$KIND") || die "sbatch of the merge failed (arrays ${ids[*]} are submitted)"
echo "submit.sh: $KIND of $N jobs in $DIR: array(s) ${ids[*]}, merge ${merge%%;*} (logs in $DIR/logs/)" >&2
printf '%s\n' "${ids[@]}" "${merge%%;*}"
