#!/usr/bin/env bash
# uraid probe and uraid build against arrays the real kernel made (shared/mdvm):
# raid0/1/4/5/6/10 and linear over 2-5 members, chunks 4K-1M, several
# layouts (set e: a raid6 lacking role 1, the member with its first chunk), md metadata 0.90/1.0/1.1/1.2, each holding an ext4 file system
# full of files (made on the host, written through /dev/md0 by the kernel;
# set r a raid0 holding raw content, text, digits, zeros, random and small
# binary runs, no file system: chunk and order from content continuity),
# then mdadm --zero-superblock on every member. On the host the members are
# renamed and shuffled, one dropped from some parity sets: probe must name a
# geometry first whose build line, run, reads back through `uraid cat` the
# bytes the kernel read (md5 of the kernel's array size), without changing a
# member. Sets that are no array (random data, an unrelated file system with
# random members) must give "nothing convincing" and exit status 3.
source "$(dirname "$0")/../lib.sh"
MDVM=$TOP/tests/mdvm/run
if [ ! -x "$MDVM" ] || ! "$MDVM" --info >/dev/null 2>&1; then
	fail "mdvm not available at $MDVM (run $SHARED/mdvm/setup)"
	t_done
fi
export URAID_RUN_DIR=$T_TMP/run
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	[ -n "${URAID_TEST_KEEP:-}" ] && cp -r "$T_TMP" "$URAID_TEST_KEEP"
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP
cd "$d" # array names must not be files here (cat NAME)
M=8 # MiB per member
# NAME LEVEL N CHUNK LAYOUT METADATA DROP(role or -)
boot1="a raid5 4 64 left-symmetric 1.2 -
b raid5 3 4 left-asymmetric 1.2 1
c raid5 5 1024 right-asymmetric 1.1 -
e raid6 5 128 left-symmetric 1.2 1
f raid6 4 16 right-symmetric 1.0 -
r raid0 2 64 - 1.2 -"
boot2="g raid0 3 32 - 1.2 -
h raid1 2 - - 0.90 -
i raid10 4 64 n2 1.2 -
j raid10 3 256 f2 1.2 -
k raid10 4 8 o2 1.2 -
l linear 3 - - 1.2 -
m raid4 4 512 - 1.2 2"
ndata() { # level n layout
	case $1 in
	raid0 | linear) echo "$2" ;; raid1) echo 1 ;; raid4 | raid5) echo $(($2 - 1)) ;;
	raid6) echo $(($2 - 2)) ;; raid10) echo $(($2 / 2)) ;;
	esac
}
# A file system for each set: ext4 of ndata * (M - 4) MiB (mdadm 1.1 with 1M chunks
# keeps 3 MiB before the data; linear: reaching into its last member), 3/4 full of files.
mkfs_for() { # name size_mib seed
	local t=$d/tree_$1
	if [ "$1" = r ]; then # set r: raw content, no file system (probe's content continuity)
		python3 - "$d/fs_$1.img" "$2" "$3" "$TOP/src" <<'PY'
import os, random, sys
out, mib, seed, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = random.Random(seed)
text = b"".join(open(os.path.join(dp, f), "rb").read()
                for dp, _, fs in sorted(os.walk(src)) for f in sorted(fs) if f.endswith(".c"))
left, parts, first = mib << 20, [], True
while left > 0:
    n = min(left, r.randint(4, 96) * 1024)
    kind = 0 if first else r.randrange(5)
    first = False
    if kind == 0:
        at = r.randrange(len(text) - n) if len(text) > n else 0
        b = (text[at:at + n] * (n // max(1, len(text)) + 1))[:n]
    elif kind == 1:
        b = bytes(r.choices(b"0123456789,,\n", k=n))
    elif kind == 2:
        b = bytes(n)
    elif kind == 3:
        b = r.randbytes(n)
    else:
        b = bytes(r.choices((0, 0, 1, 2, 3, 7), k=n))
    parts.append(b)
    left -= n
open(out, "wb").write(b"".join(parts))
PY
		return
	fi
	mkdir -p "$t/docs/deep/er" "$t/data"
	cp -r "$TOP/src/probe" "$TOP/src/layout" "$t/docs/deep/"
	cp -r "$TOP/man" "$t/docs/deep/er/"
	python3 - "$t/data" "$(($2 * 1024 * 3 / 4 - 600))" "$3" <<'PY'
import os, random, sys
d, kib, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
i = 0
while kib > 0:
    n = min(kib, r.randint(4, 900))
    sub = os.path.join(d, "dir%d" % (i % 7))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "f%d" % i), "wb") as f:
        f.write(r.randbytes(n * 1024))
    kib -= n + 1
    i += 1
PY
	mke2fs -q -t ext4 -b 1024 -d "$t" "$d/fs_$1.img" "${2}M" 2>&1 | grep -v '^Creating' || true
}
run_boot() { # boot-number sets
	local sets="" disks=() off=0 name level n chunk layout meta drop nd fs i
	while read -r name level n chunk layout meta drop; do
		nd=$(ndata "$level" "$n")
		fs=$((nd * (M - 4)))
		# linear: up to 4 MiB on the last member (members hold M - 1 MiB)
		[ "$level" = linear ] && fs=$((n * (M - 1) - 3))
		mkfs_for "$name" "$fs" "$((${#name} * 7 + off))"
		cat "$d/fs_$name.img" >>"$d/fs$1.img"
		sets="$sets$name $level $n $chunk $layout $meta $off $fs
"
		off=$((off + fs))
		for ((i = 0; i < n; i++)); do
			truncate -s ${M}M "$d/$name$i"
			disks+=(--disk "$name$i=$d/$name$i")
		done
	done <<<"$2"
	{ printf 'SETS="%s"\n' "$sets"; cat "$TOP/tests/integration/probe_mdvm.job"; } >"$d/job$1.sh"
	"$MDVM" --accel "${URAID_MDVM_ACCEL:-tcg}" --timeout 200 --disk fs="$d/fs$1.img" "${disks[@]}" \
		--script "$d/job$1.sh" >"$d/vm$1.log" 2>&1
}
run_boot 1 "$boot1" &
p1=$!
run_boot 2 "$boot2"
rc2=$?
wait $p1
rc1=$?
check "VM 1: the kernel made the raid5/raid6 sets (and raw raid0 r) and zeroed their superblocks (rc $rc1)" [ "$rc1" -eq 0 ]
check "VM 2: ... and the raid0/1/4/10/linear sets (rc $rc2)" [ "$rc2" -eq 0 ]
[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] || { grep -B3 -A3 '!!!' "$d"/vm*.log | head -40; t_done; }
val() { sed -n "s/^$1_$2=\\([0-9a-f]*\\).*/\\1/p" "$d"/vm*.log | head -1; }
sha() { cat "$@" | sha256sum | cut -d' ' -f1; }

