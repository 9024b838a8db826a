#!/usr/bin/env bash
# checks.sh - the kernel tests' checks, run the same way inside a guest (as PID 1's
# child: tests/kernel/init.sh) and on the host (tests/kernel/test_kernels.py,
# kernel.host): real JVMs started WITHOUT -XX:+PreserveFramePointer and with
# -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints, given seconds of warm-up,
# then every mode of `jflame record` in turn, briefly. Nothing is asserted here:
# each mode's outputs, jflame's stderr and exit code go to $RES for
# test_kernels.py, which holds them to the host integration tests' assertions.
#
# In $RES: uname, java-version, jflame-version; per mode NAME: NAME.folded (and
# other outputs), NAME.err (jflame's stderr), NAME.rc (its exit code), NAME.cmd;
# per JVM: NAME.out (its stdout) and NAME.jvmerr; steps.tsv (step, start and end
# in seconds of /proc/uptime, exit code); hs_err_*.log of a JVM that crashed.
#
# First a 1-s record -a (preflight): when the kernel refuses jflame's BPF program,
# bpf-refused and bpf-verifier.log (-v) are written and nothing else runs.
# The modes (JFLAME_CHECKS: a comma-separated list of steps; "all" alone, the
# default, is every one):
#   cpu      record -p, agentless, of Workload mixed (two long-named hot threads)
#   all      record -a beside it
#   window   record -p --window 1 -d 3 --baseline first
#   hostile  record -a --attach beside a JVM run as nobody with a FIFO at its status path
#   offcpu   record -e offcpu -p of SleepSpin, with its own totals around it
#   wall     record -e wall -p of SleepSpin
#   lock     record -e lock -p of LockContend (attaches the agent)
#   alloc    record -e alloc -p of AllocMix (attaches the agent)
#   launch   record -- java ... Workload hot (the agent from the JVM's start)
#   kafka    record -p of KafkaStyle --format string-format, as scripts/demo.sh does
#
# Environment: RES (required), JFLAME_TEST_DIR (where jflame, libjflame-agent.so,
# jflame-examples.jar and checks.conf are: the guest's /opt/jflame-test),
# JFLAME_BIN, JFLAME_AGENT, JFLAME_EXAMPLES_JAR, JFLAME_JAVA_HOME (override those),
# JFLAME_JAVA_ROOT (the JDK's root file system: the JVMs run in it by
# tests/jdk/in-root.sh, the JDK matrix), JFLAME_JVM_GC (the collector's flags;
# default -XX:+UseG1GC),
# JFLAME_KERNEL_WARMUP (seconds a workload runs after saying ready; default 8),
# JFLAME_KERNEL_KAFKA_WARMUP (the same for the Kafka-style example; default: as
# the others), JFLAME_KERNEL_KAFKA_SETTLE (seconds it may take after that to settle:
# see settled; default 90), JFLAME_KERNEL_KAFKA_COMPILE (seconds its producer may
# take after that to run compiled code: see compiled; default 150).
set -uo pipefail
dir=${JFLAME_TEST_DIR:-$(cd "$(dirname "$0")" && pwd)}
# the guest's settings, written by run-vm.sh (the environment wins)
if [[ -f $dir/checks.conf ]]; then
	while IFS='=' read -r k v; do
		[[ -z ${!k:-} ]] && eval "export $k=$v"
	done <"$dir/checks.conf"
