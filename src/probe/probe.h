/* uraid probe: what a set of members is, from their bytes alone. Pure
 * functions over a read callback (no files, no writes), so tests feed them
 * made-up members and the CLI feeds them images or devices.
 *
 * signatures.c recognises on-disk signatures in a buffer: md superblocks
 * (through src/meta), GEOM, DDF, IMSM, LVM PV labels, GPT/MBR, and the
 * file systems that tell where a logical volume starts (ext2/3/4, XFS,
 * btrfs). infer.c proposes geometries (level, members and their order,
 * chunk, layout, data offset, which member is missing) and scores each by
 * what the data says: parity or copies that agree over sampled stripes,
 * and file system structures found where the geometry puts them
 * (fs_evidence.c walks ext4 directories and XFS allocation groups). */
#ifndef URAID_PROBE_H
#define URAID_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_MAX_MEMBERS 16
#define PROBE_MAX_CAND    8
#define PROBE_HEAD_BYTES  (68u * 1024) /* what probe_sig_head looks at (btrfs: 64K + 4K) */
#define PROBE_TAIL_BYTES  (8u * 1024)  /* what probe_sig_tail looks at: a member's last 8 KiB */

/* Read len bytes at byte offset off of member `member`: 0 or negative errno. */
typedef int (*probe_read_fn)(void *ctx, int member, void *buf, size_t len, uint64_t off);

enum probe_sig_kind {
	PROBE_SIG_NONE = 0,
	PROBE_SIG_EXT,   /* ext2/3/4 superblock, group 0 */
	PROBE_SIG_XFS,   /* XFS superblock */
	PROBE_SIG_BTRFS, /* btrfs primary superblock */
	PROBE_SIG_GPT,   /* GPT header at LBA 1 */
	PROBE_SIG_MBR,   /* MBR partition table (0x55AA, sane entries) */
	PROBE_SIG_LVM,   /* LVM2 PV label */
	PROBE_SIG_MD,    /* md superblock (any version) */
	PROBE_SIG_GEOM,  /* FreeBSD GEOM mirror/raid3 metadata */
	PROBE_SIG_DDF,   /* SNIA DDF anchor */
	PROBE_SIG_IMSM,  /* Intel Matrix Storage metadata */
};

struct probe_sig {
	enum probe_sig_kind kind;
	int member;       /* which member (set by the caller) */
	int given;        /* its place in the probe's input (member, before any is left out) */
	uint32_t xor_out; /* found in the XOR of the members: bit i, member i left out of it */
	uint64_t offset;  /* bytes: where on the member the volume/metadata starts */
	char text[200];   /* what it is, for people */
	/* File systems: their size (bytes), so a geometry must hold them. */
	uint64_t fs_bytes;
	/* md superblocks. */
	int md_version; /* 0, 10, 11, 12 */
	int md_level, md_raid_disks, md_role;
	uint32_t md_layout, md_chunk_sectors;
	uint64_t md_data_offset, md_size;
	uint8_t md_uuid[16];
};

/* A volume starting at buf[0] (len >= 4096; btrfs needs PROBE_HEAD_BYTES):
 * fills *s and returns 1 when one is recognised, else 0. Never reads past
 * len, whatever the bytes say (fuzzed: fuzz/fuzz_probe_sig.c). */
int probe_sig_head(const uint8_t *buf, size_t len, struct probe_sig *s);
/* Metadata at a member's end: buf holds its last `len` bytes (len a multiple
 * of 512, at most PROBE_TAIL_BYTES), dev_bytes its size. 1 when found. */
int probe_sig_tail(const uint8_t *buf, size_t len, uint64_t dev_bytes, struct probe_sig *s);
/* An md superblock of `version` in the 4 KiB block buf. 1 when found. */
int probe_sig_md(int version, const uint8_t *buf, size_t len, struct probe_sig *s);

/* One proposed geometry. */
struct probe_candidate {
	int level; /* enum uraid_level */
	uint32_t layout;
	uint32_t chunk_sectors;
	int raid_devices;
	uint64_t data_offset;         /* sectors, every member */
	int order[PROBE_MAX_MEMBERS]; /* role -> input member, -1 missing */
	int agree, disagree;          /* evidence counts */
	double score;                 /* agree / (agree + disagree) */
	uint64_t slack;               /* array bytes after the file system found */
	bool from_superblock;         /* the md superblocks said so */
	bool raw;                     /* from content continuity alone (raw.c) */
	int rot_agree, rot_disagree;  /* parity levels: data chunks' continuity in their rows */
	int unpinned;                 /* roles whose order no check pinned (order.c) */
	uint32_t ties;                /* bit i: within noise of cand[i], reading otherwise */
	char evidence[900];
};

struct probe_input {
	int n;
	uint64_t size[PROBE_MAX_MEMBERS]; /* bytes */
	probe_read_fn read;
	void *ctx;
	/* Called now and then with a line of what is being done (may be NULL). */
	void (*progress)(void *ctx, const char *what);
};

