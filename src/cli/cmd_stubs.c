/* Verbs not built yet. Each is a weak symbol: the file that implements a verb
 * defines the strong one and this stub drops out at link time. */
#include "cli/cli.h"

#define STUB(fn, verb)                                         \
	__attribute__((weak)) int fn(int argc, char **argv)    \
	{                                                      \
		(void)argc;                                    \
		(void)argv;                                    \
		return cli_error(verb, "not implemented yet"); \
	}

STUB(cmd_examine, "examine")
STUB(cmd_cat, "cat")
STUB(cmd_create, "create")
STUB(cmd_assemble, "assemble")
STUB(cmd_detail, "detail")
STUB(cmd_status, "status")
STUB(cmd_fail, "fail")
STUB(cmd_remove, "remove")
STUB(cmd_add, "add")
STUB(cmd_replace, "replace")
STUB(cmd_check, "check")
STUB(cmd_repair, "repair")
STUB(cmd_stop, "stop")
STUB(cmd_serve, "serve")
STUB(cmd_attach, "attach")
STUB(cmd_detach, "detach")
STUB(cmd_geometry, "geometry")
STUB(cmd_mirror, "mirror")
STUB(cmd_raid3, "raid3")
STUB(cmd_daemon, "daemon")
STUB(cmd_bench, "bench")
