/* test_attach_reply.c - the attach module's pure parts: a JVM's replies to
 * `load` (JDK 9-20 and 21+ forms, errors) and hsperfdata reading. */
#include <limits.h>
#include <stdlib.h>

#include "attach.h"
#include "check.h"
#include "hsperf.h"

struct reply_case {
	const char *reply;
	int rc, agent_rc;
	const char *msg;
};

static const struct reply_case replies[] = {
	/* JDK 9-20: status, then the agent's return code */
	{ "0\n0\n", 0, 0, "" },
	{ "0\n-1\n", -1, -1, "" },
	{ "0\n1\n", -1, 1, "" },
	/* JDK 21+ */
	{ "0\nreturn code: 0\n", 0, 0, "" },
	{ "0\nreturn code: -1\n", -1, -1, "" },
	{ "0\nreturn code: 3\nsome text\n", -1, 3, "some text" },
	/* the JVM could not load the library: its own text */
	{ "0\nAgent_OnAttach is not available in /x/libz.so\n", -1, INT_MIN,
	  "Agent_OnAttach is not available in /x/libz.so" },
	{ "-1\n/etc/passwd was not loaded.\n/etc/passwd: invalid ELF header\n", -1, INT_MIN,
	  "/etc/passwd was not loaded. /etc/passwd: invalid ELF header" },
	{ "101\n", -1, INT_MIN, "the JVM reported error 101" },
	{ "", -1, INT_MIN, "the JVM's reply makes no sense: ''" },
	{ "garbage", -1, INT_MIN, "the JVM's reply makes no sense: 'garbage'" },
	{ "0\n", -1, INT_MIN, "the JVM did not say whether the agent started" },
};

static void test_replies(void)
{
	for (size_t i = 0; i < sizeof(replies) / sizeof(replies[0]); i++) {
		const struct reply_case *c = &replies[i];
		char msg[256];
		int agent_rc = 12345;
		int rc = attach_parse_load_reply(c->reply, strlen(c->reply), &agent_rc, msg, sizeof(msg));
		CHECK_MSG(rc == c->rc, "case %zu: rc %d", i, rc);
		CHECK_MSG(agent_rc == c->agent_rc, "case %zu: agent_rc %d", i, agent_rc);
		CHECK_MSG(strcmp(msg, c->msg) == 0, "case %zu: msg '%s'", i, msg);
	}
	/* not NUL-terminated, with NULs inside: never read past len */
	char buf[8] = { '0', '\n', '0', '\n', 'X', 'X', 'X', 'X' };
	char msg[64];
	int agent_rc;
	CHECK(attach_parse_load_reply(buf, 4, &agent_rc, msg, sizeof(msg)) == 0 && agent_rc == 0);
	char nul[] = { '0', '\n', '\0', '1' };
	CHECK(attach_parse_load_reply(nul, sizeof(nul), &agent_rc, msg, sizeof(msg)) == -1);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(1 << 20);
	*len = f && buf ? fread(buf, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static void test_hsperf(void)
{
	char path[4096], out[128];
	size_t len;
	const char *dir = getenv("JFLAME_TEST_DATA");
	snprintf(path, sizeof(path), "%s/hsperf/jdk17-attach-on", dir ? dir : "tests/data");
	unsigned char *buf = slurp(path, &len);
	CHECK(len == 32768);
	/* a real JDK 17 image: attach supported (first flag '1') */
	CHECK(hsperf_find_string(buf, len, "sun.rt.jvmCapabilities", out, sizeof(out)) == 0);
	CHECK(strlen(out) == 64 && out[0] == '1');
	CHECK(hsperf_find_string(buf, len, "java.property.java.vm.specification.name", out, sizeof(out)) == 0);
	CHECK(strcmp(out, "Java Virtual Machine Specification") == 0);
	CHECK(hsperf_find_string(buf, len, "no.such.counter", out, sizeof(out)) == -1);
	/* longs: the VM finished starting (the live phase, when agents may be attached) */
	int64_t end = 0, begin = 0;
	CHECK(hsperf_find_long(buf, len, "sun.rt.createVmEndTime", &end) == 0);
	CHECK(hsperf_find_long(buf, len, "sun.rt.createVmBeginTime", &begin) == 0);
	CHECK(begin > 1600000000000LL && end >= begin && end - begin < 60000);
	CHECK(hsperf_find_long(buf, len, "sun.rt.jvmCapabilities", &end) == -1); /* a string */
	/* a prefix of a name is not the name */
	CHECK(hsperf_find_string(buf, len, "sun.rt.jvmCapab", out, sizeof(out)) == -1);
	/* small output buffers are cut, NUL-terminated */
	CHECK(hsperf_find_string(buf, len, "sun.rt.jvmCapabilities", out, 3) == 0 && strlen(out) == 2);
	/* every truncation of the image is safe */
	for (size_t n = 0; n < len; n += 97)
		hsperf_find_string(buf, n, "sun.rt.jvmCapabilities", out, sizeof(out));
	/* not hsperfdata */
	CHECK(hsperf_find_string((const unsigned char *)"hello world, this is not perf data", 34, "x", out,
				 sizeof(out)) == -1);
	free(buf);
}

int main(void)
{
	test_replies();
	test_hsperf();
	return check_report("attach_reply");
}