fi
RES=${RES:?RES: where the results go}
JFLAME=${JFLAME_BIN:-$dir/jflame}
AGENT=${JFLAME_AGENT:-$dir/libjflame-agent.so}
JAR=${JFLAME_EXAMPLES_JAR:-$dir/jflame-examples.jar}
JAVA_HOME=${JFLAME_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
JAVA=$JAVA_HOME/bin/java
# the command that runs a JVM: the JDK matrix's in its own root (tests/jdk)
java=("$JAVA")
[[ -n ${JFLAME_JAVA_ROOT:-} ]] && java=("$dir/../jdk/in-root.sh" "$JFLAME_JAVA_ROOT" "$JAVA")
read -r -a gc <<<"${JFLAME_JVM_GC:--XX:+UseG1GC}"
WARM=${JFLAME_KERNEL_WARMUP:-8}
CHECKS=,${JFLAME_CHECKS:-all},
export JFLAME_AGENT=$AGENT
# no PreserveFramePointer; inlined frames placed exactly; hs_err files kept
# (the examples wait up to 120 s for their JIT to settle before they say ready: an
# emulated CPU compiles for a minute, and the graphs are only the host's after it)
JVMFLAGS=(-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints "-XX:ErrorFile=$RES/hs_err_pid%p.log"
	"${gc[@]}" -Djflame.example.latest=120)
HOT=jflame-hot-worker-thread-with-a-long-name
mkdir -p "$RES"
cd "$RES" || exit 1

up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "jflame-checks: [$(up)] $*"; }
# "all" alone is every mode; in a list of modes it is record -a's ("cpu,all")
want() { [[ $CHECKS == ,all, || $CHECKS == *,"$1",* ]]; }
step_name="" step_t0=""
step() { step_name=$1 step_t0=$(up); log "$1"; }
step_end() { # exit code
	printf '%s\t%s\t%s\t%s\n' "$step_name" "$step_t0" "$(up)" "$1" >>"$RES/steps.tsv"
	log "$step_name: exit $1 in $(awk -v a="$step_t0" -v b="$(up)" 'BEGIN {printf "%.1f", b - a}') s"
}

# record NAME LIMIT ARGS...: jflame record ARGS, at most LIMIT seconds; its stderr
# in NAME.err, its exit code in NAME.rc (124: killed at LIMIT)
record() {
	local name=$1 limit=$2 rc=0
	shift 2
	step "$name"
	printf '%q ' "$JFLAME" record "$@" >"$RES/$name.cmd"
	timeout -k 5 "$limit" "$JFLAME" record "$@" </dev/null >"$RES/$name.stdout" 2>"$RES/$name.err" || rc=$?
	echo "$rc" >"$RES/$name.rc"
	step_end "$rc"
	((rc == 0)) || { log "$name: jflame record exited $rc:"; tail -n 5 "$RES/$name.err"; }
}

jvms=()
# jvm_start NAME JAVA-ARGS...: starts a JVM (stdout in NAME.out, its pid in NAME.pid
# and $jvm_pid), not waiting for it; a watcher notes when it says ready
# (NAME.readyat, seconds of uptime) or that it ended first (NAME.ended);
# jvm_nice=N before it: at that nice level
jvm_pid=0
jvm_start() {
	local name=$1
	shift
	printf '%s\n' "$@" >"$RES/$name.args"
	log "start $name"
	rm -f "$RES/$name.readyat" "$RES/$name.ended"
	up >"$RES/$name.started"
	${jvm_nice:+nice -n "$jvm_nice"} "${java[@]}" "$@" >"$RES/$name.out" 2>"$RES/$name.jvmerr" </dev/null &
	jvm_pid=$!
	jvms+=("$jvm_pid")
	echo "$jvm_pid" >"$RES/$name.pid"
	(
		while kill -0 "$jvm_pid" 2>/dev/null; do
			if grep -q -- "${ready_text[$name]}" "$RES/$name.out"; then
				up >"$RES/$name.readyat.tmp" # (renamed: whoever sees the file sees its time)
				mv "$RES/$name.readyat.tmp" "$RES/$name.readyat"
				exit 0
			fi
			sleep 0.2
		done
		: >"$RES/$name.ended"
	) &
}
# what each workload says when it is ready
declare -A ready_text=([mixed]="jflame-workload: ready" [sleepspin]="jflame-example: ready"
	[lockcontend]="jflame-example: ready" [allocmix]="jflame-example: ready" [kafka]="jflame-example: ready")
