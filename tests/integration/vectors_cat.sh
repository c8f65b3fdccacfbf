#!/usr/bin/env bash
# Reads every kernel-made reference array with `uraid cat` and `uraid examine`:
# tests/vectors/MANIFEST.tsv (made by tests/mdvm/make-refs.sh) and
# shared/md-vectors/MANIFEST.json.  For each array:
#  * `uraid cat m0 m1 ...` must exit 0 and its output must have the md5 that
#    the real kernel produced for /dev/md0;
#  * with members left out where the level survives it (raid1/4/5/10: each
#    member in turn; raid1: each member alone; raid6: also every pair) the
#    md5 must be the same, and where it does not (raid0, linear: any member;
#    raid4/5: any pair; raid6: three; raid10: the `copies` first members,
#    which hold every copy of chunk 0) `uraid cat` must exit non-zero;
#  * `uraid examine` of each member must agree with the last mdadm --examine
#    of that member in the recorded log on Version, Feature Map, Array UUID
#    (UUID for 0.90), Name, Raid Level, Raid Devices, Data Offset, Super
#    Offset, Events, Layout, Chunk Size and Device Role, wherever mdadm
#    printed the key.  Values are compared with whitespace collapsed and
#    mdadm's "(local to host X)" suffix dropped (it depends on the host).
# Environment: URAID (CLI under test), URAID_SHARED, URAID_VECTORS (instead of
# tests/vectors), VECTORS_ONLY=NAME,...
# (only those arrays), VECTORS_NO_DEGRADED=1 (skip the left-out runs).
. "$(dirname "$0")/../lib.sh"
VEC=${URAID_VECTORS:-$TOP/tests/vectors}
MDV=$SHARED/md-vectors
KEYS='Version|Feature Map|Array UUID|UUID|Name|Raid Level|Raid Devices|Data Offset|Super Offset|Events|Layout|Chunk Size|Device Role'

# ---- one list for both sources: name level nmem md5 imgdir log copies
LIST=$T_TMP/arrays.tsv
: >"$LIST"
if [ -f "$VEC/MANIFEST.tsv" ]; then
	grep -v '^#' "$VEC/MANIFEST.tsv" | while IFS=$'\t' read -r n lvl _ lnum _ _ nm _ _ _ md5 _; do
		copies=1
		[ "$lvl" = raid10 ] && copies=$(((lnum & 255) * ((lnum >> 8) & 255)))
		# raid6 DDF layouts (8-10) are refused by design (issue #3 allows it)
		ddf=0
		[ "$lvl" = raid6 ] && [ "$lnum" -ge 8 ] && [ "$lnum" -le 10 ] && ddf=1
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$lvl" "$nm" "$md5" "$VEC/$n" \
			"$VEC/logs/$n.log" "$copies" "$ddf" >>"$LIST"
	done
else
	fail "tests/vectors/MANIFEST.tsv missing"
fi
if [ -f "$MDV/MANIFEST.json" ]; then
	python3 - "$MDV" >>"$LIST" <<'EOF' || fail "cannot read $MDV/MANIFEST.json"
import json, re, sys
top = sys.argv[1]
for a in json.load(open(top + '/MANIFEST.json'))['arrays']:
    copies = 1
    if a['level'] == 'raid10':
        copies = 1
        for k, v in re.findall(r'(near|far|offset)=(\d+)', a['layout_reported'] or ''):
            copies *= int(v)
    files = [m['file'] for m in sorted(a['members'], key=lambda m: m['order_on_create_cmdline'])]
    for i, f in enumerate(files):  # the loop below relies on images/<name>/m<i>.img.xz
        assert f == 'images/%s/m%d.img.xz' % (a['name'], i), f
    print('\t'.join(str(x) for x in (a['name'], a['level'], len(files), a['expected_array_md5'],
                                     top + '/images/' + a['name'], top + '/' + a['log'], copies, 0)))
EOF
else
	fail "$MDV/MANIFEST.json missing (set URAID_SHARED)"
fi
[ -s "$LIST" ] || { fail "no arrays to test"; t_done; }

# cat_md5 FILE...: CAT_RC = exit status of uraid cat, CAT_MD5 = md5 of its output
cat_md5() {
	CAT_MD5=$({
		timeout 120 "$URAID" cat "$@" 2>"$T_TMP/cat.err"
		echo $? >"$T_TMP/cat.rc"
	} | md5sum | cut -d' ' -f1)
	CAT_RC=$(cat "$T_TMP/cat.rc")
}

# expect_same LABEL FILE...: cat succeeds with the array's md5
expect_same() {
	local label=$1
	shift
	cat_md5 "$@"
	if [ "$CAT_RC" = 0 ] && [ "$CAT_MD5" = "$md5" ]; then
		ok "$label"
	else
		fail "$label: exit $CAT_RC, md5 $CAT_MD5, want $md5 ($(head -c 200 "$T_TMP/cat.err"))"
	fi
}

# expect_refused LABEL FILE...: cat exits non-zero
expect_refused() {
	local label=$1
	shift
	cat_md5 "$@"
	if [ "$CAT_RC" != 0 ]; then ok "$label"; else fail "$label: exited 0 (expected an error)"; fi
}

