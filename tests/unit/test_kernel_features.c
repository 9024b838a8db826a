/* test_kernel_features.c - unit tests for kernel_features: the one line below the
 * oldest kernel jflame runs on (exit 2), and the note an older kernel's walker gets. */
#include <linux/types.h>
#include <string.h>

#include "check.h"
#include "kernel_features.h"
#include "profile.h"

static void too_old(const char *release, bool ringbuf, bool task_stack, const char *want)
{
	char err[512] = "untouched";
	CHECK_MSG(kernel_features_minimum(release, ringbuf, task_stack, err, sizeof(err)) == -1, "%s taken", release);
	CHECK_MSG(strcmp(err, want) == 0, "%s: '%s'\n want '%s'", release, err, want);
	CHECK_MSG(!strchr(err, '\n'), "one line: '%s'", err);
}

static void note(bool bpf_loop, bool state, bool forced, int cpu, int off, const char *want)
{
	struct kernel_features kf;
	memset(&kf, 0, sizeof(kf));
	strcpy(kf.version, "5.10");
	kf.bpf_loop = bpf_loop;
	kf.switch_state = state;
	kf.forced = forced;
	kf.legacy = forced || !bpf_loop || !state;
	kernel_features_note(&kf, cpu, off);
	CHECK_MSG(strcmp(kf.note, want) == 0, "note '%s'\n want '%s'", kf.note, want);
	CHECK(kf.cpu_frames == cpu && kf.off_frames == off);
}

int main(void)
{
	char err[512] = "untouched";
	CHECK(kernel_features_minimum("6.1.0-27-amd64", true, true, err, sizeof(err)) == 0);
	CHECK_MSG(strcmp(err, "untouched") == 0, "err written when it runs: '%s'", err);
	too_old("5.4.0-150-generic", false, false,
		"kernel 5.4.0-150-generic is older than jflame supports: it has no BPF ring buffer (Linux 5.8); "
		"jflame needs Linux 5.9 or later (tested from 5.10)");
	too_old("5.8.18", true, false,
		"kernel 5.8.18 is older than jflame supports: it has no bpf_get_task_stack (Linux 5.9); "
		"jflame needs Linux 5.9 or later (tested from 5.10)");
	too_old("", false, true,
		"kernel ? is older than jflame supports: it has no BPF ring buffer (Linux 5.8); "
		"jflame needs Linux 5.9 or later (tested from 5.10)");

	/* the newest kernels: nothing said */
	note(true, true, false, PROFILE_MAX_USER_FRAMES, PROFILE_MAX_USER_FRAMES, "");
	/* 5.10: tail calls on the CPU, the bounded walk off it (the kernel tests' regex) */
	note(false, false, false, 2048, 128,
	     "kernel 5.10 has no bpf_loop: Java stacks are walked to 2048 frames on the CPU and 128 off it (2048 from 5.17)");
	note(false, false, false, 2048, -1,
	     "kernel 5.10 has no bpf_loop: Java stacks are walked to 2048 frames in tail "
	     "calls (2048 from 5.17)");
	note(false, false, false, -1, 128,
	     "kernel 5.10 has no bpf_loop: Java stacks are walked to 128 frames (2048 from 5.17)");
	/* 5.17: bpf_loop, but sched_switch without prev_state */
	note(true, false, false, 2048, 128,
	     "kernel 5.10 has no prev_state in sched_switch: Java stacks are walked to 2048 "
	     "frames on the CPU and 128 off it (2048 from 5.18)");
	/* a verifier that took less (the sampler halves a program's depth that fails) */
	note(false, false, false, 1024, -1,
	     "kernel 5.10 has no bpf_loop: Java stacks are walked to 1024 frames (2048 "
	     "from 5.17)");
	note(true, true, true, 2048, 128,
	     "kernel 5.10, with JFLAME_BPF_LEGACY=1: Java stacks are walked to 2048 frames "
	     "on the CPU and 128 off it (2048 with bpf_loop)");
	return check_report("test_kernel_features");
}
