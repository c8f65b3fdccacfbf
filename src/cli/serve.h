/* Shared by `uraid serve` and `uraid attach`/`detach` (cmd_serve.c,
 * cmd_attach.c): starting nbdkit with the uraid plugin, and the files in the
 * run directory that record what was started.
 *
 * Run directory ($URAID_RUN_DIR, default /run/uraid) per array NAME:
 *   NAME.sock          control socket (the plugin's, or the daemon's)
 *   NAME.nbd           NBD unix socket (serve's default endpoint)
 *   NAME.export        "pid=N", "start=T" (its start time), "uri=URI",
 *                      "socket=PATH": a running serve
 *   NAME.nbdkit.pid    nbdkit's pidfile, NAME.nbdkit.log its messages
 *   NAME.attach        what attach made (see cmd_attach.c)
 */
#ifndef URAID_CLI_SERVE_H
#define URAID_CLI_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct serve_opts {
	const char *unix_path; /* NBD unix socket (default RUN/NAME.nbd) */
	int port;              /* TCP port instead (0: unix socket) */
	const char *ip_addr;   /* with port: address to listen on (default 127.0.0.1) */
	bool readonly;
	bool keep_going;       /* with readonly: unreadable ranges read as zeros */
	const char *tls;       /* NULL, "off", "on", "require" */
	const char *tls_certs; /* --tls-certificates DIR */
	bool foreground;
	const char *name;    /* --name */
	bool quiet;          /* no "served at" message */
	const char *overlay; /* --overlay DIR: members behind overlays there */
	bool force;          /* --force: assemble --force's rules */
};

/* RUN/NAME+SUFFIX (uraid_run_path): 0, or 1 with "uraid: VERB: why" printed. */
int serve_run_path(const char *verb, const char *name, const char *suffix, char *path, size_t len);

/* Start nbdkit serving MEMBER... (or hand the running array NAME over from
 * its daemon when args is one name). On success fills name (the array's
 * control name), uri and the nbdkit pid; never returns with --foreground
 * (nbdkit replaces the process). Returns 0 or a CLI exit status (message
 * already printed). */
int serve_start(const char *verb, const struct serve_opts *o, int n, char **args, char *name,
                size_t namelen, char *uri, size_t urilen, pid_t *pid);

/* A serve recorded in RUN/NAME.export whose nbdkit is still running (the
 * recorded pid, start time and program, serving NAME): 0 and the uri/pid,
 * else -ENOENT. */
int serve_lookup(const char *name, char *uri, size_t urilen, pid_t *pid);

struct uraid_status;
/* Takeover (serve_takeover.c): stop NAME's daemon once it has let go of its
 * members, and list every member nbdkit must assemble (slots, spares,
 * replacements, the journal) into *members (malloc'ed, *n of them), with
 * the status they had in *before. 0 or an exit status (message printed). */
int serve_handover(const char *verb, const char *name, struct uraid_status *before, char ***members,
                   int *n);
/* After the takeover: NAME reports the members and journal `before` had;
 * else it goes back to a daemon with mm[0..n) and 1 is returned. */
int serve_check_takeover(const char *verb, const char *name, const struct uraid_status *before,
                         char **mm, int n);

/* True while `pid` exists and is not a zombie. */
bool serve_pid_alive(pid_t pid);
/* Wait up to ms for pid to end; true when it did. */
bool serve_wait_pid(pid_t pid, int ms);

#endif
