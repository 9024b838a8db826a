/* test_push.c - unit tests for the Pyroscope push's pure parts: JVM application
 * names from command lines (golden table), series names with labels, and the
 * ingest request (query, multipart form around the profile). */
#include "check.h"
#include "jvm_app.h"
#include "push.h"

#include <stdlib.h>
#include <string.h>

/* "a|b|c" -> "a\0b\0c\0" */
static size_t nul_list(const char *s, char *out, size_t cap)
{
	size_t n = strlen(s);
	if (n + 1 > cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++)
		out[i] = s[i] == '|' ? '\0' : s[i];
	out[n] = '\0';
	return n ? n + 1 : 0;
}

static void test_app_names(void)
{
	static const struct {
		const char *cmdline, *environ, *want;
	} cases[] = {
		{ "java|-Xmx1g|-jar|/opt/kafka/libs/kafka-broker.jar|--config|x", "", "kafka-broker" },
		{ "java|-cp|/app/a.jar:/app/b.jar|com.example.Main|arg", "", "com.example.Main" },
		{ "java|-classpath|x|-XX:+UseG1GC|-Dfoo=bar|org.Main", "", "org.Main" },
		{ "java|--module-path|mods|-m|my.mod/my.pkg.App", "", "my.pkg.App" },
		{ "java|--module|my.mod", "", "my.mod" },
		{ "java|-Dpyroscope.application.name=orders|-jar|app.jar", "", "orders" },
		{ "java|-jar|app.jar", "HOME=/root|PYROSCOPE_APPLICATION_NAME=billing", "billing" },
		{ "java|-Dpyroscope.application.name=|-jar|app.jar", "", "app" }, /* empty: not a name */
		{ "java|-version", "", "" },
		{ "java", "", "" },
		{ "", "", "" },
		{ "java|-jar", "", "" },
		{ "java|-jar|lib/run", "", "run" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char c[512], e[512], out[64];
		size_t cl = nul_list(cases[i].cmdline, c, sizeof(c)), el = nul_list(cases[i].environ, e, sizeof(e));
		size_t n = jvm_app_name(c, cl, e, el, out, sizeof(out));
		CHECK_MSG(strcmp(out, cases[i].want) == 0 && n == strlen(out), "case %zu: '%s', want '%s'", i, out,
			  cases[i].want);
	}
	/* a command line without its last NUL, and a small buffer */
	char out[4];
	CHECK(jvm_app_name("java\0Main", 9, "", 0, out, sizeof(out)) == 3);
	CHECK_EQ_STR(out, "Mai");
}

static void test_series_name(void)
{
	const char *keys[] = { "service_name", "host", "env", "pod", "env", "odd key" };
	const char *values[] = { "orders", "web-1", "prod", "", "staging", "a{b}=c,d\"e" };
	char *n = push_series_name("orders", keys, values, 6);
	/* sorted, empty values left out, the first of a repeated key, bad characters as '_' */
	CHECK_EQ_STR(n, "orders{env=prod,host=web-1,odd_key=a_b__c_d_e,service_name=orders}");
	free(n);
	n = push_series_name("my app", NULL, NULL, 0);
	CHECK_EQ_STR(n, "my_app{}");
	free(n);
}

static void test_request(void)
{
	uint8_t pprof[] = { 0x1f, 0x8b, 8, 0, 1, 2, 3 };
	struct push_profile p = {
		.name = "orders{env=prod,service_name=orders}",
		.from_ns = 1795571903500000000LL,
		.until_ns = 1795571933500000000LL,
		.sample_rate = 99,
		.pprof = pprof,
		.len = sizeof(pprof),
	};
	struct push_request rq;
	CHECK(push_request_build(&p, &rq) == 0);
	CHECK_EQ_STR(rq.path_query,
		     "/ingest?format=pprof&from=1795571903&name=orders%7Benv%3Dprod%2Cservice_name%3Dorders%7D"
		     "&spyName=jflame&until=1795571933&sampleRate=99");
	CHECK_EQ_STR(rq.content_type, "application/octet-stream");
	CHECK(rq.len == sizeof(pprof) && memcmp(rq.body, pprof, sizeof(pprof)) == 0);
	push_request_free(&rq);
	/* a window shorter than a second still spans one */
	p.until_ns = p.from_ns + 200000000;
	CHECK(push_request_build(&p, &rq) == 0);
	CHECK_HAS_STR(rq.path_query, "&from=1795571903&");
	CHECK_HAS_STR(rq.path_query, "&until=1795571904&");
	push_request_free(&rq);
}

int main(void)
{
	test_app_names();
	test_series_name();
	test_request();
	return check_report("test_push");
}
