/* record_launch.h - record's launch mode: the command started stopped, with the agent and
 * the JVM flags, let go once sampling runs, reaped, and its exit code handed on. */
#ifndef JFLAME_RECORD_LAUNCH_H
#define JFLAME_RECORD_LAUNCH_H

#include "record_session.h"

/* Forks r->o.command, stopped until record_launch_go(): 0, or -1 with one line in err. */
int record_launch_start(struct record *r, char *err, size_t errlen);
/* Lets it exec once sampling runs: 0, or -1 (it could not run) with one line in err. */
int record_launch_go(struct record *r, char *err, size_t errlen);
/* Notes its exit (block: waits for it). */
void record_launch_reap(struct record *r, bool block);
/* The command's exit code from the recording's rc and the command's own. */
int record_launch_end(struct record *r, int rc);

#endif
