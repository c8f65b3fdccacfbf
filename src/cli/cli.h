/* The uraid command line: one function per verb, dispatched by main.c. */
#ifndef URAID_CLI_H
#define URAID_CLI_H

#include <stdio.h>

/* Each verb gets argv starting at the verb itself (argv[0] = "examine").
 * Returns the process exit status. */
typedef int cli_cmd_fn(int argc, char **argv);

cli_cmd_fn cmd_version, cmd_examine, cmd_cat, cmd_create, cmd_assemble, cmd_detail, cmd_status,
    cmd_stripe_cache, cmd_fail, cmd_remove, cmd_add, cmd_re_add, cmd_add_journal, cmd_journal_mode,
    cmd_consistency_policy, cmd_replace, cmd_check, cmd_repair, cmd_stop, cmd_bench, cmd_serve,
    cmd_attach, cmd_detach, cmd_geometry, cmd_mirror, cmd_raid3, cmd_daemon, cmd_write,
    cmd_detail_main, cmd_incremental, cmd_monitor, cmd_overlay, cmd_build, cmd_probe;
cli_cmd_fn cmd_grow; /* cmd_grow.c */
/* cmd_mdtools.c: md's small verbs */
cli_cmd_fn cmd_zero_superblock, cmd_readonly, cmd_readwrite, cmd_wait, cmd_action, cmd_sync_speed,
    cmd_add_spare;

/* Print "uraid: <verb>: <message>" to stderr; returns exit status 1. */
int cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a size with optional K/M/G/T suffix (powers of 1024; bare number =
 * bytes unless default_unit says otherwise). -EINVAL on junk or overflow. */
int cli_parse_size(const char *s, unsigned long long default_unit, unsigned long long *out);

#endif
