#!/usr/bin/env bash
# slurm-check: proves that a nisim sweep runs as a job array on a real Slurm
# (issue 12 section 4). It
#
#   1. installs Debian's slurm-wlm and munge if slurmctld, slurmd, sbatch or
#      munged is missing (apt-get; needs root),
#   2. starts a private single-node cluster in a temporary directory: a munge
#      key and munged, a minimal slurm.conf (this host's CPUs and memory from
#      `slurmd -C`, one partition, no cgroups, no accounting, every state,
#      spool, log and pid file under the directory), slurmctld and slurmd
#      in the foreground in the background, and waits until sinfo shows the
#      node idle,
#   3. runs a smoke test: a 4-task array (`echo $SLURM_ARRAY_TASK_ID`) and a
#      job depending on it (afterany) that collects the tasks' output,
#   4. plans a small sweep with `nisim sweep ... --plan`, submits it with
#      deploy/slurm/submit.sh (the array of `nisim job` and the dependent
#      `nisim sweep merge`), waits for the merge, and compares the merged CSV
#      and SVG with a local `nisim sweep` of the same points byte for byte,
#   5. always (trap EXIT) cancels what it submitted, stops the daemons by
#      their pids and removes the directory.
#
# The check fails (exit 1) with a one-line reason and, for a cluster that
# does not come up or a job that fails, the daemons' logs. Nothing outside
# the temporary directory is configured: /etc/slurm and the system's munge
# are left alone, and the ports are SLURM_CHECK_PORT and SLURM_CHECK_PORT+1
# (default 16817 and 16818, not Slurm's own 6817/6818, so that a system
# Slurm on the same machine is not disturbed).
#
#   make slurm-check                       # builds bin/nisim first
#   NISIM=/tmp/nisim bash tools/slurm-check.sh
#   SLURM_CHECK_SMOKE_ONLY=1 bash tools/slurm-check.sh   # steps 1-3 and 5 only
#
# Environment: NISIM (default bin/nisim), SLURM_CHECK_TIMEOUT (seconds a
# batch of jobs may take, default 900), SLURM_CHECK_PORT, SLURM_CHECK_KEEP=1
# (keep the temporary directory for a post-mortem; the daemons still stop).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
NISIM=${NISIM:-$ROOT/bin/nisim}
TIMEOUT=${SLURM_CHECK_TIMEOUT:-900}
PORT=${SLURM_CHECK_PORT:-16817}

