/* builtin.h - the subcommands of jflame, one builtin-<name>.c each, as in
 * Linux perf; jflame.c dispatches to them. */
#ifndef JFLAME_BUILTIN_H
#define JFLAME_BUILTIN_H

/* Each returns the process exit code: 0 success, 1 failure, 2 bad usage. */
int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_svg(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_heatmap(int argc, char **argv);
int cmd_convert(int argc, char **argv);

#endif
