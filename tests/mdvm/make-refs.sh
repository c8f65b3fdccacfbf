#!/usr/bin/env bash
# Makes the committed reference arrays (tests/vectors/) with the REAL Linux md
# driver and mdadm inside shared/mdvm.
#
#   tests/mdvm/make-refs.sh [--out DIR] [--list FILE] [--keep] [NAME...]
#
# Arrays come from tests/mdvm/refs.list (all of them, or only the NAMEs given).
# Several arrays share one VM boot (at most 24 disks per VM: members + the
# pattern disk + a disk that carries the logs back).  For each array the guest
# (tests/mdvm/guest-mkref.sh) creates it on fresh zeroed members, waits for the
# initial resync, writes the md-vectors data pattern with the array's own
# ARRAY_ID, checks the md5 after drop_caches and runs a check, stops it, records
# mdadm --examine/--detail, and re-assembles it read-only for a second md5.
# The host then accepts an array only when both md5s equal the md5 it computes
# itself from shared/md-vectors/tools/mdpattern.py, mismatch_cnt is 0 and the
# read-only pass left the members unchanged; accepted arrays are written to
#   DIR/<name>/m<i>.img.xz, DIR/logs/<name>.log, and a line in DIR/MANIFEST.tsv
# (lines of arrays not rebuilt this time are kept).  Exit status 1 if any
# array failed.  DIR defaults to tests/vectors.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/mdvm/lib.sh
. "$HERE/lib.sh"

OUT=$TOP/tests/vectors
LIST=$HERE/refs.list
KEEP=0
WANT=()
while [ $# -gt 0 ]; do
	case "$1" in
	--out) OUT=$2; shift 2 ;;
	--list) LIST=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	-h | --help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "make-refs: unknown option $1" >&2; exit 2 ;;
	*) WANT+=("$1"); shift ;;
	esac
done
PATGEN=$MDVM_SHARED/md-vectors/tools/mdpattern.py
[ -f "$PATGEN" ] || { echo "make-refs: $PATGEN not found" >&2; exit 2; }
mdvm_ready || exit 2

W=$(mktemp -d "${TMPDIR:-/tmp}/make-refs.XXXXXX") || exit 1
trap 'if [ $KEEP = 1 ]; then echo "make-refs: work files kept in $W"; else rm -rf "$W"; fi' EXIT
mkdir -p "$OUT/logs"

