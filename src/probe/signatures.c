/* On-disk signatures probe recognises, parsed from untrusted bytes: every
 * field is bounds-checked against the buffer, and sizes derived from fields
 * are checked for overflow (fuzz/fuzz_probe_sig.c). Formats from their
 * public descriptions: ext4's superblock (kernel Documentation/filesystems/
 * ext4), XFS's (xfs_format.h layout as documented), btrfs's, UEFI's GPT,
 * the PC MBR, LVM2's label, SNIA DDF, Intel IMSM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta/md_super.h"
#include "probe/probe.h"
#include "util/endian.h"

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static int ext_head(const uint8_t *b, size_t len, struct probe_sig *s)
{
	if (len < 2048)
		return 0;
	const uint8_t *sb = b + 1024;
	if (get_le16(sb + 56) != 0xEF53 || get_le16(sb + 0x5A) != 0)
		return 0;
	uint32_t log = get_le32(sb + 24), bpg = get_le32(sb + 32), ipg = get_le32(sb + 40);
	if (log > 6 || !bpg || !ipg)
		return 0;
	uint64_t blocks = get_le32(sb + 4);
	if (get_le32(sb + 0x60) & 0x80) /* 64bit */
		blocks |= (uint64_t)get_le32(sb + 0x150) << 32;
	if (!blocks || blocks > (UINT64_MAX >> 17))
		return 0;
	s->kind = PROBE_SIG_EXT;
	s->fs_bytes = blocks * (1024ull << log);
	snprintf(s->text, sizeof(s->text), "ext2/3/4 superblock: %llu blocks of %u bytes",
	         (unsigned long long)blocks, 1024u << log);
	return 1;
}

static int xfs_head(const uint8_t *b, size_t len, struct probe_sig *s)
{
	if (len < 512 || memcmp(b, "XFSB", 4))
		return 0;
	uint32_t bs = be32(b + 4), agb = be32(b + 84), agc = be32(b + 88);
	uint64_t dblocks = be64(b + 8);
	if (bs < 512 || bs > 65536 || (bs & (bs - 1)) || !agb || !agc || !dblocks ||
	    dblocks > UINT64_MAX / 65536)
		return 0;
	s->kind = PROBE_SIG_XFS;
	s->fs_bytes = dblocks * bs;
	snprintf(s->text, sizeof(s->text),
	         "XFS superblock: %llu blocks of %u bytes, %u allocation groups of %u blocks",
	         (unsigned long long)dblocks, bs, agc, agb);
	return 1;
}

static int btrfs_head(const uint8_t *b, size_t len, struct probe_sig *s)
{
	const size_t at = 65536;
	if (len < at + 4096 || memcmp(b + at + 64, "_BHRfS_M", 8))
		return 0;
	s->kind = PROBE_SIG_BTRFS;
	s->fs_bytes = get_le64(b + at + 0x70);
	snprintf(s->text, sizeof(s->text), "btrfs superblock: %llu bytes",
	         (unsigned long long)s->fs_bytes);
	return 1;
}

static int gpt_head(const uint8_t *b, size_t len, struct probe_sig *s)
{
	if (len < 1024 || memcmp(b + 512, "EFI PART", 8))
		return 0;
	s->kind = PROBE_SIG_GPT;
	snprintf(s->text, sizeof(s->text), "GPT partition table: %u entries, last usable LBA %llu",
	         get_le32(b + 512 + 80), (unsigned long long)get_le64(b + 512 + 48));
	return 1;
}

static int mbr_head(const uint8_t *b, size_t len, struct probe_sig *s)
{
	if (len < 512 || b[510] != 0x55 || b[511] != 0xAA)
		return 0;
	int used = 0;
	for (int i = 0; i < 4; i++) {
		const uint8_t *e = b + 446 + 16 * i;
		if (e[0] != 0 && e[0] != 0x80)
			return 0;
		if (e[4] && get_le32(e + 12))
			used++;
	}
	if (!used)
		return 0;
	s->kind = PROBE_SIG_MBR;
	snprintf(s->text, sizeof(s->text), "MBR partition table: %d partitions", used);
	return 1;
}

