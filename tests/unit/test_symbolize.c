/* test_symbolize.c - the symbolizer on this very process: frames in its
 * [vdso] named from the kernel's vDSO image as perf names them
 * (__vdso_clock_gettime, dso [vdso]), as a return address too; libc's
 * clock_gettime still named from its file. */
#include "check.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
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

int main(void)
{
	test_vdso();
	return check_report("test_symbolize");
}
