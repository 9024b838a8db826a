/* test_kernel_names.c - kernel frames named by the kernel itself (the sampler's
 * ksym_names program, %pS), refereed by /proc/kallsyms: every 40th text symbol
 * of the core kernel and its modules gets its own name or an alias's; a batch
 * names as single calls do; the symbolizer's table of them, with a stand-in
 * for the kernel (its first kernel frame alone in its stack, batches, growth). */
#include "check.h"
#include "sampler.h"
#include "symbolize.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct ksym {
	uint64_t addr;
	char name[128];
};

static int by_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct ksym *)a)->addr, y = ((const struct ksym *)b)->addr;
	return x < y ? -1 : x > y;
}

/* The text symbols of /proc/kallsyms (not BPF programs': they come and go). */
static struct ksym *read_kallsyms(size_t *n)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	size_t cap = 0;
	struct ksym *v = NULL;
	*n = 0;
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[128], mod[64] = "";
		if (sscanf(line, "%llx %c %127s %63s", &addr, &type, name, mod) < 3 || !addr)
			continue;
		if ((type != 't' && type != 'T') || strcmp(mod, "[bpf]") == 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *t = realloc(v, cap * sizeof(*v));
			if (!t)
				break;
			v = t;
		}
		v[*n].addr = addr;
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", name);
		(*n)++;
	}
	fclose(f);
	qsort(v, *n, sizeof(*v), by_addr);
	return v;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The kernel as the symbolizer sees it: "fake_<addr>"; counts its calls. */
static int fake_calls;

static int fake_names(void *ctx, const uint64_t *addr, size_t n, char (*out)[PROFILE_KSYM_LEN])
{
	(void)ctx;
	fake_calls++;
	for (size_t i = 0; i < n; i++)
		snprintf(out[i], PROFILE_KSYM_LEN, "fake_%llx", (unsigned long long)addr[i]);
	return 0;
}

static void test_symbolizer_table(void)
{
	char err[256] = "", want[64];
	struct str_intern *si = str_intern_new();
	struct symbolizer *sy = si ? symbolizer_new(si, err, sizeof(err)) : NULL;
	CHECK(sy != NULL);
	if (!sy)
		return;
	symbolizer_kernel_names(sy, fake_names, NULL);
	/* the very first kernel frame asked for alone (no prefetch made the table) */
	struct frame f = symbolize_kernel(sy, 0xffffffff81000010ULL);
	CHECK_EQ_STR(f.name, "fake_ffffffff81000010");
	CHECK_EQ_INT(fake_calls, 1);
	/* a stack's new frames in batches; known ones not asked again; the table grows */
	uint64_t pcs[3000];
	for (size_t i = 0; i < 3000; i++)
		pcs[i] = 0xffffffff82000000ULL + 16 * i;
	symbolizer_kernel_prefetch(sy, pcs, 3000);
	CHECK_EQ_INT(fake_calls, 1 + (3000 + PROFILE_KSYM_BATCH - 1) / PROFILE_KSYM_BATCH);
	for (size_t i = 0; i < 3000; i += 7) {
		snprintf(want, sizeof(want), "fake_%llx", (unsigned long long)pcs[i]);
		CHECK_EQ_STR(symbolize_kernel(sy, pcs[i]).name, want);
	}
	CHECK_EQ_STR(symbolize_kernel(sy, 0xffffffff81000010ULL).name, "fake_ffffffff81000010");
	CHECK_EQ_INT(fake_calls, 1 + (3000 + PROFILE_KSYM_BATCH - 1) / PROFILE_KSYM_BATCH);
	symbolizer_free(sy);
	str_intern_free(si);
}

int main(void)
{
	test_symbolizer_table();
	const char *ci = getenv("CI");
	int must = ci && strcmp(ci, "true") == 0;
	char err[512] = "", name[PROFILE_KSYM_LEN];
	pid_t self = getpid();
	struct sampler_opts o = { .freq = 1, .pids = &self, .npids = 1, .event = event_kind_named("offcpu") };
	struct sampler *s = sampler_open(&o, NULL, NULL, err, sizeof(err));
	if (!s) {
		if (must)
			CHECK_MSG(0, "CI=true and the sampler does not open: %s", err);
		else
			printf("test_kernel_names: skipping: %s\n", err);
		return check_report("test_kernel_names");
	}
	size_t n = 0, asked = 0, same = 0, alias = 0;
	struct ksym *v = read_kallsyms(&n);
	CHECK(v && n > 1000);
	double t0 = now_us();
	for (size_t i = 0; v && i < n; i += 40) {
		/* the symbol's first byte, and one past it where it is longer */
		for (int d = 0; d < 2; d++) {
			uint64_t a = v[i].addr + (uint64_t)d;
			if (d && i + 1 < n && v[i + 1].addr <= a)
				break;
			int rc = sampler_kernel_name(s, a, name, sizeof(name));
			asked++;
			CHECK_MSG(rc == 1, "%#llx (%s): %d", (unsigned long long)a, v[i].name, rc);
			if (rc != 1)
				continue;
			if (strcmp(name, v[i].name) == 0) {
				same++;
				continue;
			}
			/* another name at the same address */
			bool found = false;
			size_t lo = i;
			while (lo > 0 && v[lo - 1].addr == v[i].addr)
				lo--;
			for (size_t j = lo; j < n && v[j].addr == v[i].addr && !found; j++)
				found = strcmp(v[j].name, name) == 0;
			CHECK_MSG(found, "%#llx: the kernel says %s, /proc/kallsyms %s", (unsigned long long)a, name,
				  v[i].name);
			alias += found;
		}
	}
	double dt = now_us() - t0;
	printf("test_kernel_names: %zu addresses named by the kernel (%zu by the same name as /proc/kallsyms' line, "
	       "%zu by an alias), %.2f us each\n",
	       asked, same, alias, asked ? dt / (double)asked : 0.0);
	CHECK(asked > 1000);
	/* a batch (one call) names as each alone does, "" where there is no symbol */
	if (v && n > 64 * PROFILE_KSYM_BATCH) {
		uint64_t batch[PROFILE_KSYM_BATCH];
		char out[PROFILE_KSYM_BATCH][PROFILE_KSYM_LEN];
		for (size_t i = 0; i < PROFILE_KSYM_BATCH; i++)
			batch[i] = i == 5 ? 1 : v[i * 64].addr;
		CHECK_EQ_INT(sampler_kernel_names(s, batch, PROFILE_KSYM_BATCH, out), 0);
		for (size_t i = 0; i < PROFILE_KSYM_BATCH; i++) {
			int rc = sampler_kernel_name(s, batch[i], name, sizeof(name));
			CHECK_EQ_STR(out[i], rc == 1 ? name : "");
		}
		CHECK_EQ_STR(out[5], "");
		CHECK_EQ_INT(sampler_kernel_names(s, batch, PROFILE_KSYM_BATCH + 1, out), -1); /* too many */
	}
	/* no symbol: low addresses, user space */
	CHECK_EQ_INT(sampler_kernel_name(s, 1, name, sizeof(name)), 0);
	CHECK_EQ_INT(sampler_kernel_name(s, 0x7f0000001000ULL, name, sizeof(name)), 0);
	/* a short buffer gets the name cut, terminated */
	if (v && n) {
		char small[4];
		CHECK_EQ_INT(sampler_kernel_name(s, v[0].addr, small, sizeof(small)), 1);
		CHECK(strlen(small) <= 3);
	}
	free(v);
	sampler_close(s);
	return check_report("test_kernel_names");
}
