#!/usr/bin/python3
"""Slow, independent reference reader for Linux md member images (tests only).

    pyraid.py cat MEMBER...       array content on stdout (members in any order,
                                  missing ones allowed where the level survives)
    pyraid.py examine MEMBER...   the superblock fields vectors_cat.sh compares,
                                  printed like mdadm --examine

It stands in for `uraid cat` / `uraid examine` so that the test scripts
(tests/integration/vectors_cat.sh) can be checked before the C implementation
exists, and it cross-checks the kernel-made vectors with a second reader that
shares no code with uraid.  Written from the on-disk format descriptions in
shared/reference/FORMATS.md; clarity over speed.  Exit status 1 with a message
on stderr when the members cannot give the array.
"""
import mmap
import struct
import sys

MAGIC = 0xA92B4EFC
SECTOR = 512

R5_NAMES = {0: 'left-asymmetric', 1: 'right-asymmetric', 2: 'left-symmetric',
            3: 'right-symmetric', 4: 'parity-first', 5: 'parity-last',
            8: 'ddf-zero-restart', 9: 'ddf-N-restart', 10: 'ddf-N-continue',
            16: 'left-asymmetric-6', 17: 'right-asymmetric-6', 18: 'left-symmetric-6',
            19: 'right-symmetric-6', 20: 'parity-first-6'}
LEVEL_NAMES = {-1: 'linear', 0: 'raid0', 1: 'raid1', 4: 'raid4', 5: 'raid5', 6: 'raid6',
               10: 'raid10'}


class Fail(Exception):
    pass


# ---------------------------------------------------------------- superblocks
class Member:
    """One member: where its data is and which slot it fills."""

    def __init__(self, path):
        self.path = path
        with open(path, 'rb') as f:
            # mapped, not read: examine touches only the superblock pages
            self.img = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if len(self.img) < 128 * 1024:
            raise Fail(f'{path}: too small for an md member')
        for try_ in (self.try_v1, self.try_v090):
            if try_():
                return
        raise Fail(f'{path}: no md superblock')

    def u32(self, off):
        return struct.unpack_from('<I', self.img, off)[0]

    def try_v1(self):
        nsect = len(self.img) // SECTOR
        for minor, sb_sect in (('1.1', 0), ('1.2', 8), ('1.0', ((nsect - 16) & ~7))):
            o = sb_sect * SECTOR
            if self.u32(o) != MAGIC or self.u32(o + 4) != 1:
                continue
            sb = self.img[o:o + 1024]
            (self.feature_map,) = struct.unpack_from('<I', sb, 8)
            self.uuid = sb[16:32]
            self.name = sb[32:64].split(b'\0')[0].decode(errors='replace')
            self.level, self.layout, self.size, self.chunk, self.raid_disks = \
                struct.unpack_from('<iIQII', sb, 72)
            self.data_offset, self.data_size, self.super_offset = struct.unpack_from('<QQQ', sb, 128)
            (self.dev_number,) = struct.unpack_from('<I', sb, 160)
            (self.events,) = struct.unpack_from('<Q', sb, 200)
            (max_dev,) = struct.unpack_from('<I', sb, 220)
            if self.super_offset != sb_sect:
                continue
            roles = struct.unpack_from(f'<{max_dev}H', self.img, o + 256)
            r = roles[self.dev_number] if self.dev_number < max_dev else 0xFFFF
            self.role = r if r < 0xFFFE else None
            self.version = minor
            # linear/raid0 use every data sector; mdadm leaves `size` 0 for them
            self.dev_sectors = self.size if self.level not in (-1, 0) else self.data_size
            return True
        return False

    def try_v090(self):
        o = (len(self.img) & ~(64 * 1024 - 1)) - 64 * 1024
        w = struct.unpack_from('<1024I', self.img, o)
        if w[0] != MAGIC or w[1] != 0 or w[2] != 90:
            return False
        self.version = '0.90'
        self.feature_map = None
        self.uuid = struct.pack('<4I', w[5], w[13], w[14], w[15])
        self.name = None
        self.level = struct.unpack('<i', struct.pack('<I', w[7]))[0]
        self.raid_disks = w[10]
        self.layout = w[64]
        self.chunk = w[65] // SECTOR
        self.events = (w[40] << 32) | w[39]
        self.data_offset = 0
        self.super_offset = o // SECTOR
        self.role = w[992 + 3]
        # 0.90: data runs up to the superblock; redundant levels use `size` KiB of it
        self.dev_sectors = self.super_offset if self.level in (-1, 0) else w[8] * 2
        return True

    def read(self, sector, count):
        o = (self.data_offset + sector) * SECTOR
        return self.img[o:o + count * SECTOR]