static int lvm_head(const uint8_t *b, size_t len, struct probe_sig *s)
{
	for (size_t sec = 0; sec < 4 && (sec + 1) * 512 <= len; sec++) {
		const uint8_t *l = b + sec * 512;
		if (!memcmp(l, "LABELONE", 8) && !memcmp(l + 24, "LVM2 001", 8)) {
			s->kind = PROBE_SIG_LVM;
			char uuid[33];
			memcpy(uuid, l + 32, 32);
			uuid[32] = 0;
			for (int i = 0; i < 32; i++)
				if (uuid[i] < 0x21 || uuid[i] > 0x7e)
					uuid[i] = '?';
			snprintf(s->text, sizeof(s->text), "LVM2 physical volume label, PV uuid %s",
			         uuid);
			return 1;
		}
	}
	return 0;
}

int probe_sig_head(const uint8_t *buf, size_t len, struct probe_sig *s)
{
	memset(s, 0, sizeof(*s));
	return ext_head(buf, len, s) || xfs_head(buf, len, s) || btrfs_head(buf, len, s) ||
	       gpt_head(buf, len, s) || lvm_head(buf, len, s) || mbr_head(buf, len, s);
}

int probe_sig_tail(const uint8_t *buf, size_t len, uint64_t dev_bytes, struct probe_sig *s)
{
	memset(s, 0, sizeof(*s));
	if (len < 1024 || len % 512 || dev_bytes < len)
		return 0;
	const uint8_t *last = buf + len - 512, *prev = buf + len - 1024;
	if (!memcmp(last, "GEOM::MIRROR", 12) || !memcmp(last, "GEOM::RAID3", 11)) {
		s->kind = PROBE_SIG_GEOM;
		s->offset = dev_bytes - 512;
		snprintf(s->text, sizeof(s->text), "FreeBSD %s metadata in the last sector",
		         last[6] == 'M' ? "gmirror" : "graid3");
		return 1;
	}
	if (be32(last) == 0xDE11DE11) {
		s->kind = PROBE_SIG_DDF;
		s->offset = dev_bytes - 512;
		snprintf(s->text, sizeof(s->text),
		         "SNIA DDF anchor header in the last sector (a hardware RAID "
		         "controller's or Linux's DDF container: mdadm --examine reads it)");
		return 1;
	}
	if (!memcmp(prev, "Intel Raid ISM Cfg Sig. ", 24)) {
		s->kind = PROBE_SIG_IMSM;
		s->offset = dev_bytes - 1024;
		snprintf(s->text, sizeof(s->text),
		         "Intel Matrix Storage (IMSM) metadata, version %.6s (mdadm --examine "
		         "reads it)",
		         (const char *)prev + 24);
		for (char *c = s->text; *c; c++)
			if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
				*c = '?';
		return 1;
	}
	return 0;
}

int probe_sig_md(int version, const uint8_t *buf, size_t len, struct probe_sig *s)
{
	memset(s, 0, sizeof(*s));
	char e[256];
	if (len < MD_SB_BYTES || get_le32(buf) != MD_SB_MAGIC)
		return 0;
	struct md_sb *p = malloc(sizeof(*p)); /* 4 KiB of roles: not on the stack */
	if (!p)
		return 0;
	int rc = md_sb_decode((enum md_sb_version)version, buf, len, p, e, sizeof(e));
	s->kind = PROBE_SIG_MD;
	s->md_version = version;
	if (rc < 0) {
		snprintf(s->text, sizeof(s->text), "md superblock magic, but damaged: %.150s", e);
		s->md_level = -100;
		free(p);
		return 1;
	}
	s->md_level = p->level;
	s->md_raid_disks = (int)p->raid_disks;
	s->md_role = md_sb_role(p);
	s->md_layout = p->layout;
	s->md_chunk_sectors = p->chunk_sectors;
	s->md_data_offset = p->data_offset;
	s->md_size = p->size;
	memcpy(s->md_uuid, p->set_uuid, 16);
	char uuid[37];
	md_uuid_format(p->set_uuid, uuid);
	uuid[36] = 0;
	snprintf(s->text, sizeof(s->text),
	         "md %s superblock: array %s, level %d, %u devices, role %d, events %llu",
	         version == 0    ? "0.90"
	         : version == 10 ? "1.0"
	         : version == 11 ? "1.1"
	                         : "1.2",
	         uuid, p->level, p->raid_disks, s->md_role, (unsigned long long)p->events);
	free(p);
	return 1;
}
