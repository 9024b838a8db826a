/* test_name_normalize.c - the names a JVM restart changes, made alike: a table of
 * frames (JDK 17 and 21+ lambda and hidden-class spellings, generated accessors,
 * pool threads) and whole folded stacks with their roots. */
#include <string.h>

#include "check.h"
#include "name_normalize.h"

static const struct {
	const char *in, *want;
	int thread;
} frames[] = {
	{ "jflame/examples/KafkaStyle$$Lambda$8.0x00007f77c4006228.run_[0]", "jflame/examples/KafkaStyle$$Lambda.run",
	  0 },
	{ "jflame/examples/Workload$$Lambda.0x0000000044041000.run_[0]", "jflame/examples/Workload$$Lambda.run", 0 },
	{ "Foo$$Lambda/0x0000000800c01234.apply_[j]", "Foo$$Lambda.apply", 0 },
	{ "Foo$$Lambda+0x0000000800c01234.apply", "Foo$$Lambda.apply", 0 },
	{ "java/lang/invoke/LambdaForm$MH.0x00000008000c4400.invoke_[i]", "java/lang/invoke/LambdaForm$MH.invoke", 0 },
	{ "jdk/internal/reflect/GeneratedMethodAccessor123.invoke_[j]",
	  "jdk/internal/reflect/GeneratedMethodAccessor.invoke", 0 },
	{ "jdk/internal/reflect/GeneratedConstructorAccessor7.newInstance",
	  "jdk/internal/reflect/GeneratedConstructorAccessor.newInstance", 0 },
	{ "sun/reflect/GeneratedSerializationConstructorAccessor42.newInstance",
	  "sun/reflect/GeneratedSerializationConstructorAccessor.newInstance", 0 },
	/* left alone: addresses that are data, numbers that are names */
	{ "java/lang/Long.toHexString_[j]", "java/lang/Long.toHexString", 0 },
	{ "Foo.bar_[j]_[i]_[0]", "Foo.bar", 0 },
	{ "Foo.invoke_[j]/0x0000000800c01234", "Foo.invoke", 0 }, /* a pass uncovers a mark */
	{ "memcpy@0x1234", "memcpy@0x1234", 0 },
	{ "[unknown]", "[unknown]", 0 },
	{ "C2 CompilerThread0", "C2 CompilerThread0", 1 },
	{ "Foo$$Lambda$x.run", "Foo$$Lambda$x.run", 0 },
	{ "GeneratedMethodAccessor.invoke", "GeneratedMethodAccessor.invoke", 0 },
	/* thread frames */
	{ "pool-3-thread-7", "pool-N-thread-N", 1 },
	{ "GC Thread#1", "GC Thread#N", 1 },
	{ "ForkJoinPool-1-worker-12", "ForkJoinPool-N-worker-N", 1 },
	{ "kafka-producer-network-thread | producer-1", "kafka-producer-network-thread | producer-N", 1 },
	{ "jflame-hot-worker-thread-with-a-long-name", "jflame-hot-worker-thread-with-a-long-name", 1 },
	{ "x-12abc", "x-12abc", 1 },
	{ "pool-3-thread-7", "pool-3-thread-7", 0 }, /* not the thread frame */
};

static const struct {
	const char *in, *want;
} stacks[] = {
	{ "[4242] java;pool-3-thread-7;java/lang/Thread.run_[0];Foo$$Lambda$8.0x00007f87c4006228.run_[j]",
	  "[*] java;pool-N-thread-N;java/lang/Thread.run;Foo$$Lambda.run" },
	{ "[Pod]1234-abcd;[Con]0123456789ab;[1] java;GC Thread#0;G1ParTask::work",
	  "[Pod]*;[Con]*;[*] java;GC Thread#N;G1ParTask::work" },
	{ "main;foo;GeneratedMethodAccessor9.invoke", "main;foo;GeneratedMethodAccessor.invoke" },
	{ "a;b;c", "a;b;c" },
	{ "[12] bash;bash;main", "[*] bash;bash;main" },
	{ "[x] odd;y", "[x] odd;y" },
	{ "a;;b;", "a;;b;" }, /* empty frames kept */
	{ ";[7] x;t-1;", ";[*] x;t-N;" },
	{ "[Pod];[Pod];[Con];[Pod];[9] j;w-2", "[Pod]*;[Pod]*;[Con]*;[Pod]*;[*] j;w-N" }, /* roots grow */
};

int main(void)
{
	char out[512];
	for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
		size_t n = name_normalize_frame(frames[i].in, strlen(frames[i].in), frames[i].thread, out, sizeof(out));
		CHECK_EQ_STR(out, frames[i].want);
		CHECK_EQ_U64(n, strlen(frames[i].want));
	}
	/* cut to fit, always terminated */
	size_t n = name_normalize_frame("pool-3-thread-7", 15, 1, out, 5);
	CHECK_EQ_U64(n, 4);
	CHECK_EQ_STR(out, "pool");
	struct str_intern *si = str_intern_new();
	CHECK(si != NULL);
	for (size_t i = 0; si && i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		const char *r = name_normalize_stack(si, stacks[i].in);
		CHECK_EQ_STR(r, stacks[i].want);
		if (strcmp(stacks[i].in, stacks[i].want) == 0)
			CHECK(r == stacks[i].in); /* nothing to change: the stack itself */
	}
	str_intern_free(si);
	return check_report("test_name_normalize");
}
