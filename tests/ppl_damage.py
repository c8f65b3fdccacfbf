#!/usr/bin/env python3
"""Read md's partial parity logs from raid5 member images (1.1/1.2
superblocks, left-symmetric) independently of uraid, and make the crash the
log is there for: the parity write of what the newest unit of each log
covers is lost (those parity rows zeroed), while the data writes reached
the members.

  ppl_damage.py [--dry-run] IMG...

Walks each member's log as md does (from the start of its area: headers
whose crc32c holds, one signature, rising generations), takes the newest
unit's entries that carry partial parity (a write to one data chunk), picks
as victim a data member of the first such stripe that the write left alone,
and zeroes the parity rows of every such entry whose stripe needs neither
the victim's written data nor its parity. Prints 'victim ROLE IMG', one
'damaged stripe S parity ROLE rows N' line per entry and 'damaged N'. A
member then missing has its blocks of those stripes rebuilt from that
parity: right only after a recovery from the log."""
import struct
import sys


def crc32c(data):
    table = crc32c.table
    if table is None:
        table = []
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            table.append(c)
        crc32c.table = table
    c = 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


crc32c.table = None


def superblock(f):
    for off in (8 * 512, 0):
        f.seek(off)
        sb = f.read(1024)
        if struct.unpack_from('<I', sb, 0)[0] == 0xA92B4EFC:
            return sb
    sys.exit('no 1.1/1.2 superblock')


def main():
    args = sys.argv[1:]
    dry = args and args[0] == '--dry-run'
    if dry:
        args = args[1:]
    members = {}
    for path in args:
        with open(path, 'rb') as f:
            sb = superblock(f)
            layout, = struct.unpack_from('<I', sb, 76)
            chunk, ndisks = struct.unpack_from('<II', sb, 88)
            word, = struct.unpack_from('<I', sb, 96)
            doff, = struct.unpack_from('<Q', sb, 128)
            soff, = struct.unpack_from('<Q', sb, 144)
            devnr, = struct.unpack_from('<I', sb, 160)
            role, = struct.unpack_from('<H', sb, 256 + 2 * devnr)
            assert layout == 2, 'left-symmetric only'
            off = struct.unpack('<h', struct.pack('<H', word & 0xFFFF))[0]
            size = word >> 16
            start = soff + off
            newest, pos, sig = None, 0, None
            while pos + 8 < size:
                f.seek((start + pos) * 512)
                h = bytearray(f.read(4096))
                s, _, gen, cnt, csum = struct.unpack_from('<IIQII', h, 512)
                struct.pack_into('<I', h, 532, 0)
                if crc32c(h) != csum or cnt > 148:
                    break
                if sig is not None and (s != sig or gen < newest[1]):
                    break
                sig = s
                ents = [struct.unpack_from('<QIIII', h, 536 + 24 * i) for i in range(cnt)]
                newest = (pos, gen, ents)
                pos += 8 + sum(e[1] for e in ents) // 512
            members[role] = dict(path=path, doff=doff, chunk=chunk, n=ndisks, newest=newest)
    if not members:
        sys.exit('no members')
    m0 = next(iter(members.values()))
    chunk, n = m0['chunk'], m0['n']
    k = n - 1
    cands = []
    for role, m in sorted(members.items()):
        if not m['newest']:
            continue
        for sector, pp, dsize, pdisk, _ in m['newest'][2]:
            if pp == 0 or pp >= chunk * 512:
                continue
            assert pdisk == role, 'entry in the log of another parity member'
            stripe, r = divmod(sector, k * chunk)
            di, inch = divmod(r, chunk)
            pd = (n - 1) - stripe % n
            assert pd == role, 'parity_disk is not the stripe parity member'
            cands.append((stripe, inch, pp // 512, role, (pd + 1 + di) % n,
                          (pd + 1 + (di + 1) % k) % n))
    if not cands:
        sys.exit('no entry with partial parity in the newest units')
    victim = cands[0][5]
    print('victim', victim, members[victim]['path'])
    damaged = 0
    for stripe, inch, rows, prole, wrole, _ in cands:
        if victim in (prole, wrole):
            continue
        m = members[prole]
        if not dry:
            with open(m['path'], 'r+b') as f:
                f.seek((m['doff'] + stripe * chunk + inch) * 512)
                f.write(bytes(rows * 512))
        print('damaged stripe', stripe, 'parity', prole, 'rows', rows)
        damaged += 1
    print('damaged', damaged)


if __name__ == '__main__':
    main()
