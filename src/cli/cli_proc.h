/* Which process a pid recorded in the run directory stands for. A pid alone
 * proves nothing (it is reused, and a state file can name any), so uraid
 * records the process's start time next to it and, before it signals the
 * process, checks that the pid still has that start time and runs the
 * program it started, with the argument that names the array. */
#ifndef URAID_CLI_PROC_H
#define URAID_CLI_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Start time of pid in clock ticks after boot (/proc/PID/stat, field 22);
 * 0 when there is no such process or it is a zombie. */
unsigned long long proc_start_time(pid_t pid);

enum proc_match {
	PROC_GONE,  /* no process has that pid and start time: the one recorded ended */
	PROC_SAME,  /* the recorded process, running `exe` with `arg` */
	PROC_OTHER, /* that pid and start time, but another program: not ours */
};
/* exe: the executable's file name ("nbdkit"); arg: one of its arguments
 * (exactly), or NULL. On PROC_OTHER `why` says what differs. */
enum proc_match proc_check(pid_t pid, unsigned long long start, const char *exe, const char *arg,
                           char *why, size_t whylen);

/* Sleep ms milliseconds (polling loops). */
void cli_msleep(long ms);

#endif
