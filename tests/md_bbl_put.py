#!/usr/bin/env python3
"""Put entries into the bad block log of an md 1.2 member image as the
kernel's super_1_sync writes them, independently of uraid's codec: 64-bit
little-endian words (start << 10 | length, in blocks of 2^bblog_shift
sectors) at super_offset + bblog_offset, the rest of the log all ones,
MD_FEATURE_BAD_BLOCKS set (cleared for no entries), the superblock checksum
redone (md's: le32 words over 256 + 2 * max_dev bytes, folded).

  md_bbl_put.py [--garbage] IMG [START LEN]...

START and LEN are data-area sectors (the data offset is added). With
--garbage random bytes are written over each range too."""
import os
import struct
import sys


def main():
    args = sys.argv[1:]
    garbage = args[:1] == ['--garbage']
    if garbage:
        args = args[1:]
    path, v = args[0], list(map(int, args[1:]))
    with open(path, 'r+b') as f:
        f.seek(8 * 512)
        sb = bytearray(f.read(1024))
        if struct.unpack_from('<I', sb, 0)[0] != 0xa92b4efc:
            sys.exit('no 1.2 superblock in ' + path)
        shift = sb[185]
        size = struct.unpack_from('<H', sb, 186)[0]
        off = struct.unpack_from('<i', sb, 188)[0]
        doff = struct.unpack_from('<Q', sb, 128)[0]
        if not size or not off:
            sys.exit('no bad block log on ' + path)
        log = bytearray(b'\xff' * (size * 512))
        for k, (s, n) in enumerate(zip(v[::2], v[1::2])):
            struct.pack_into('<Q', log, 8 * k, ((doff + s) >> shift) << 10 | (n >> shift))
            if garbage:
                f.seek((doff + s) * 512)
                f.write(os.urandom(n * 512))
        f.seek((8 + off) * 512)
        f.write(log)
        feat = struct.unpack_from('<I', sb, 8)[0]
        struct.pack_into('<I', sb, 8, feat | 8 if v else feat & ~8)
        struct.pack_into('<I', sb, 216, 0)
        n = 256 + 2 * struct.unpack_from('<I', sb, 220)[0]
        c = sum(struct.unpack_from('<I', sb, k)[0] for k in range(0, n - 3, 4))
        if n % 4:
            c += struct.unpack_from('<H', sb, n - 2)[0]
        struct.pack_into('<I', sb, 216, ((c & 0xffffffff) + (c >> 32)) & 0xffffffff)
        f.seek(8 * 512)
        f.write(sb)


if __name__ == '__main__':
    main()
