#!/bin/bash
# checks-arm64.sh - the arm64 guest's checks (run-vm-arm64.sh runs it as part of PID 1):
# the arm64 build of jflame records Debian's arm64 OpenJDK 17 running Workload mixed (two
# long-named threads: a hot loop that reads the clock through the vDSO, and units of
# interpreted, compiled and inlined work; -XX:+DebugNonSafepoints) agentless, without
# -XX:+PreserveFramePointer, and -a beside it; Stacks' never-compiled huge method and its
# 700-deep recursion; launch mode (record -- java ...); then the agent's events, attached by
# pid: -e lock of LockContend, -e alloc of AllocMix. Writes outputs, stderr, exit codes and a
# timeline to $RES; asserts nothing (test_arm64.py does).
RES=${RES:-/res}
d=${JFLAME_TEST_DIR:-/opt/jflame-test}
java=$(find /usr/lib/jvm -maxdepth 3 -path "*/java-17-openjdk-*/bin/java" | head -n 1)
export JFLAME_AGENT=$d/libjflame-agent.so
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "$1 $(up)" >>"$RES/timeline"; }
uname -r >"$RES/uname"
"$java" -version >"$RES/java-version" 2>&1
"$d/jflame" --version >"$RES/jflame-version" 2>&1
log start
# ready NAME TEXT: waits (400 s at most) until the JVM NAME has printed TEXT
ready() {
	for _ in $(seq 1 400); do
		grep -q "$2" "$RES/$1.out" && break
		sleep 1
	done
	log "$1-ready"
}
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$d/jflame-examples.jar" \
	jflame.examples.Workload mixed 900000 >"$RES/mixed.out" 2>&1 &
pid=$!
echo "$pid" >"$RES/mixed.pid"
ready mixed "jflame-workload: ready"
sleep 15 # the JIT settles (emulated: slowly)
"$d/jflame" record -p "$pid" -d 10 -o "$RES/cpu.folded" -o "$RES/cpu.svg" >"$RES/cpu.stdout" 2>"$RES/cpu.err"
echo $? >"$RES/cpu.rc"
log cpu
"$d/jflame" record -a -d 3 -o "$RES/all.folded" >"$RES/all.stdout" 2>"$RES/all.err"
echo $? >"$RES/all.rc"
log all
kill "$pid"
wait "$pid" 2>/dev/null
# a method HotSpot never compiles (over HugeMethodLimit): the interpreter's frame, named
"$java" -cp "$d/jflame-examples.jar" jflame.examples.Stacks huge 600000 >"$RES/huge.out" 2>&1 &
pid=$!
echo "$pid" >"$RES/huge.pid"
ready huge "jflame-stacks: ready huge"
"$d/jflame" record -p "$pid" -d 5 -o "$RES/huge.folded" >"$RES/huge.stdout" 2>"$RES/huge.err"
echo $? >"$RES/huge.rc"
log huge
kill "$pid"
wait "$pid" 2>/dev/null
# a 700-deep recursion, one physical frame a level, walked whole
"$java" -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,jflame.examples.Stacks::descend \
	-XX:CompileCommand=dontinline,jflame.examples.Stacks::bottom -cp "$d/jflame-examples.jar" \
	jflame.examples.Stacks deep 700 600000 >"$RES/deep.out" 2>&1 &
pid=$!
echo "$pid" >"$RES/deep.pid"
ready deep "jflame-stacks: ready deep"
sleep 5 # descend and bottom compiled
"$d/jflame" record -p "$pid" -d 5 -o "$RES/deep.folded" >"$RES/deep.stdout" 2>"$RES/deep.err"
echo $? >"$RES/deep.rc"
log deep
kill "$pid"
wait "$pid" 2>/dev/null
# launch mode: jflame starts the JVM (the agent from its start); its exit code, 7, passes through.
# 20 s: the samples before jflame has read the new JVM's layout are walked by frame pointers
# (not whole); emulated, with the JIT on the same CPU, that took 1 s of an 8-s run (13% of
# its samples) in a loaded CI run: a fixed cost, a small share of a longer run
"$d/jflame" record -o "$RES/launch.folded" -o "$RES/launch.svg" -- "$java" -cp "$d/jflame-examples.jar" \
	jflame.examples.Workload hot 20000 7 >"$RES/launch.stdout" 2>"$RES/launch.err"
echo $? >"$RES/launch.rc"
log launch
# the agent's events: each JVM attached by pid when jflame records it
"$java" -cp "$d/jflame-examples.jar" jflame.examples.LockContend --seconds 600 --hold-ms 50 >"$RES/lockcontend.out" 2>&1 &
pid=$!
echo "$pid" >"$RES/lockcontend.pid"
ready lockcontend "jflame-example: ready"
"$d/jflame" record -e lock -p "$pid" -d 5 -o "$RES/lock.folded" >"$RES/lock.stdout" 2>"$RES/lock.err"
echo $? >"$RES/lock.rc"
log lock
kill "$pid"
wait "$pid" 2>/dev/null
"$java" -cp "$d/jflame-examples.jar" jflame.examples.AllocMix --seconds 600 >"$RES/allocmix.out" 2>&1 &
pid=$!
echo "$pid" >"$RES/allocmix.pid"
ready allocmix "jflame-example: ready"
"$d/jflame" record -e alloc --alloc-interval 64k -p "$pid" -d 5 -o "$RES/alloc.folded" >"$RES/alloc.stdout" 2>"$RES/alloc.err"
echo $? >"$RES/alloc.rc"
log alloc
kill "$pid"
exit 0