# ---------------------------------------------------------------- GF(2^8)
def _gf_tables():
    exp, log = [0] * 512, [0] * 256
    x = 1
    for i in range(255):
        exp[i] = x
        log[x] = i
        x <<= 1
        if x & 0x100:
            x ^= 0x11D
    for i in range(255, 512):
        exp[i] = exp[i - 255]
    return exp, log


GF_EXP, GF_LOG = _gf_tables()


def gf_mul(a, b):
    return 0 if a == 0 or b == 0 else GF_EXP[GF_LOG[a] + GF_LOG[b]]


def gf_inv(a):
    return GF_EXP[255 - GF_LOG[a]]


MUL_TABLES = {}


def mul(c, block):
    if c not in MUL_TABLES:
        MUL_TABLES[c] = bytes(gf_mul(c, x) for x in range(256))
    return block.translate(MUL_TABLES[c])


def xor(*blocks):
    n = len(blocks[0])
    v = 0
    for b in blocks:
        v ^= int.from_bytes(b, 'little')
    return v.to_bytes(n, 'little')


# ---------------------------------------------------------------- levels
class Array:
    def __init__(self, members):
        a = members[0]
        for m in members:
            if m.uuid != a.uuid:
                raise Fail(f'{m.path}: belongs to another array')
            if m.role is None or m.role >= a.raid_disks:
                raise Fail(f'{m.path}: not an active member (role {m.role})')
        self.level, self.n, self.layout, self.chunk = a.level, a.raid_disks, a.layout, a.chunk
        self.slot = {m.role: m for m in members}
        if len(self.slot) != len(members):
            raise Fail('two members claim the same role')
        self.dev_sectors = min(m.dev_sectors for m in members)

    def need(self, role):
        m = self.slot.get(role)
        if m is None:
            raise Fail(f'member for role {role} missing and needed')
        return m

    # Each generator yields the array content in pieces, in order.
    def content(self):
        lv = self.level
        if lv == -1:
            return self.linear()
        if lv == 0:
            return self.raid0()
        if lv == 1:
            return self.raid1()
        if lv in (4, 5, 6):
            return self.striped_parity()
        if lv == 10:
            return self.raid10()
        raise Fail(f'level {lv} not handled')

    def rounded(self, role):
        s = self.need(role).dev_sectors
        return s - s % self.chunk if self.chunk else s

    def linear(self):
        for r in range(self.n):
            yield self.need(r).read(0, self.rounded(r))

    def raid0(self):
        sizes = [self.rounded(r) for r in range(self.n)]
        c = self.chunk
        start = 0  # member sector where the current zone begins
        zone_base = 0  # array sector where it begins
        for end in sorted(set(sizes)):
            devs = [r for r in range(self.n) if sizes[r] > start]
            zone_len = (end - start) * len(devs)
            for off in range(0, zone_len, c):
                # the original layout picks the member from the array sector,
                # the alternate one from the sector within the zone
                ref = off if (self.layout == 2 or zone_base == 0) else zone_base + off
                dev = devs[(ref // c) % len(devs)]
                row = off // (c * len(devs))
                yield self.need(dev).read(start + row * c, c)
            zone_base += zone_len
            start = end

    def raid1(self):
        m = self.slot[min(self.slot)]
        yield m.read(0, self.dev_sectors)

    def parity_places(self, s):
        """(data member roles in data order, P role, Q role or None, Q coefficient per data)"""
        n, lay = self.n, self.layout
        if self.level == 4:
            return list(range(n - 1)), n - 1, None, None
        if self.level == 5:
            k = n - 1
            if lay in (0, 2):
                p = n - 1 - s % n
            elif lay in (1, 3):
                p = s % n
            elif lay == 4:
                p = 0
            elif lay == 5:
                p = n - 1
            else:
                raise Fail(f'raid5 layout {lay} unknown')
            if lay in (2, 3):
                data = [(p + 1 + i) % n for i in range(k)]
            else:
                data = [i if i < p else i + 1 for i in range(k)]
            return data, p, None, None
        k = n - 2
        ddf = lay in (8, 9, 10)
        if lay in (0, 1, 8, 9):
            if lay in (0, 9):
                p = n - 1 - (s + (1 if lay == 9 else 0)) % n
            else:
                p = s % n
            if p == n - 1:
                q, data = 0, [i + 1 for i in range(k)]
            else:
                q, data = p + 1, [i if i < p else i + 2 for i in range(k)]
        elif lay in (2, 3):
            p = n - 1 - s % n if lay == 2 else s % n
            q = (p + 1) % n
            data = [(p + 2 + i) % n for i in range(k)]
        elif lay == 4:
            p, q, data = 0, 1, [i + 2 for i in range(k)]
        elif lay == 5:
            p, q, data = n - 2, n - 1, list(range(k))
        elif lay == 10:
            p = n - 1 - s % n
            q = (p + n - 1) % n
            data = [(p + 1 + i) % n for i in range(k)]
        elif lay in (16, 17, 18, 19, 20):
            m5 = n - 1
            q = n - 1
            if lay in (16, 18):
                p = m5 - 1 - s % m5
            elif lay in (17, 19):
                p = s % m5
            else:
                p = 0
            if lay in (18, 19):
                data = [(p + 1 + i) % m5 for i in range(k)]
            else:
                data = [i if i < p else i + 1 for i in range(k)]
        else:
            raise Fail(f'raid6 layout {lay} unknown')
        # Q coefficients g^slot: DDF numbers the slots by member position, md
        # counts data members only, walking from the member after Q
        if ddf:
            slot = {d: d for d in data}
        else:
            d0 = 0 if q == n - 1 else q + 1
            walk = [(d0 + j) % n for j in range(n)]
            order = [d for d in walk if d in data]
            slot = {d: i for i, d in enumerate(order)}
        return data, p, q, [GF_EXP[slot[d]] for d in data]

    def striped_parity(self):
        c = self.chunk
        stripes = self.dev_sectors // c
        for s in range(stripes):
            data, p, q, coef = self.parity_places(s)
            got = {r: self.slot[r].read(s * c, c) for r in data + [p] + ([q] if q is not None else [])
                   if r in self.slot}
            lost = [i for i, d in enumerate(data) if d not in got]
            blocks = [got.get(d) for d in data]
            if len(lost) == 1 and p in got:
                others = [got[p]] + [b for b in blocks if b is not None]
                blocks[lost[0]] = xor(*others)
            elif len(lost) == 1 and q is not None and q in got:
                x = lost[0]
                acc = xor(got[q], *[mul(coef[i], b) for i, b in enumerate(blocks) if b is not None])
                blocks[x] = mul(gf_inv(coef[x]), acc)
            elif len(lost) == 2 and q is not None and p in got and q in got:
                x, y = lost
                pxy = xor(got[p], *[b for b in blocks if b is not None])
                qxy = xor(got[q], *[mul(coef[i], b) for i, b in enumerate(blocks) if b is not None])
                # D_x*gx + D_y*gy = qxy and D_x + D_y = pxy  =>  D_x = (qxy + gy*pxy) / (gx + gy)
                den = gf_inv(coef[x] ^ coef[y])
                blocks[x] = mul(den, xor(qxy, mul(coef[y], pxy)))
                blocks[y] = xor(pxy, blocks[x])
            elif lost:
                raise Fail(f'stripe {s}: {len(lost)} data members missing, cannot rebuild')
            yield b''.join(blocks)

    def raid10(self):
        near, far, offset = self.layout & 0xFF, (self.layout >> 8) & 0xFF, (self.layout >> 16) & 1
        if self.layout >> 17:
            raise Fail(f'raid10 layout {self.layout:#x} not handled')
        n, c = self.n, self.chunk
        dev_chunks = self.dev_sectors // c
        array_chunks = (dev_chunks // far) * n // near
        used = -(-array_chunks * near * far // n)  # chunks per member in use, rounded up
        stride = c if offset else (used // far) * c
        for a in range(array_chunks):
            first = a * near
            dev, row = first % n, first // n
            if offset:
                row *= far
            base = row * c
            copies = []
            for j in range(near):
                d, sec = dev, base
                for f in range(far):
                    copies.append((d, sec))
                    d = (d + near) % n
                    sec += stride
                dev += 1
                if dev == n:
                    dev, base = 0, base + c
            for d, sec in copies:
                if d in self.slot:
                    yield self.slot[d].read(sec, c)
                    break
            else:
                raise Fail(f'chunk {a}: every copy is on a missing member')


# ---------------------------------------------------------------- commands
def fmt_uuid(b, v090):
    h = b.hex()
    if v090:
        # mdadm prints the four 32-bit words in order, each as 8 hex digits
        return ':'.join(f'{w:08x}' for w in struct.unpack('<4I', b))
    return ':'.join(h[i:i + 8] for i in range(0, 32, 8))


def examine(m):
    v090 = m.version == '0.90'
    print(f'{m.path}:')
    print(f'        Version : {"0.90.00" if v090 else m.version}')
    if not v090:
        print(f'    Feature Map : {m.feature_map:#x}')
        print(f'     Array UUID : {fmt_uuid(m.uuid, False)}')
        print(f'           Name : {m.name}')
    else:
        print(f'           UUID : {fmt_uuid(m.uuid, True)}')
    print(f'     Raid Level : {LEVEL_NAMES.get(m.level, m.level)}')
    print(f'   Raid Devices : {m.raid_disks}')
    if not v090:
        print(f'    Data Offset : {m.data_offset} sectors')
        print(f'   Super Offset : {m.super_offset} sectors')
    print(f'         Events : {m.events}')
    if m.level in (4, 5, 6):
        if m.level != 4:
            print(f'         Layout : {R5_NAMES.get(m.layout, m.layout)}')
    elif m.level == 10:
        near, far = m.layout & 0xFF, (m.layout >> 8) & 0xFF
        parts = []
        if near > 1:
            parts.append(f'near={near}')
        if far > 1:
            parts.append(('offset' if m.layout >> 16 & 1 else 'far') + f'={far}')
        print(f'         Layout : {" ".join(parts)}')
    elif m.level == 0 and m.feature_map is not None and m.feature_map & 0x1000:
        print('         Layout : ' + {1: 'original', 2: 'alternate'}.get(m.layout, str(m.layout)))
    if m.level not in (-1, 1):
        print(f'     Chunk Size : {m.chunk // 2}K')
    if not v090:
        print(f'    Device Role : Active device {m.role}')


def main(argv):
    if len(argv) < 3 or argv[1] not in ('cat', 'examine'):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        members = [Member(p) for p in argv[2:]]
        if argv[1] == 'examine':
            for m in members:
                examine(m)
            return 0
        out = sys.stdout.buffer
        for piece in Array(members).content():
            out.write(piece)
        out.flush()
        return 0
    except Fail as e:
        print(f'pyraid: {e}', file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
