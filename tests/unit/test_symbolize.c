/* test_symbolize.c - the symbolizer on this very process: frames in its
 * [vdso] named from the kernel's vDSO image as perf names them
 * (__vdso_clock_gettime, dso [vdso]), as a return address too; libc's
 * clock_gettime still named from its file. A child that exits is forgotten
 * by the second forget pass after its exit, not the first. */
#include "check.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void test_vdso(void)
{
	char err[256] = "";
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	uint64_t fn = h ? (uint64_t)(uintptr_t)dlsym(h, "__vdso_clock_gettime") : 0;
	if (!getauxval(AT_SYSINFO_EHDR) || !fn) {
		printf("test_symbolize: no vDSO with __vdso_clock_gettime here: skipped\n");
		return;
	}
	struct str_intern *si = str_intern_new();
	struct symbolizer *sy = si ? symbolizer_new(si, err, sizeof(err)) : NULL;
	CHECK_MSG(sy != NULL, "%s", err);
	if (!sy) {
		str_intern_free(si);
		return;
	}
	struct frame f = symbolize_user(sy, getpid(), fn, 0, false);
	CHECK_EQ_STR(f.name, "__vdso_clock_gettime");
	CHECK_EQ_STR(f.dso, "[vdso]");
	CHECK_EQ_INT(f.kind, FRAME_NATIVE);
	f = symbolize_user(sy, getpid(), fn + 8, 0, true); /* a return address inside it */
	CHECK_EQ_STR(f.name, "__vdso_clock_gettime");
	/* the other clocks: one global name each, not the weak alias */
	const char *const names[] = { "__vdso_gettimeofday", "__vdso_time", "__vdso_clock_getres" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t a = (uint64_t)(uintptr_t)dlsym(h, names[i]);
		if (a)
			CHECK_EQ_STR(symbolize_user(sy, getpid(), a, 0, false).name, names[i]);
	}
	/* libc's clock_gettime is libc's, from its file */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t cg = libc ? (uint64_t)(uintptr_t)dlsym(libc, "clock_gettime") : 0;
	if (cg) {
		f = symbolize_user(sy, getpid(), cg, 0, false);
		CHECK_EQ_STR(f.name, "clock_gettime");
		CHECK(strcmp(f.dso, "[vdso]") != 0);
		dlclose(libc);
	}
	dlclose(h);
	symbolizer_free(sy);
	str_intern_free(si);
}

static bool known(const struct symbolizer *sy, pid_t pid)
{
	pid_t pids[64];
	size_t n = symbolizer_processes(sy, pids, 64);
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* A process that exits keeps its names through the pass that first sees it
 * gone (the samples it left behind a slow reader are named after its exit) */
static void test_forget_exited(void)
{
	char err[256] = "";
	pid_t gone[8];
	struct str_intern *si = str_intern_new();
	struct symbolizer *sy = si ? symbolizer_new(si, err, sizeof(err)) : NULL;
	CHECK_MSG(sy != NULL, "%s", err);
	pid_t child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	CHECK(child > 0);
	if (!sy || child <= 0)
		goto out;
	struct frame f = symbolize_user(sy, child, (uint64_t)(uintptr_t)&test_forget_exited, 0, false);
	CHECK_EQ_STR(f.name, "test_forget_exited"); /* its copy of this program, named */
	CHECK(known(sy, child));
	CHECK_EQ_INT((int)symbolizer_forget_exited(sy, gone, 8), 0); /* alive */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	pid_t was = child;
	child = -1;
	CHECK_EQ_INT((int)symbolizer_forget_exited(sy, gone, 8), 0); /* seen gone: kept */
	CHECK(known(sy, was));
	f = symbolize_user(sy, was, (uint64_t)(uintptr_t)&test_forget_exited, 0, false);
	CHECK_EQ_STR(f.name, "test_forget_exited");		     /* still named as it was */
	CHECK_EQ_INT((int)symbolizer_forget_exited(sy, gone, 8), 1); /* then forgotten */
	CHECK_EQ_INT(gone[0], was);
	CHECK(!known(sy, was));
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	symbolizer_free(sy);
	str_intern_free(si);
}

int main(void)
{
	test_vdso();
	test_forget_exited();
	return check_report("test_symbolize");
}