# ---- read the list
declare -a A_NAME A_ID A_LEVEL A_LAYOUT A_CHUNK A_META A_SIZES A_EXTRA
while read -r name id level layout chunk meta sizes extra rest; do
	case "$name" in '' | '#'*) continue ;; esac
	if [ -z "$extra" ] || [ -n "$rest" ]; then
		echo "make-refs: bad line in $LIST: $name ..." >&2
		exit 2
	fi
	if [ ${#WANT[@]} -gt 0 ]; then
		found=0
		for w in "${WANT[@]}"; do [ "$w" = "$name" ] && found=1; done
		[ $found = 1 ] || continue
	fi
	A_NAME+=("$name"); A_ID+=("$id"); A_LEVEL+=("$level"); A_LAYOUT+=("$layout")
	A_CHUNK+=("$chunk"); A_META+=("$meta"); A_SIZES+=("$sizes"); A_EXTRA+=("$extra")
done <"$LIST"
NA=${#A_NAME[@]}
if [ "$NA" -eq 0 ] || { [ ${#WANT[@]} -gt 0 ] && [ "$NA" -ne ${#WANT[@]} ]; }; then
	echo "make-refs: $NA of the requested arrays are in $LIST" >&2
	exit 2
fi

failed=0
NEWMAN=$W/manifest.new
: >"$NEWMAN"

# accept_array K BATCHDIR REFLINE: check one array's result, store it
accept_array() {
	local k=$1 B=$2 ref=$3
	local name=${A_NAME[$k]} id=${A_ID[$k]}
	local bytes md5w md5r mismatch lnum chunk offs lname same rc
	rc=$(sed -n 's/.* rc=\([^ ]*\).*/\1/p' <<<"$ref")
	kv() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$ref"; }
	bytes=$(kv bytes); md5w=$(kv md5w); md5r=$(kv md5r); mismatch=$(kv mismatch)
	lnum=$(kv layout_num); chunk=$(kv chunk); offs=$(kv offsets); lname=$(kv layout_name)
	same=$(kv same)
	if [ "$rc" != 0 ] || [ -z "$bytes" ]; then
		echo "make-refs: $name: FAILED in the VM (rc=$rc); end of its log:" >&2
		tail -n 15 "$B/out/logs/$name.log" 2>&1 | sed 's/^/  | /' >&2
		return 1
	fi
	local sect=$((bytes / 512))
	python3 "$PATGEN" gen "$id" "$sect" "$B/expect.bin" || return 1
	local exp
	exp=$(md5sum <"$B/expect.bin" | cut -d' ' -f1)
	rm -f "$B/expect.bin"
	local why=
	[ "$md5w" = "$exp" ] || why="$why md5 after write $md5w != expected $exp;"
	[ "$md5r" = "$exp" ] || why="$why md5 after read-only re-assembly $md5r != expected $exp;"
	[ "$same" = 1 ] || why="$why the read-only re-assembly changed the members;"
	case "$mismatch" in 0 | -) ;; *) why="$why mismatch_cnt=$mismatch;" ;; esac
	case "$offs" in *'?'*) why="$why data offsets unknown ($offs);" ;; esac
	if [ -n "$why" ]; then
		echo "make-refs: $name: REJECTED:$why" >&2
		return 1
	fi
	local i=0 sz members=() mbytes=
	IFS=, read -r -a members <<<"${A_SIZES[$k]}"
	rm -rf "${OUT:?}/$name"
	mkdir -p "$OUT/$name"
	for sz in "${members[@]}"; do
		xz -9 -T1 -c "$B/a${k}m$i.img" >"$OUT/$name/m$i.img.xz" || return 1
		mbytes="$mbytes${mbytes:+,}$(stat -c %s "$B/a${k}m$i.img")"
		i=$((i + 1))
	done
	cp "$B/out/logs/$name.log" "$OUT/logs/$name.log" || return 1
	# one data offset when all members agree, else the list
	local o0=${offs%%,*} doff=$offs
	[ "$(tr ',' '\n' <<<"$offs" | sort -u | wc -l)" = 1 ] && doff=$o0
	local ckib=-
	[ "${chunk:-0}" != 0 ] && ckib=$((chunk / 1024))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${A_LEVEL[$k]}" \
		"${lname:--}" "${lnum:--}" "$ckib" "${A_META[$k]}" "$i" "$mbytes" "$sect" "$id" "$exp" \
		"$doff" "${A_EXTRA[$k]}" >>"$NEWMAN"
	echo "make-refs: $name: ok ($sect sectors, md5 $exp, data offset $doff, layout ${lname:--}/$lnum)"
}

# run_batch K0 K1: arrays K0..K1-1 in one VM
run_batch() {
	local k0=$1 k1=$2 B=$W/batch$1
	mkdir -p "$B/out"
	local disks=() job=$B/job.sh patmib=0 k i sz members
	echo '. /root/guest-mkref.sh' >"$job"
	: >"$B/pat.img"
	for ((k = k0; k < k1; k++)); do
		IFS=, read -r -a members <<<"${A_SIZES[$k]}"
		local devs='' total=0
		i=0
		for sz in "${members[@]}"; do
			truncate -s "${sz}M" "$B/a${k}m$i.img"
			disks+=(--disk "a${k}m$i=$B/a${k}m$i.img")
			devs="$devs /dev/disk-a${k}m$i"
			total=$((total + sz))
			i=$((i + 1))
		done
		# the array is never bigger than its members together: pattern for that many sectors
		python3 "$PATGEN" gen "${A_ID[$k]}" $((total * 2048)) "$B/region.bin" || return 1
		cat "$B/region.bin" >>"$B/pat.img"
		rm -f "$B/region.bin"
		echo "mkref ${A_NAME[$k]} ${A_ID[$k]} $patmib ${A_LEVEL[$k]} ${A_LAYOUT[$k]}" \
			"${A_CHUNK[$k]} ${A_META[$k]} ${A_EXTRA[$k]}$devs" >>"$job"
		patmib=$((patmib + total))
	done
	echo 'tar -cf /dev/disk-out -C /root logs' >>"$job"
	truncate -s 16M "$B/out.img"
	echo "make-refs: VM for ${A_NAME[*]:$k0:$((k1 - k0))}"
	mdvm_run --quiet --timeout 1800 "${disks[@]}" --disk "pat=$B/pat.img" \
		--disk "out=$B/out.img" --put "$HERE/guest-mkref.sh=/root/guest-mkref.sh" \
		--script "$job" --log "$B/console.log"
	local vmrc=$?
	tar -xf "$B/out.img" -C "$B/out" 2>/dev/null
	if [ $vmrc -ne 0 ] && ! grep -q '^REF ' "$B/console.log"; then
		echo "make-refs: the VM failed (status $vmrc):" >&2
		tail -n 30 "$B/console.log" | sed 's/^/  | /' >&2
	fi
	for ((k = k0; k < k1; k++)); do
		local ref
		ref=$(grep "^REF ${A_NAME[$k]} " "$B/console.log" | tail -n 1)
		accept_array "$k" "$B" "${ref:-REF ${A_NAME[$k]} rc=none}" || failed=$((failed + 1))
	done
	[ $KEEP = 1 ] || rm -f "$B"/*.img
}

# ---- batches of at most 22 members (24 disks per VM)
k0=0 nd=0
for ((k = 0; k < NA; k++)); do
	n=$(($(tr -cd , <<<"${A_SIZES[$k]}" | wc -c) + 1))
	if [ $((nd + n)) -gt 22 ]; then
		run_batch $k0 "$k"
		k0=$k nd=0
	fi
	nd=$((nd + n))
done
run_batch $k0 "$NA"

# ---- MANIFEST.tsv: keep lines of arrays not rebuilt, add the new ones, order by ARRAY_ID
MAN=$OUT/MANIFEST.tsv
{
	printf '# name\tlevel\tlayout\tlayout_num\tchunk_kib\tmetadata\tmembers\tmember_bytes'
	printf '\tarray_sectors\tarray_id\tmd5\tdata_offset\tcreate_extra\n'
	{
		if [ -f "$MAN" ]; then
			grep -v '^#' "$MAN" | while IFS=$'\t' read -r n rest; do
				grep -q "^$n"$'\t' "$NEWMAN" || printf '%s\t%s\n' "$n" "$rest"
			done
		fi
		cat "$NEWMAN"
	} | sort -t$'\t' -k10,10n
} >"$W/manifest.tsv"
mv "$W/manifest.tsv" "$MAN"
echo "make-refs: $((NA - failed)) arrays ok, $failed failed; $(du -sh "$OUT" | cut -f1) in $OUT"
[ $failed -eq 0 ]