# jvm_ready NAME TIMEOUT [WARM-UP]: waits until the JVM NAME has said ready (within
# TIMEOUT seconds of its start) and run WARM-UP seconds (default $WARM) more;
# step start-NAME, from its start to ready. A JVM that crashes before it is ready
# and before jflame touched it (qemu's emulated CPU has made a JVM fail at startup,
# rarely) is started once more, and said so in jvm-crashed-before-ready.
jvm_ready() {
	local name=$1 limit=$2 warm=${3:-$WARM} try pid args t0
	for try in 1 2; do
		pid=$(cat "$RES/$name.pid")
		t0=$(cat "$RES/$name.started")
		step_name=start-$name step_t0=$t0
		while [[ ! -f $RES/$name.readyat && ! -f $RES/$name.ended ]] &&
			awk -v a="$(up)" -v b="$t0" -v l="$limit" 'BEGIN {exit !(a - b < l)}'; do
			sleep 0.2
		done
		if [[ -f $RES/$name.readyat ]]; then
			printf '%s\t%s\t%s\t%s\n' "$step_name" "$t0" "$(cat "$RES/$name.readyat")" 0 >>"$RES/steps.tsv"
			local rest
			rest=$(awk -v a="$(up)" -v r="$(cat "$RES/$name.readyat")" -v w="$warm" \
				'BEGIN {s = w - (a - r); printf "%.1f", (s > 0 ? s : 0)}')
			log "$name ready at $(cat "$RES/$name.readyat") (started $t0); warm-up $rest s more"
			sleep "$rest"
			jvm_pid=$pid
			return 0
		fi
		if [[ ! -f $RES/$name.ended ]]; then
			log "$name: not ready within $limit s"
			step_end 1
			return 1
		fi
		wait "$pid"
		log "$name: the JVM exited ($?) before it was ready (try $try):"
		tail -n 20 "$RES/$name.out" "$RES/$name.jvmerr"
		[[ -f $RES/hs_err_pid$pid.log && $try == 1 ]] || break
		echo "$name pid $pid" >>"$RES/jvm-crashed-before-ready"
		mapfile -t args <"$RES/$name.args"
		jvm_start "$name" "${args[@]}"
	done
	step_end 1
	return 1
}
stop_jvm() { # pid
	kill -TERM "$1" 2>/dev/null
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.3
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
# at the end: every JVM killed, and the files the agent and the attach left in /tmp
# (the launched JVM's too) removed: on the host /tmp is shared
cleanup() {
	local p
	for p in "${jvms[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	for p in "${jvms[@]}" $(sed -n 's|^jflame-agent: writing /tmp/perf-\([0-9]*\)\.map.*|\1|p' "$RES/launch.err" 2>/dev/null); do
		rm -f "/tmp/perf-$p.map" "/tmp/jflame-$p.status" "/tmp/jflame-$p.events" "/tmp/jflame-$p.samples" \
			"/tmp/.java_pid$p"
	done
}
trap cleanup EXIT
# settled NAME LIMIT: waits (at most LIMIT seconds) until the Kafka-style example
# NAME has settled: its last three reports (2 s apart) each of records sent, within
# 25% of each other, the JIT compiling under 250 ms of the 4 s (step settle-NAME: exit
# 0 settled, 1 not within LIMIT). A JVM an emulated CPU starved at its start still
# interprets its hot loop long after it said ready, and its graph is not the host's.
settled() {
	local name=$1 limit=$2 t0 rc=1
	step "settle-$name"
	t0=$(up)
	while awk -v a="$(up)" -v b="$t0" -v l="$limit" 'BEGIN {exit !(a - b < l)}'; do
		if grep 'jflame-example: records/s' "$RES/$name.out" | tail -n 3 | awk '
			{ r[NR] = $3; j[NR] = $5 }
			END {
				if (NR < 3) exit 1
				lo = r[1]; hi = r[1]
				for (i = 2; i <= 3; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
				exit !(lo > 0 && (hi - lo) * 4 <= hi && j[1] >= 0 && j[3] - j[1] < 250)
			}'; then
			rc=0
			break
		fi
		sleep 1
	done
	step_end "$rc"
}

# compiled NAME LIMIT: after settled, waits (at most LIMIT seconds) until a 2-s probe
# recording of the Kafka-style example NAME finds under 3% of its producer thread's
# samples running interpreted code (the last Java frame a _[0]; the outer loops that
# never return stay interpreted, and do not count): its throughput can be steady while
# the emulated JIT has not yet compiled the producer's buildBatch or CRC32C.update
# (17% of its samples in one 6.1 run, 8% in another, which moved String.format's
# share 10 and 7.7 points from the host's); step compile-NAME, exit 0 or 1.
compiled() {
	local name=$1 limit=$2 t0 rc=1 pid
	pid=$(cat "$RES/$name.pid")
	step "compile-$name"
	t0=$(up)
	while awk -v a="$(up)" -v b="$t0" -v l="$limit" 'BEGIN {exit !(a - b < l)}'; do
		timeout -k 5 60 "$JFLAME" record -p "$pid" -d 2 -o "$RES/$name-probe.folded" </dev/null \
			>/dev/null 2>>"$RES/$name-probe.err" || break
		if awk -v t="kafka-producer-network-thread | producer-1" '
			{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
			  if (k < 2 || f[2] != t) next
			  all += n
			  for (i = k; i >= 3; i--) if (f[i] ~ /_\[[0ji]\]$/) { if (f[i] ~ /_\[0\]$/) interp += n; break } }
			END { printf "%s: producer %d samples, %d interpreted\n", FILENAME, all, interp >> "/dev/stderr"
			      exit !(all >= 20 && interp * 100 < 3 * all) }' "$RES/$name-probe.folded" 2>>"$RES/$name-probe.err"; then
			rc=0
			break
		fi
		sleep 2
	done
	step_end "$rc"
}

# the last totals line a workload printed (SleepSpin, LockContend: every 200 ms)
totals() { grep 'jflame-example: totals' "$RES/$1.out" | tail -n 1; }

step info
uname -r >"$RES/uname"
"${java[@]}" -version 2>"$RES/java-version"
"$JFLAME" --version >"$RES/jflame-version" 2>&1
nproc >"$RES/nproc"
step_end 0

# Does jflame's BPF program load here at all? When the kernel refuses it, every
# recording would fail the same way: the verifier's log is kept (bpf-verifier.log,
# from -v) and the recordings are left out (bpf-refused).
record preflight 60 -a -d 1 -o preflight.folded
if grep -q "failed to load the BPF program" "$RES/preflight.err"; then
	timeout -k 5 120 "$JFLAME" record -v -a -d 1 -o preflight-v.folded </dev/null >/dev/null 2>"$RES/bpf-verifier.log"
	log "jflame's BPF program does not load on $(uname -r): no recordings; the verifier's log in bpf-verifier.log"
	cp "$RES/preflight.err" "$RES/bpf-refused"
	exit 0
fi

# Workloads start early so that their warm-ups overlap the recordings before them;
# each is recorded once it has said ready and run WARM seconds more (the JIT
# settles). SleepSpin and LockContend (light) start with Workload mixed; the
# hostile case comes next (its -a --attach loads the agent into every JVM up,
# and the Kafka-style example is recorded agentless, as the demo does); then
# off-CPU and lock, then wall-clock and launch mode alone; then KafkaStyle and
# AllocMix start, and the allocation recording runs during KafkaStyle's warm-up (KAFKA_WARM
# after ready, then until it has settled: under qemu's TCG its JIT takes a minute
# or more, and the demo's figure is of a settled JVM).
KAFKA_WARM=${JFLAME_KERNEL_KAFKA_WARMUP:-$WARM}
KAFKA_SETTLE=${JFLAME_KERNEL_KAFKA_SETTLE:-90}
KAFKA_COMPILE=${JFLAME_KERNEL_KAFKA_COMPILE:-150}
kafka_seconds=10

# --- Workload mixed: the CPU recordings -----------------------------------------------
if want cpu || want all || want window; then
	jvm_start mixed "${JVMFLAGS[@]}" -cp "$JAR" jflame.examples.Workload mixed 600000
fi
if want offcpu || want wall; then
	jvm_start sleepspin "${JVMFLAGS[@]}" -cp "$JAR" jflame.examples.SleepSpin --seconds 600
fi
if want lock; then
	# (at a higher priority than the other JVMs, holding for 50 ms: an emulated CPU
	# they keep busy, or a short hold, leaves its waiter runnable or spinning before
	# it blocks for most of its time in post(), which neither the JVM's blocked time
	# nor a lock profiler counts; the check is of what jflame makes of the blocks)
	jvm_nice=-10 jvm_start lockcontend "${JVMFLAGS[@]}" -cp "$JAR" jflame.examples.LockContend --seconds 600 \
		--hold-ms 50
fi
if want cpu || want all || want window; then
	if jvm_ready mixed 240; then
		pid=$jvm_pid
		# (.stacks too: each sample's time, for a look at which samples are not whole)
		want cpu && record cpu 120 -p "$pid" -F 199 -d 6 -o cpu.folded -o cpu.svg -o cpu.stacks
		want all && record all 120 -a -d 4 -o all.folded -o all.stacks
		want window && record window 120 -p "$pid" --window 1 -d 3 --baseline first -o 'window-%n.folded'
	fi
	stop_jvm "$(cat "$RES/mixed.pid")"
fi

# --- hostile target: a JVM run as nobody, a FIFO at its agent status path ------------
# (as tests/integration/test_hostile.py's jvmfifo: its own mount namespace and /tmp;
# the jar kept open as fd 3, as the build tree may be where nobody cannot read)
if want hostile; then
	step start-hostile
	unshare --mount --propagation private sh -c "exec 3<'$JAR' && mount -t tmpfs -o mode=1777,size=64m \
jflame-hostile-jvm /tmp && mkfifo -m 644 /tmp/jflame-\$\$.status && chown 65534:65534 /tmp/jflame-\$\$.status && \
exec setpriv --reuid=65534 --regid=65534 --clear-groups \"\$0\" \"\$@\"" \
		"$JAVA" "${JVMFLAGS[@]/#-XX:ErrorFile=*/-XX:ErrorFile=/tmp/hs_err_pid%p.log}" -cp /proc/self/fd/3 \
		jflame.examples.Workload hot 600000 >"$RES/hostile-jvm.out" 2>"$RES/hostile-jvm.jvmerr" </dev/null &
	pid=$!
	jvms+=("$pid")
	echo "$pid" >"$RES/hostile.pid"
	# running its hot thread (no warm-up needed: the case is what jflame makes of the FIFO)
	ok=1
	for ((n = 0; n < 600; n++)); do
		if grep -qx "${HOT:0:15}" /proc/"$pid"/task/*/comm 2>/dev/null; then ok=0; break; fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	step_end $ok
	if ((ok == 0)); then
		[[ -p /proc/$pid/root/tmp/jflame-$pid.status ]] && echo fifo >"$RES/hostile.planted"
		record hostile 120 -a --attach -d 3 -o hostile.folded -o hostile.svg
		sleep 1
		# the JVM is not stuck opening its FIFO (the agent jflame loaded must not block on it)
		kill -0 "$pid" 2>/dev/null && echo alive >"$RES/hostile.alive"
		: >"$RES/hostile.stuck"
		for t in /proc/"$pid"/task/*; do
			grep -q fifo_open "$t/stack" 2>/dev/null && cat "$t/comm" >>"$RES/hostile.stuck"
		done
	fi
	stop_jvm "$pid"
fi

# --- off-CPU and lock samples side by side, then wall-clock samples --------------------
# (two recordings at a time, of two JVMs: each is measured against its own
# workload's totals around it, which contention does not change)
offcpu_wall() { # mode
	totals sleepspin >"$RES/$1.before"
	if [[ $1 == offcpu ]]; then
		record offcpu 120 -v -e offcpu -p "$(cat "$RES/sleepspin.pid")" -d 5 -o offcpu.folded
	else
		record wall 120 -v -e wall -F 499 -p "$(cat "$RES/sleepspin.pid")" -d 5 -o wall.folded
	fi
	sleep 0.5 # the next totals line
	totals sleepspin >"$RES/$1.after"
}
ss_ok=1 lc_ok=1
if want offcpu || want wall; then
	jvm_ready sleepspin 240 && ss_ok=0
fi
if want lock; then
	jvm_ready lockcontend 240 && lc_ok=0
fi
bg=() # the recordings running in the background
if ((ss_ok == 0)) && want offcpu; then
	offcpu_wall offcpu &
	bg+=($!)
fi
if ((lc_ok == 0)); then
	(
		totals lockcontend >"$RES/lock.before"
		record lock 120 -v -e lock -p "$(cat "$RES/lockcontend.pid")" -d 5 -o lock.folded
		sleep 0.3
		totals lockcontend >"$RES/lock.after"
	) &
	bg+=($!)
fi
wait_bg() { ((${#bg[@]} == 0)) || wait "${bg[@]}"; bg=(); }
wait_bg
want lock && stop_jvm "$(cat "$RES/lockcontend.pid")"
# wall-clock samples with no other JVM busy (README: time a frozen vCPU hides)
((ss_ok == 0)) && want wall && offcpu_wall wall
{ want offcpu || want wall; } && stop_jvm "$(cat "$RES/sleepspin.pid")"

# --- launch mode: jflame starts the JVM, the exit code passes through -----------------
# (with no other JVM busy: the samples before jflame has read the launched JVM's
# layout are walked by frame pointers, and on one emulated CPU shared with a JIT
# that takes long; .stacks has each sample's time)
if want launch; then
	# (the JVM's own output goes to launch.stdout, jflame's to launch.err)
	record launch 180 -o launch.folded -o launch.svg -o launch.stacks -- "${java[@]}" "${JVMFLAGS[@]}" -cp "$JAR" \
		jflame.examples.Workload hot 8000 7
fi

# --- the Kafka-style example (scripts/demo.sh's) and AllocMix start; allocation samples
if want kafka; then
	jvm_start kafka "${JVMFLAGS[@]}" -cp "$JAR" jflame.examples.KafkaStyle --seconds 600 --format string-format
fi
if want alloc; then
	jvm_start allocmix "${JVMFLAGS[@]}" -cp "$JAR" jflame.examples.AllocMix --seconds 600
fi
if want alloc && jvm_ready allocmix 240; then
	record alloc 120 -e alloc --alloc-interval 64k -p "$jvm_pid" -d 5 -o alloc.folded
fi
want alloc && stop_jvm "$(cat "$RES/allocmix.pid")"

# --- the demo's recording: KafkaStyle in its String.format() mode, -d 10 ------------
# (the other JVMs are gone by now: it settles with the CPU to itself)
if want kafka; then
	if jvm_ready kafka 240 "$KAFKA_WARM"; then
		settled kafka "$KAFKA_SETTLE" && compiled kafka "$KAFKA_COMPILE"
		record kafka 120 -p "$jvm_pid" -d "$kafka_seconds" -o kafka.svg -o kafka.folded
	fi
	stop_jvm "$(cat "$RES/kafka.pid")"
fi

log "done"