n_sets=0 n_right=0
while read -r name level n chunk layout meta drop; do
	[ -n "$name" ] || continue
	bytes=$(val BYTES "$name") md5=$(val MD5 "$name")
	# renamed and shuffled (seeded), the dropped member left out
	imgs=()
	for ((i = 0; i < n; i++)); do
		[ "$drop" = "$i" ] && continue
		mv "$d/$name$i" "$d/x$name-$(printf '%s%d' "$name" "$i" | md5sum | cut -c1-6).img"
	done
	mapfile -t imgs < <(ls "$d"/x"$name"-*.img | python3 -c \
		'import sys,random; l=sys.stdin.read().split(); random.Random(5).shuffle(l); print("\n".join(l))')
	before=$(sha "${imgs[@]}")
	"$URAID" probe --json --name "p$name" "${imgs[@]}" >"$d/probe_$name.json" 2>"$d/probe_$name.err"
	prc=$?
	n_sets=$((n_sets + 1))
	desc="$level n=$n chunk=${chunk}K $layout md $meta$([ "$drop" = - ] || echo ", role $drop missing")"
	check "probe $name ($desc): exit 0, a candidate" [ "$prc" -eq 0 ]
	python3 - "$d/probe_$name.json" >"$d/build_$name.args" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["candidates"]
if c:
    print("\n".join(c[0]["build"][1:]))
PY
	mapfile -t args <"$d/build_$name.args"
	if [ "${#args[@]}" -gt 0 ] && "$URAID" "${args[@]}" 2>"$d/build_$name.err"; then
		got=$("$URAID" cat "p$name" | head -c "$bytes" | md5sum | cut -d' ' -f1)
		size=$("$URAID" cat "p$name" | wc -c)
		"$URAID" stop "p$name"
		if [ "$got" = "$md5" ] && [ "$size" -ge "$bytes" ]; then
			ok "... its build line reads the kernel's $bytes bytes bit for bit (${args[*]:1:6})"
			n_right=$((n_right + 1))
		else
			fail "... its build line reads other bytes ($got, $size bytes; kernel $md5, $bytes): ${args[*]}"
			head -c 600 "$d/probe_$name.json"; echo
		fi
	else
		fail "... no build line ran: $(cat "$d/build_$name.err" 2>/dev/null) $(head -c 400 "$d/probe_$name.json")"
	fi
	check "... probe, build and cat changed no member" [ "$(sha "${imgs[@]}")" = "$before" ]