struct probe_result {
	int nsigs;
	struct probe_sig sigs[4 * PROBE_MAX_MEMBERS];
	int ncand; /* convincing candidates, best first */
	struct probe_candidate cand[PROBE_MAX_CAND];
	/* When nothing is convincing: the best of what was tried, and why not. */
	struct probe_candidate best_rejected;
	bool have_rejected;
	char summary[600];
	uint64_t bytes_read;
};

/* Probe the members: signatures first (md superblocks give the geometry
 * outright), else inference from the data. 0 (result filled; ncand may be
 * 0: nothing convincing), or a negative errno (a member could not be
 * read; err says which). */
int probe_run(const struct probe_input *in, struct probe_result *out, char *err, size_t errlen);

/* ---- internals shared by infer.c and fs_evidence.c ---- */

/* Logical reads through a candidate geometry over the input members
 * (missing members rebuilt from parity when the level allows). */
struct probe_view {
	const struct probe_input *in;
	const struct probe_candidate *c;
	uint64_t array_bytes;
	uint64_t *bytes_read;
	/* Roles may be PROBE_ROLE_UNKNOWN: the first read that needs one sets
	 * *blocked to it (when blocked is not NULL; it starts at -1), and from
	 * then on every read fails and no check counts (the order search
	 * then tries each member for that role). */
	int *blocked;
	/* Set when a rebuild from parity needed an unchosen role: that one
	 * check does not count, the others go on. */
	int *skipped;
};
#define PROBE_ROLE_UNKNOWN (-3)
int probe_view_read(const struct probe_view *v, void *buf, size_t len, uint64_t off);

/* File system structures the geometry must put in the right places:
 * agree/disagree counts added to *c, the first few noted in its evidence. */
void probe_fs_evidence(const struct probe_view *v, const struct probe_sig *start,
                       struct probe_candidate *c, int max_points);

/* A structure the file system names itself in (a backup superblock with
 * its group number, an XFS allocation group header with its number), at
 * logical byte `off` of the volume: whichever member holds it where a
 * geometry puts it is the member of that role. */
enum probe_point_kind {
	PROBE_PT_EXT_SB = 1,
	PROBE_PT_XFS_SB,
	PROBE_PT_XFS_AGF,
	PROBE_PT_XFS_AGI,
	PROBE_PT_BTRFS,
	PROBE_PT_GPT,
};
struct probe_point {
	uint64_t off;
	uint8_t kind;
	uint32_t id;
};
#define PROBE_MAX_POINTS 24
/* The points of the volume whose first 4 KiB are head (start: what was
 * found there): how many were written to p (at most max). */
int probe_fs_points(const uint8_t *head, size_t len, const struct probe_sig *start,
                    struct probe_point *p, int max);
/* Whether the 512 bytes at b are point p. */
bool probe_point_holds(const struct probe_point *p, const uint8_t *b);

/* Every order of members over a candidate's roles that the points allow
 * (order.c): c gives level, layout, chunk, raid_devices and data offset;
 * `miss` roles are missing and `out` input members left out (unrelated
 * disks). each() is called with c->order filled; it returns false to stop.
 * Returns the orders tried, or -1 when the search was cut short. */
struct probe_order_search {
	const struct probe_input *in;
	const struct probe_point *pts;
	int npts;
	int start_member; /* holds logical sector 0 (-1: a missing member does) */
	int miss, out;
	bool mirror; /* raid1: one order per set of members */
	uint64_t *bytes;
	bool (*each)(void *ctx, struct probe_candidate *c);
	/* The checks of a partial order (roles not yet chosen are
	 * PROBE_ROLE_UNKNOWN): -1 when they disagree already, -2 when no
	 * check needs an unchosen role, else the role the first check needs.
	 * NULL: every allowed order goes to each(). */
	int (*partial)(void *ctx, const struct probe_candidate *c);
	void *ctx;
};
long probe_orders(const struct probe_order_search *s, struct probe_candidate *c);

/* How alike two windows of PROBE_WIN bytes are: 0 alike .. 1 nothing in
 * common (byte-nibble histograms; raw.c). PROBE_MARGIN: a difference that
 * counts. */
#define PROBE_WIN    1024u
#define PROBE_MARGIN 0.08
double probe_window_dist(const uint8_t *a, const uint8_t *b);

/* A raid0 with no volume signature: chunk, order and data offset from
 * content continuity at chunk boundaries (raw.c). Convincing candidates
 * are added to r->cand (the best rejected one noted otherwise); 0 or a
 * negative errno. */
int probe_raw(const struct probe_input *in, struct probe_result *r);

/* Candidates within noise of each other that read differently at sampled
 * places are ties (ties.c): their `ties` bits are set; a candidate that
 * reads the same as a better one is dropped, named in its evidence. */
void probe_mark_ties(const struct probe_input *in, struct probe_result *r);
#endif
