/* Helpers every verb and the bench share: error messages, size arguments. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cli_error(const char *verb, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "uraid: %s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int cli_parse_size(const char *s, unsigned long long default_unit, unsigned long long *out)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	unsigned long long unit = default_unit;
	switch (*end) {
	case 0: break;
	case 'b':
	case 'B':
		unit = 1;
		end++;
		break;
	case 's':
	case 'S':
		unit = 512;
		end++;
		break;
	case 'k':
	case 'K':
		unit = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		unit = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		unit = 1ull << 30;
		end++;
		break;
	case 't':
	case 'T':
		unit = 1ull << 40;
		end++;
		break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (unit && v > ~0ull / unit)
		return -ERANGE;
	*out = v * unit;
	return 0;
}