say() { echo "slurm-check: $*"; }
fail() {
	echo "slurm-check: FAIL: $*" >&2
	exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

T0=$(now)

# 1. Install what is missing (quietly: the log is printed only on failure).
need=()
for cmd in slurmctld slurmd sbatch sinfo scontrol scancel munged; do
	command -v "$cmd" >/dev/null 2>&1 || need+=("$cmd")
done
if ((${#need[@]} > 0)); then
	[ "$(id -u)" = 0 ] || fail "${need[*]} missing and not root: install Debian's slurm-wlm and munge first"
	say "installing slurm-wlm and munge (missing: ${need[*]})"
	log=$(mktemp)
	if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge; } >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		fail "apt-get install slurm-wlm munge failed (output above)"
	fi
	rm -f "$log"
fi
[ "$(id -u)" = 0 ] || fail "slurmd must run as root (SlurmUser=root in the private cluster); run as root"
say "installed: $(slurmctld -V), $(munged --version 2>&1 | head -1) ($(since "$T0"))"

# 2. The private cluster.
TMP=$(mktemp -d /tmp/slurm-check.XXXXXX)
chmod 0755 "$TMP" # munged refuses a key or socket under a group/world-writable path; 0755 is fine
PIDS=()            # daemons, in start order
JOBS=()            # job ids submitted
cleanup() {
	local rc=$?
	set +e
	if ((${#JOBS[@]} > 0)) && [ -n "${SLURM_CONF:-}" ]; then
		scancel "${JOBS[@]}" >/dev/null 2>&1
		# Let slurmd end the jobs' steps before it stops.
		for _ in $(seq 1 20); do
			[ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.5
		done
	fi
	# Stop in reverse order, each before the next: slurmd, slurmctld
	# (which still authenticates through munged while it stops), munged;
	# SIGKILL after 10 s.
	local stop
	stop=$(now)
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		kill "${PIDS[i]}" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "${PIDS[i]}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${PIDS[i]}" 2>/dev/null; then
			say "pid ${PIDS[i]} still running 10 s after SIGTERM: SIGKILL"
			kill -KILL "${PIDS[i]}" 2>/dev/null
		fi
		wait "${PIDS[i]}" 2>/dev/null
	done
	((${#PIDS[@]} == 0)) || say "stopped pids ${PIDS[*]} ($(since "$stop"))"
	if [ "${SLURM_CHECK_KEEP:-}" = 1 ]; then
		say "kept $TMP"
	else
		rm -rf "$TMP"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# showlogs prints the daemons' logs (for a failure).
showlogs() {
	for f in "$TMP"/log/*; do
		[ -s "$f" ] || continue
		echo "---- $f (last 40 lines)" >&2
		tail -n 40 "$f" >&2
	done
}

mkdir -p "$TMP"/{munge,state,spool,log,run,out}
chmod 0755 "$TMP/munge" # munged wants its socket directory searchable by all (the key stays 0400)

T1=$(now)
# munge: a fresh key, the daemon in the foreground (its pid is $!), its
# socket in the directory.
dd if=/dev/urandom of="$TMP/munge/munge.key" bs=1024 count=1 status=none
chmod 0400 "$TMP/munge/munge.key"
MUNGE_SOCKET=$TMP/munge/munge.socket
munged -F -f --key-file="$TMP/munge/munge.key" --socket="$MUNGE_SOCKET" \
	--pid-file="$TMP/run/munged.pid" --log-file="$TMP/log/munged.log" \
	--seed-file="$TMP/munge/munged.seed" >>"$TMP/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do
	[ -S "$MUNGE_SOCKET" ] && break
	kill -0 "${PIDS[0]}" 2>/dev/null || { showlogs; fail "munged exited at start"; }
	sleep 0.1
done
[ -S "$MUNGE_SOCKET" ] || { showlogs; fail "munged made no socket in 10s"; }

# slurm.conf: this host as controller and only node (by 127.0.0.1, so that
# no name service is needed), its CPUs, sockets and memory as slurmd
# measures them.
HOST=$(hostname -s)
read -r -a NODE <<<"$(slurmd -C | head -1)"
nodeparams=()
for kv in "${NODE[@]}"; do
	case $kv in
	NodeName=*) ;;
	CPUs=* | Boards=* | SocketsPerBoard=* | CoresPerSocket=* | ThreadsPerCore=* | RealMemory=*) nodeparams+=("$kv") ;;
	esac
done
NODENAME=${HOST}
mkdir -p "$TMP/spool/$NODENAME" # SlurmdSpoolDir (%n: the node name); slurmd does not create it
export SLURM_CONF=$TMP/slurm.conf
cat >"$SLURM_CONF" <<EOF
# A private single-node cluster for tools/slurm-check.sh.
ClusterName=nisimcheck
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool/%n
SlurmctldPidFile=$TMP/run/slurmctld.pid
SlurmdPidFile=$TMP/run/slurmd.pid
SlurmctldLogFile=$TMP/log/slurmctld.log
SlurmdLogFile=$TMP/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
# Cores only: memory is not a consumable, so that tasks share the node.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=600
# Small, so that the sweep's 6 jobs go in two arrays (submit.sh splits a plan
# larger than MaxArraySize) and the merge waits for both.
MaxArraySize=4
NodeName=$NODENAME NodeAddr=127.0.0.1 ${nodeparams[*]} State=UNKNOWN
PartitionName=check Nodes=$NODENAME Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >>"$TMP/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -f "$SLURM_CONF" >>"$TMP/log/slurmd.out" 2>&1 &
PIDS+=($!)

# Wait (bounded) for the node to be idle.
state=
for _ in $(seq 1 120); do
	for p in "${PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null || { showlogs; fail "a daemon (pid $p) exited at start; logs above"; }
	done
	state=$(sinfo -h -N -n "$NODENAME" -o %t 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.5
done
[ "$state" = idle ] || { showlogs; fail "node $NODENAME not idle after 60s (sinfo says '${state:-nothing}'); logs above"; }
say "cluster up: slurmctld pid ${PIDS[1]}, slurmd pid ${PIDS[2]}, munged pid ${PIDS[0]}, node $NODENAME idle ($(since "$T1"))"

# submit prints a job id of sbatch ARGS and remembers it for the cleanup.
submit() {
	local out
	out=$(sbatch --parsable "$@") || fail "sbatch $* refused"
	out=${out%%;*}
	JOBS+=("$out")
	echo "$out"
}

# waitjob ID waits (bounded by TIMEOUT) until every job of ID (an array: all
# its tasks) has ended and sets STATES to their states, one per line.
STATES=
waitjob() {
	local id=$1 end=$(($(date +%s) + TIMEOUT)) states
	while :; do
		states=$(scontrol -o show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
		[ -n "$states" ] || fail "scontrol knows no job $id"
		if ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$' <<<"$states"; then
			STATES=$states
			return
		fi
		if (($(date +%s) > end)); then
			showlogs
			fail "job $id not done after ${TIMEOUT}s (states: $(sort <<<"$states" | uniq -c | tr -s '\n ' ' '))"
		fi
		sleep 1
	done
}

# 3. Smoke test: an array and a job that depends on it.
T2=$(now)
A=$(submit --array=0-3 --job-name=smoke --output="$TMP/out/smoke_%a.out" --wrap 'echo $SLURM_ARRAY_TASK_ID')
B=$(submit --dependency=afterany:"$A" --job-name=smoke-merge --output="$TMP/out/smoke-merge.out" \
	--wrap "cat $TMP/out/smoke_0.out $TMP/out/smoke_1.out $TMP/out/smoke_2.out $TMP/out/smoke_3.out")
waitjob "$B"
[ "$STATES" = COMPLETED ] || { showlogs; fail "smoke merge job $B ended $STATES"; }
waitjob "$A"
[ "$(sort -u <<<"$STATES")" = COMPLETED ] || { showlogs; fail "smoke array $A ended: $(tr '\n' ' ' <<<"$STATES")"; }
got=$(tr '\n' ' ' <"$TMP/out/smoke-merge.out")
[ "$got" = "0 1 2 3 " ] || fail "smoke: the dependent job read '$got', want '0 1 2 3 '"
say "smoke: array $A (4 tasks) and dependent job $B ran; the dependent job read 0 1 2 3 ($(since "$T2"))"

if [ "${SLURM_CHECK_SMOKE_ONLY:-}" = 1 ]; then
	say "PASS (smoke only; total $(since "$T0"))"
	exit 0
fi

# 4. A nisim sweep and a regression tier as job arrays, against the same
# sweep and tier run locally.
[ -x "$NISIM" ] || fail "no nisim at $NISIM (make build, or set NISIM)"
NISIM=$(cd "$(dirname "$NISIM")" && pwd)/$(basename "$NISIM")
# The points: 3 loads x 2 seeds of the 4x4 mesh, short periods (seconds).
SWEEP=(mesh --grid injection_rate=0.02,0.05,0.1 --seeds 2 --set k=4 --set warmup_periods=1 --set measure_periods=2)
# The tier: 2 jobs each of the ATM switch and the Memory Channel hub.
REGRESS=(--scale 0.0005 --system atm --system mchub --seed 1)

# submitplan NAME: submits the plan in $TMP/NAME with submit.sh and sets IDS
# to the job ids it printed (the arrays, then the merge).
submitplan() {
	NISIM=$NISIM bash "$ROOT/deploy/slurm/submit.sh" "$TMP/$1" >"$TMP/log/submit-$1.out" 2>"$TMP/log/submit-$1.err" ||
		{ cat "$TMP/log/submit-$1.err" >&2; fail "deploy/slurm/submit.sh $TMP/$1 failed"; }
	mapfile -t IDS <"$TMP/log/submit-$1.out"
	JOBS+=("${IDS[@]}")
}

# waitplan NAME ID...: waits for the merge (the last ID) and the arrays;
# fails, with the daemons' and the jobs' logs, unless all completed.
waitplan() {
	local name=$1 merge=${*: -1} a tasks=
	shift
	waitjob "$merge"
	if [ "$STATES" != COMPLETED ]; then
		showlogs
		for f in "$TMP/$name"/logs/*.out; do
			[ -s "$f" ] && { echo "---- $f" >&2; tail -n 20 "$f" >&2; }
		done
		fail "$name: merge job $merge ended $STATES (its output and the tasks' above)"
	fi
	for a in "${@:1:$#-1}"; do
		waitjob "$a"
		tasks+="$STATES"$'\n'
	done
	say "$name: arrays ${*:1:$#-1} ($(grep . <<<"$tasks" | sort | uniq -c | xargs)) and merge $merge ($(since "$T3"))"
}

T3=$(now)
"$NISIM" sweep "${SWEEP[@]}" --plan "$TMP/sweep" >"$TMP/log/plan-sweep.out" 2>&1 || { cat "$TMP/log/plan-sweep.out" >&2; fail "nisim sweep --plan failed"; }
"$NISIM" regress "${REGRESS[@]}" --plan "$TMP/regress" >"$TMP/log/plan-regress.out" 2>&1 || { cat "$TMP/log/plan-regress.out" >&2; fail "nisim regress --plan failed"; }
submitplan sweep
# 6 jobs, at most 4 tasks an array: two arrays, then the merge.
((${#IDS[@]} == 3)) || fail "submit.sh printed ${#IDS[@]} job ids for the sweep, want 3 (two arrays, the merge)"
SWEEP_IDS=("${IDS[@]}")
submitplan regress
((${#IDS[@]} == 2)) || fail "submit.sh printed ${#IDS[@]} job ids for the tier, want 2 (an array, the merge)"
REGRESS_IDS=("${IDS[@]}")
waitplan sweep "${SWEEP_IDS[@]}"
waitplan regress "${REGRESS_IDS[@]}"
grep -q '^job [0-9]* of 6: ok' "$TMP/sweep"/logs/job-*.out || fail "no task log of the sweep says 'job I of 6: ok'"
for i in 0 1 2 3 4 5; do
	[ -s "$TMP/sweep/results/$(printf %06d $i).json" ] || fail "sweep job $i wrote no result"
done

T4=$(now)
"$NISIM" sweep "${SWEEP[@]}" --csv "$TMP/local.csv" --svg "$TMP/local.svg" >"$TMP/log/local.out" 2>&1 || { cat "$TMP/log/local.out" >&2; fail "local nisim sweep failed"; }
say "local: nisim sweep ${SWEEP[*]} ($(since "$T4"))"

for ext in csv svg; do
	[ -s "$TMP/sweep/sweep.$ext" ] || fail "the merge wrote no $TMP/sweep/sweep.$ext"
	if ! cmp "$TMP/local.$ext" "$TMP/sweep/sweep.$ext"; then
		diff "$TMP/local.$ext" "$TMP/sweep/sweep.$ext" | head -20 >&2
		fail "the merged sweep.$ext differs from the local sweep's (first lines of the diff above)"
	fi
done
say "merged CSV ($(wc -l <"$TMP/local.csv") lines) and SVG ($(wc -c <"$TMP/local.svg") bytes) are byte-identical to the local sweep's"

# The tier: the merge job's table against the local run's, byte for byte but
# for the times (the job time and per job-s columns, the local wall and CPU
# time lines) and the merge's own stderr line.
T5=$(now)
"$NISIM" regress "${REGRESS[@]}" >"$TMP/local-regress.out" 2>"$TMP/log/local-regress.err" || { cat "$TMP/local-regress.out" "$TMP/log/local-regress.err" >&2; fail "local nisim regress failed"; }
say "local: nisim regress ${REGRESS[*]} ($(since "$T5"))"
untimed() { grep -v -e '^nisim regress merge: ' -e '^wall time ' -e '^CPU time ' "$1" | sed -E 's/ +[0-9]+s +[0-9]*/ TIMES/'; }
untimed "$TMP/local-regress.out" >"$TMP/local-regress.table"
untimed "$TMP/regress/logs/merge-${REGRESS_IDS[1]}.out" >"$TMP/merged-regress.table"
grep -q '^atm ' "$TMP/local-regress.table" || { cat "$TMP/local-regress.out" >&2; fail "the local tier printed no table"; }
if ! cmp "$TMP/local-regress.table" "$TMP/merged-regress.table"; then
	diff "$TMP/local-regress.table" "$TMP/merged-regress.table" | head -20 >&2
	fail "the merged tier's table differs from the local run's (first lines of the diff above)"
fi
say "merged tier's table ($(grep -c . "$TMP/local-regress.table") lines) is identical to the local run's but for the times"
say "PASS (total $(since "$T0"))"