# without I...: the member files minus the given indexes
without() {
	local i j skip
	OUT=()
	for ((i = 0; i < nmem; i++)); do
		skip=0
		for j in "$@"; do [ "$i" = "$j" ] && skip=1; done
		[ $skip = 1 ] || OUT+=("${imgs[$i]}")
	done
}

# fields: "Key : value" lines -> "Key=value" for the compared keys, normalized
fields() {
	tr -d '\r' | sed -n -E "s/^ *($KEYS) *: *(.*)\$/\1=\2/p" |
		sed -E 's/ +\(local to host [^)]*\)//; s/[[:space:]]+/ /g; s/ $//'
}

# mdadm_examine LOG I: the last "mdadm --examine" block of member m<I> in LOG
mdadm_examine() {
	tr -d '\r' <"$1" | awk -v want="m$2" '
		/^# mdadm --examine / {
			dev = $NF; sub(/.*-/, "", dev); sub(/^a[0-9]+/, "", dev)
			inblk = (dev == want); if (inblk) n = 0; next
		}
		/^# / || /^=== / || /^MD5/ || /^MEMBER/ || /^mdvm:/ { inblk = 0; next }
		inblk { blk[n++] = $0 }
		END { for (i = 0; i < n; i++) print blk[i] }'
}

examine_array() {
	local i bad='' got want k
	for ((i = 0; i < nmem; i++)); do
		want=$(mdadm_examine "$log" "$i" | fields)
		if [ -z "$want" ]; then
			bad="$bad m$i: no mdadm --examine in $log;"
			continue
		fi
		got=$(timeout 60 "$URAID" examine "${imgs[$i]}" 2>"$T_TMP/ex.err" | fields)
		if [ -z "$got" ]; then
			bad="$bad m$i: uraid examine printed none of the fields ($(head -c 200 "$T_TMP/ex.err"));"
			continue
		fi
		while IFS= read -r k; do
			grep -qxF -- "$k" <<<"$got" ||
				bad="$bad m$i: mdadm '$k', uraid '$(grep "^${k%%=*}=" <<<"$got" | head -n 1)';"
		done <<<"$want"
	done
	if [ -z "$bad" ]; then ok "examine $name: $nmem members agree with mdadm"; else fail "examine $name:$bad"; fi
}

only=",${VECTORS_ONLY:-},"
while IFS=$'\t' read -r name level nmem md5 dir log copies ddf; do
	[ "$only" = ",," ] || [[ "$only" == *",$name,"* ]] || continue
	W=$T_TMP/img
	rm -rf "$W"
	mkdir -p "$W"
	imgs=()
	dec=1
	for ((i = 0; i < nmem; i++)); do
		xz -dc "$dir/m$i.img.xz" >"$W/m$i.img" || dec=0
		imgs+=("$W/m$i.img")
	done
	if [ $dec = 0 ]; then
		fail "$name: cannot decompress the members in $dir"
		continue
	fi
	if [ "$ddf" = 1 ]; then
		# DDF layouts: refused with a message that says so, never misread
		cat_md5 "${imgs[@]}"
		if [ "$CAT_RC" != 0 ] && grep -qi 'unsupported\|not implemented' "$T_TMP/cat.err"; then
			ok "cat $name (DDF layout) refused: $(head -c 120 "$T_TMP/cat.err")"
		else
			fail "cat $name (DDF layout): exit $CAT_RC, want a refusal naming the layout"
		fi
		examine_array
		rm -rf "$W"
		continue
	fi
	expect_same "cat $name ($level, $nmem members)" "${imgs[@]}"
	if [ "${VECTORS_NO_DEGRADED:-0}" != 1 ]; then
		case "$level" in
		linear | raid0)
			for ((i = 0; i < nmem; i++)); do
				without $i
				expect_refused "cat $name without m$i is refused" "${OUT[@]}"
			done
			;;
		raid1 | raid4 | raid5 | raid6 | raid10)
			for ((i = 0; i < nmem; i++)); do
				without $i
				expect_same "cat $name without m$i" "${OUT[@]}"
			done
			;;
		esac
		case "$level" in
		raid1)
			for ((i = 0; i < nmem; i++)); do
				expect_same "cat $name with only m$i" "${imgs[$i]}"
			done
			;;
		raid4 | raid5 | raid6)
			for ((i = 0; i < nmem; i++)); do
				for ((j = i + 1; j < nmem; j++)); do
					without $i $j
					if [ "$level" = raid6 ]; then
						expect_same "cat $name without m$i m$j" "${OUT[@]}"
					else
						expect_refused "cat $name without m$i m$j is refused" "${OUT[@]}"
					fi
				done
			done
			if [ "$level" = raid6 ]; then
				without 0 1 2
				expect_refused "cat $name without m0 m1 m2 is refused" "${OUT[@]}"
			fi
			;;
		raid10)
			# chunk 0's copies are on the first `copies` members in every md raid10 layout
			if [ "$copies" -ge 2 ] && [ "$copies" -lt "$nmem" ]; then
				without $(seq 0 $((copies - 1)))
				expect_refused "cat $name without m0..m$((copies - 1)) (all copies of chunk 0) is refused" \
					"${OUT[@]}"
			fi
			;;
		esac
	fi
	examine_array
	rm -rf "$W"
done <"$LIST"
t_done
