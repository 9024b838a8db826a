/* jflame.c - the jflame command: a small dispatch table from subcommand name
 * to its builtin-<name>.c, plus --help and --version. */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "msg.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd commands[] = {
	{ "record", cmd_record, "sample stacks with eBPF and write a mixed-mode flame graph" },
	{ "attach", cmd_attach, "load the agent into a running JVM (names its Java frames)" },
	{ "collapse", cmd_collapse, "fold perf script text (or .stacks) into folded stacks" },
	{ "svg", cmd_svg, "draw folded stacks as an interactive flame graph (flamegraph.pl options)" },
	{ "diff", cmd_diff, "compare two folded profiles: differential flame graph or side-by-side page" },
	{ "heatmap", cmd_heatmap, "subsecond-offset heat map (HTML) of timestamped samples; flame graph of a range" },
	{ "convert", cmd_convert, "convert between folded, .stacks, pprof (.pb.gz) and speedscope (.json)" },
};

static void help(FILE *out)
{
	fprintf(out, "usage: jflame <command> [options]\n\n"
		     "Where a Java service spends its CPU: Java, JVM, native and kernel frames\n"
		     "in one flame graph.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'jflame <command> --help' describes a command.\n\n"
		     "example:\n  jflame record -p $(pgrep -f app.jar) -d 30 -o cpu.svg\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		help(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		help(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("jflame %s\n", JFLAME_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	msg_say("unknown command '%s'; see jflame --help\n", argv[1]);
	return 2;
}
