/* Status wording for gmirror and graid3 arrays, in gmirror(8) list's words
 * where it has them (balance, slice, flags, GenID, SyncID). */
#include <stdio.h>
#include <string.h>

#include "cli/status_geom.h"
#include "meta/geom.h"

void cli_geom_flags(const struct uraid_status *st, char *buf, size_t len)
{
	uint64_t f = st->geom_flags;
	bool m = st->level == URAID_LEVEL_GMIRROR;
	snprintf(buf, len, "%s%s%s%s",
	         (m ? f & URAID_GEOM_F_MIRROR_NOAUTOSYNC : f & URAID_GEOM_F_RAID3_NOAUTOSYNC)
	             ? "NOAUTOSYNC "
	             : "",
	         (m ? f & URAID_GEOM_F_MIRROR_NOFAILSYNC : f & URAID_GEOM_F_RAID3_NOFAILSYNC)
	             ? "NOFAILSYNC "
	             : "",
	         !m && (f & URAID_GEOM_F_RAID3_ROUND_ROBIN) ? "ROUND-ROBIN " : "",
	         !m && (f & URAID_GEOM_F_RAID3_VERIFY) ? "VERIFY " : "");
	size_t l = strlen(buf);
	if (l)
		buf[l - 1] = 0;
	else
		snprintf(buf, len, "NONE");
}

void cli_geom_mdstat(const struct uraid_status *st)
{
	char fl[64];
	cli_geom_flags(st, fl, sizeof(fl));
	printf("      %llu blocks ", (unsigned long long)st->array_sectors / 2);
	if (st->level == URAID_LEVEL_GMIRROR) {
		const char *b = geom_balance_name(st->geom_balance);
		printf("gmirror balance %s", b ? b : "?");
		if (st->geom_balance == GEOM_BALANCE_SPLIT)
			printf(" slice %u", st->geom_slice);
	} else {
		printf("graid3 %u-byte sectors", st->block_bytes);
	}
	printf(" flags %s", fl);
}

void cli_geom_detail(const struct uraid_status *st)
{
	char fl[64];
	cli_geom_flags(st, fl, sizeof(fl));
	if (st->level == URAID_LEVEL_GMIRROR) {
		const char *b = geom_balance_name(st->geom_balance);
		printf("           Balance : %s\n             Slice : %u\n", b ? b : "?",
		       st->geom_slice);
	} else {
		printf("       Sector Size : %u\n     Parity Errors : %llu\n", st->block_bytes,
		       (unsigned long long)st->geom_parity_errors);
	}
	printf("             Flags : %s\n             GenID : %u\n            SyncID : %u\n", fl,
	       st->geom_genid, st->geom_syncid);
}

void cli_geom_json(const struct uraid_status *st)
{
	char fl[64];
	cli_geom_flags(st, fl, sizeof(fl));
	const char *b = geom_balance_name(st->geom_balance);
	printf(",\"block_bytes\":%u,\"geom\":{\"balance\":\"%s\",\"slice\":%u,\"flags\":\"%s\","
	       "\"genid\":%u,\"syncid\":%u,\"parity_errors\":%llu,\"priorities\":[",
	       st->block_bytes, st->level == URAID_LEVEL_GMIRROR && b ? b : "", st->geom_slice, fl,
	       st->geom_genid, st->geom_syncid, (unsigned long long)st->geom_parity_errors);
	for (int i = 0; i < st->nmembers; i++)
		printf("%s%d", i ? "," : "", st->members[i].priority);
	printf("]}");
}
