#!/usr/bin/env bash
# Superblocks uraid creates, given to the real Linux md driver (shared/mdvm):
# every metadata version must assemble with the geometry uraid wrote, and the
# array size the kernel derives must be the one the layout implies.
. "$(dirname "$0")/../lib.sh"
RUN=$TOP/tests/mdvm/run
WRITER=$TOP/build/asan/tests/test_meta_md_create
[ -x "$RUN" ] || { fail "shared/mdvm not found at $SHARED/mdvm (set URAID_SHARED)"; t_done; }
"$RUN" --info >/dev/null 2>&1 || { fail "mdvm is not set up: run $SHARED/mdvm/setup"; t_done; }
[ -x "$WRITER" ] || { fail "$WRITER missing (make tests-build)"; t_done; }
W=$T_TMP/w
mkdir -p "$W"
URAID_MD_WRITE_DIR=$W "$WRITER" t_write_members >"$T_TMP/writer.log" 2>&1
check "writer made the member files" grep -q "^ok - t_write_members" "$T_TMP/writer.log"

# one array per metadata version and a spread of levels (one VM boot)
TAGS="r5ls-12 r10f2-10 r5la-090 r0alt-12 lin-12 r1-11"
cat >"$T_TMP/job.sh" <<'JOB'
for tag in $TAGS; do
	M=$(for n in $MDVM_DISKS; do case $n in $tag-*) echo /dev/disk-$n ;; esac; done)
	mdadm --assemble /dev/md0 $M >/dev/null 2>&1
	echo "RESULT $tag rc=$? bytes=$(blockdev --getsize64 /dev/md0 2>/dev/null)" \
	     "level=$(cat /sys/block/md0/md/level 2>/dev/null)" \
	     "layout=$(cat /sys/block/md0/md/layout 2>/dev/null)" \
	     "chunk=$(cat /sys/block/md0/md/chunk_size 2>/dev/null)" \
	     "meta=$(cat /sys/block/md0/md/metadata_version 2>/dev/null)"
	mdadm --stop /dev/md0 >/dev/null 2>&1
done
JOB
sed -i "1i TAGS=\"$TAGS\"" "$T_TMP/job.sh"
args=()
for t in $TAGS; do for f in "$W/$t"-m*.img; do args+=(--disk "$(basename "$f" .img)=$f"); done; done
"$RUN" --snapshot --timeout 300 "${args[@]}" --script "$T_TMP/job.sh" >"$T_TMP/vm.out" 2>"$T_TMP/vm.err"
rc=$?
if [ $rc -eq 125 ] && grep -qi kvm "$T_TMP/vm.err"; then # a host whose KVM cannot run it
	"$RUN" --accel tcg --snapshot --timeout 300 "${args[@]}" --script "$T_TMP/job.sh" \
		>"$T_TMP/vm.out" 2>"$T_TMP/vm.err"
	rc=$?
fi
check "mdvm job ran (rc $rc)" test $rc -eq 0

# expected geometry from the manifest the writer left
python3 - "$W/manifest.tsv" "$T_TMP/vm.out" $TAGS <<'PY' >"$T_TMP/cmp.txt"
import re, sys, collections
man, out, tags = sys.argv[1], sys.argv[2], sys.argv[3:]
arr = collections.defaultdict(list)
for line in open(man):
    f = line.rstrip("\n").split("\t")
    tag = f[0].rsplit("/", 1)[1].rsplit("-m", 1)[0]
    arr[tag].append(dict(ver=f[1], level=int(f[2]), layout=int(f[3]), chunk=int(f[4]),
                         rd=int(f[5]), doff=int(f[6]), role=int(f[10]), size=int(f[12]),
                         path=f[0]))
import os
res = {m.group(1): m.group(2) for m in re.finditer(r"^RESULT (\S+) (.*)$", open(out).read(), re.M)}
for t in tags:
    ms = [m for m in arr[t] if m["role"] >= 0]
    m0 = ms[0]
    lv, rd, sz, ch = m0["level"], m0["rd"], m0["size"], m0["chunk"] * 2
    def data(m):  # usable sectors of a member
        dev = os.path.getsize(m["path"]) // 512
        if m["ver"] == "0.90":
            return dev // 128 * 128 - 128
        if m["ver"] == "1.0":
            return ((dev - 16) // 8 * 8) - 8  # linear/raid0: sb minus bad block log
        return dev - m["doff"]
    if lv == 5 or lv == 4:
        want = (rd - 1) * sz
    elif lv == 6:
        want = (rd - 2) * sz
    elif lv == 1:
        want = sz
    elif lv == 10:
        # md's raid10_size: whole chunks, divided by far copies first
        near, far = m0["layout"] & 255, (m0["layout"] >> 8) & 255
        want = (sz // ch // far * rd // near) * ch
    elif lv == 0:
        want = sum(data(m) // ch * ch for m in ms)
    else:
        want = sum(data(m) for m in ms)
    lvname = {-1: "linear"}.get(lv, "raid%d" % lv)
    meta = m0["ver"] if m0["ver"] != "0.90" else "0.90"
    r = res.get(t, "")
    okk = ("rc=0" in r and "bytes=%d " % (want * 512) in r + " " and "level=%s" % lvname in r
           and "meta=%s" % meta in r)
    print("%s %s want_bytes=%d got: %s" % ("OK" if okk else "BAD", t, want * 512, r))
PY
while read -r verdict tag rest; do
	if [ "$verdict" = OK ]; then ok "kernel assembles $tag as written ($rest)"; else fail "kernel and $tag: $rest"; fi
done <"$T_TMP/cmp.txt"
check "all arrays compared" test "$(grep -c . "$T_TMP/cmp.txt")" -eq 6
t_done
