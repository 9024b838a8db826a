#!/bin/sh
# init.sh - the kernel-test guest's PID 1 (the kernel runs it as init=): mounts
# what a booted system has and jflame needs (proc, sys, tmpfs /tmp and /run,
# debugfs, tracefs, the BPF file system, cgroup v2), brings up loopback (the
# Kafka-style example talks TCP over it), runs checks.sh with its results in
# /res, syncs and powers off (qemu -no-reboot then exits). Whatever happens, it
# ends in a power-off: PID 1 exiting would panic the kernel.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
dir=/opt/jflame-test

off() {
	sync
	echo "jflame-guest: power off" >/dev/console
	busybox poweroff -f
	echo o >/proc/sysrq-trigger
	sleep 30
}
trap off EXIT

# (the initramfs moved its /proc, /sys and /dev over: those are mounted already)
fs() { # type, options, mount point
	mkdir -p "$3"
	mountpoint -q "$3" || mount -t "$1" -o "$2" "$1" "$3" || echo "jflame-guest: cannot mount $1 on $3" >/dev/console
}
fs proc nosuid,nodev,noexec /proc
fs sysfs nosuid,nodev,noexec /sys
fs devtmpfs mode=755 /dev
fs tmpfs mode=1777,nosuid,nodev /tmp
fs tmpfs mode=755,nosuid,nodev /run
fs tmpfs mode=1777,nosuid,nodev /dev/shm
fs devpts gid=5,mode=620 /dev/pts
fs debugfs nosuid,nodev,noexec /sys/kernel/debug
fs tracefs nosuid,nodev,noexec /sys/kernel/tracing
fs bpf mode=700 /sys/fs/bpf
fs cgroup2 nosuid,nodev,noexec /sys/fs/cgroup
busybox ip link set lo up
busybox hostname jflame-guest
mkdir -p /res
echo "jflame-guest: $(uname -r) up $(cut -d' ' -f1 /proc/uptime) s; checks start" >/dev/console
cut -d' ' -f1 /proc/uptime >/res/init-uptime
JFLAME_TEST_DIR=$dir RES=/res bash "$dir/checks.sh" >/dev/console 2>&1
echo "$?" >/res/checks-exit
echo "jflame-guest: checks ended (exit $(cat /res/checks-exit)) at uptime $(cut -d' ' -f1 /proc/uptime) s" >/dev/console
