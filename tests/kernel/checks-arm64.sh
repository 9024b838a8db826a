#!/bin/bash
# checks-arm64.sh - the arm64 guest's checks (run-vm-arm64.sh runs it as part of PID 1):
# the arm64 build of jflame records Debian's arm64 OpenJDK 17 running Workload mixed (two
# long-named threads: a hot loop that reads the clock through the vDSO, and units of
# interpreted, compiled and inlined work) agentless, without -XX:+PreserveFramePointer,
# and -a beside it. Writes outputs, stderr, exit codes and a timeline to $RES; asserts
# nothing (test_arm64.py does).
RES=${RES:-/res}
d=${JFLAME_TEST_DIR:-/opt/jflame-test}
java=$(find /usr/lib/jvm -maxdepth 3 -path "*/java-17-openjdk-*/bin/java" | head -n 1)
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "$1 $(up)" >>"$RES/timeline"; }
uname -r >"$RES/uname"
"$java" -version >"$RES/java-version" 2>&1
"$d/jflame" --version >"$RES/jflame-version" 2>&1
log start
"$java" -cp "$d/jflame-examples.jar" jflame.examples.Workload mixed 900000 >"$RES/mixed.out" 2>&1 &
pid=$!
echo "$pid" >"$RES/mixed.pid"
for _ in $(seq 1 400); do
	grep -q "jflame-workload: ready" "$RES/mixed.out" && break
	sleep 1
done
log ready
sleep 15 # the JIT settles (emulated: slowly)
"$d/jflame" record -p "$pid" -d 10 -o "$RES/cpu.folded" -o "$RES/cpu.svg" >"$RES/cpu.stdout" 2>"$RES/cpu.err"
echo $? >"$RES/cpu.rc"
log cpu
"$d/jflame" record -a -d 3 -o "$RES/all.folded" >"$RES/all.stdout" 2>"$RES/all.err"
echo $? >"$RES/all.rc"
log all
kill "$pid"
exit 0
