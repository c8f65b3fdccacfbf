/* Published RAID measurements (the .md files of ../shared/reference/published/, the form
 * its README describes) read into what the simulator needs to run the same
 * configurations: the disks and their simulator profiles, the tunables
 * (read-ahead, stripe cache, queue depth, chunk, level, member counts), the
 * workload (concurrent streams, reading or writing), the figure tables and
 * the configurations named without figures. A pure parser: text in, a
 * struct out, nothing else touched (fuzz/fuzz_published.c). */
#ifndef URAID_SIM_PUBLISHED_H
#define URAID_SIM_PUBLISHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_NAME_MAX  128
#define SP_MAX_DISKS 4
#define SP_MAX_COLS  12
#define SP_MAX_ROWS  48

struct sp_disk {
	char label[16];   /* how configurations name it: "250", "500", "300" */
	char profile[64]; /* the built-in simulator profile */
	int count;        /* disks of this kind in the machine */
};

/* A figure column: streams (a number heading), or a sequential write or read
 * rate ("... write MB/s"); other columns (seconds, files/s) are kept out. */
enum sp_col { SP_COL_STREAMS, SP_COL_SEQWRITE, SP_COL_SEQREAD };

struct sp_row {
	char name[SP_NAME_MAX]; /* the row's name as the file writes it */
	double v[SP_MAX_COLS];  /* per kept column; < 0: no figure (n/a) */
};

struct sp_table {
	char title[SP_NAME_MAX];
	bool freebsd;
	struct sp_disk disks[SP_MAX_DISKS];
	int ndisks;
	uint64_t readahead; /* bytes in flight per stream; 0 = not said */
	int stripe_cache;   /* stripe_cache_size; -1 = not said */
	int queue_depth;    /* 0 = not said; 1 = NCQ off */
	uint32_t chunk;     /* bytes; 0 = not said */
	int level;          /* md level; -1 = not said */
	int nmin, nmax;     /* member counts "N = a..b"; 0 = not said */
	int smin, smax;     /* concurrent streams of the workload "N = a..b"; 0 = not said */
	double bus_mbs;     /* the controller all disks share; 0 = none known */
	bool write;         /* the workload writes */
	enum sp_col col[SP_MAX_COLS];
	int streams[SP_MAX_COLS]; /* SP_COL_STREAMS: the heading's number */
	int ncols;
	struct sp_row rows[SP_MAX_ROWS];
	int nrows;
	char withheld[SP_MAX_ROWS][SP_NAME_MAX]; /* configurations named without figures */
	int nwithheld;
};

/* Parse `len` bytes of `text` (need not be NUL-terminated). -EINVAL with a
 * message ("LINE: ...") for what does not fit the form: no title, a table row
 * with more cells than its heading, a figure that is not a number or "n/a",
 * too many rows, columns or disks. */
int sp_parse(const char *text, size_t len, struct sp_table *t, char *err, size_t errlen);

/* Member profiles of a configuration name's disk spec ("3x250/2x500"): the
 * profile names in member order into out[0..max); returns the count, or
 * -EINVAL when the name has no spec or names a disk the table lacks. */
int sp_config_disks(const struct sp_table *t, const char *name, const char **out, int max);

#endif
