#!/usr/bin/env python3
"""Edit one field of an md 1.1 or 1.2 superblock in a member image and
rewrite the checksum, so the superblock stays valid and what reads it meets
the changed value itself (tests that hand uraid or the kernel superblocks
they would refuse).

  md_sb1_edit.py IMG OFFSET FMT set VALUE     the field at OFFSET (struct
                                              mdp_superblock_1) becomes VALUE
  md_sb1_edit.py IMG OFFSET FMT clear MASK    clear bits that must be set

FMT is a struct format ('<I' for a le32). The checksum is md's: the sum of
the le32 words over 256 + 2 * max_dev bytes with sb_csum zeroed, folded to
32 bits."""
import struct
import sys


def main():
    path, field, fmt, op, value = sys.argv[1:6]
    field, value = int(field, 0), int(value, 0)
    with open(path, 'r+b') as f:
        for off in (8 * 512, 0):  # 1.2, then 1.1
            f.seek(off)
            sb = bytearray(f.read(4096))
            if struct.unpack_from('<I', sb, 0)[0] == 0xa92b4efc:
                break
        else:
            sys.exit('no 1.1/1.2 superblock in ' + path)
        old = struct.unpack_from(fmt, sb, field)[0]
        if op == 'clear':
            if old & value != value:
                sys.exit('%s: bits 0x%x not set to begin with' % (path, value))
            new = old & ~value
        else:
            new = value
        struct.pack_into(fmt, sb, field, new)
        struct.pack_into('<I', sb, 216, 0)
        n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
        s = sum(struct.unpack_from('<%dI' % (n // 4), sb, 0))
        if n % 4:
            s += struct.unpack_from('<H', sb, n - 2)[0]
        s = (s & 0xffffffff) + (s >> 32)
        struct.pack_into('<I', sb, 216, s & 0xffffffff)
        f.seek(off)
        f.write(sb)


if __name__ == '__main__':
    main()
