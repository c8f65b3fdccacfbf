/* libFuzzer target for the configuration file parser (src/control/config.c):
 * any bytes either parse or are refused with a message naming the file and
 * a line; what parses holds only bounded, terminated strings, names that
 * pass uraid_name_check and UUIDs in md's printed form, and every ARRAY line
 * can be looked up again by its name and by its UUID. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uraid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uraid_config *c;
	char err[512];
	int rc = uraid_config_parse((const char *)data, size, "fuzz.conf", &c, err, sizeof(err));
	if (rc < 0) {
		if (strncmp(err, "fuzz.conf:", 10) || c)
			abort();
		return 0;
	}
	for (int i = 0; i < c->narrays; i++) {
		const struct uraid_config_array *a = &c->arrays[i];
		if (a->name[0] && uraid_name_check(a->name, NULL, 0) < 0)
			abort();
		if (a->uuid[0]) {
			char u[36];
			if (strlen(a->uuid) != 35 || uraid_uuid_parse(a->uuid, u) < 0 ||
			    strcmp(u, a->uuid))
				abort();
			if (!uraid_config_find(c, a->uuid))
				abort();
		}
		if (a->name[0] && !uraid_config_find(c, a->name))
			abort();
		if (a->line < 1 || (a->spares < -1) ||
		    (!a->uuid[0] && !a->md_name[0] && !a->ndevices))
			abort();
		for (int k = 0; k < a->ndevices; k++)
			if (!a->devices[k][0] || strchr(a->devices[k], ','))
				abort();
	}
	for (int i = 0; i < c->ndevice; i++)
		if (strlen(c->device[i]) > size)
			abort();
	uraid_config_free(c);
	return 0;
}