done <<<"$boot1
$boot2"
echo "# $n_right of $n_sets kernel-made sets recovered"

# serve --readonly of a built array: the same bytes over NBD, nothing written
imgs=("$d"/xa-*.img)
before=$(sha "${imgs[@]}")
mapfile -t args <"$d/build_a.args"
"$URAID" "${args[@]}" 2>/dev/null
check_fails "serve of a built array without --readonly is refused" "$URAID" serve pa
uri=$("$URAID" serve pa --readonly 2>"$d/serve.err")
if command -v nbdcopy >/dev/null && [ -n "$uri" ]; then
	got=$(nbdcopy "$uri" - | head -c "$(val BYTES a)" | md5sum | cut -d' ' -f1)
	check "serve pa --readonly serves the kernel's bytes" [ "$got" = "$(val MD5 a)" ]
else
	fail "serve pa --readonly: $(cat "$d/serve.err")"
fi
"$URAID" stop pa
check "build, serve --readonly and stop changed no member" [ "$(sha "${imgs[@]}")" = "$before" ]

# Not an array: random members; random members and an unrelated file system.
for i in 0 1 2; do head -c 16M /dev/urandom >"$d/rnd$i"; done

# Set a with an unrelated disk mixed in: found, the stranger left out.
"$URAID" probe --json --name pmix "${imgs[1]}" "$d/rnd1" "${imgs[0]}" "${imgs[3]}" "${imgs[2]}" \
	>"$d/mix.json" 2>/dev/null
check "raid5 with an unrelated disk mixed in: a candidate (rc $?)" \
	python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["candidates"])' "$d/mix.json"
mapfile -t args < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["candidates"][0]["build"][1:]))' "$d/mix.json" 2>/dev/null)
if [ "${#args[@]}" -gt 0 ] && ! printf '%s\n' "${args[@]}" | grep -q rnd1 && "$URAID" "${args[@]}" 2>/dev/null; then
	got=$("$URAID" cat pmix | head -c "$(val BYTES a)" | md5sum | cut -d' ' -f1)
	"$URAID" stop pmix
	check "... its build line leaves it out and reads the kernel's bytes" [ "$got" = "$(val MD5 a)" ]
else
	fail "... no build line without the stranger: ${args[*]}"
fi
# ... and with two: both left out.
"$URAID" probe --json --name pmix2 "$d/rnd0" "${imgs[2]}" "${imgs[0]}" "$d/rnd2" "${imgs[3]}" \
	"${imgs[1]}" >"$d/mix2.json" 2>/dev/null
mapfile -t args < <(python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["candidates"][0]["build"][1:]))' "$d/mix2.json" 2>/dev/null)
if [ "${#args[@]}" -gt 0 ] && ! printf '%s\n' "${args[@]}" | grep -q rnd && "$URAID" "${args[@]}" 2>/dev/null; then
	got=$("$URAID" cat pmix2 | head -c "$(val BYTES a)" | md5sum | cut -d' ' -f1)
	"$URAID" stop pmix2
	check "raid5 with two unrelated disks mixed in: the build line leaves both out, reads the kernel's bytes" \
		[ "$got" = "$(val MD5 a)" ]
else
	fail "raid5 with two unrelated disks mixed in: no build line without them: ${args[*]} $(head -c 300 "$d/mix2.json")"
fi
"$URAID" probe "$d/rnd0" "$d/rnd1" "$d/rnd2" >"$d/rnd.out" 2>/dev/null
rc=$?
check "random members: probe exits 3 (rc $rc)" [ "$rc" -eq 3 ]
check "... saying nothing convincing was found" grep -q "nothing convincing" "$d/rnd.out"
"$URAID" probe --json "$d/rnd0" "$d/fs_a.img" "$d/rnd2" >"$d/unrel.json" 2>/dev/null
rc=$?
check "an unrelated file system with random members: exit 3 (rc $rc)" [ "$rc" -eq 3 ]
check "... an empty candidate list, the file system named as evidence" \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["candidates"] == [] and any("ext2/3/4" in s["what"] for s in j["signatures"])))' "$d/unrel.json"
t_done
