#!/usr/bin/env bash
# Superblocks written by uraid (md_sb_init + md_sb_store, through the unit test
# binary's writer) read by Debian's mdadm: checksum correct, the same level,
# layout, chunk, devices, offsets, uuid, name, role and events; and uraid
# examine prints exactly what mdadm --examine prints for each of them.
. "$(dirname "$0")/../lib.sh"
MDADM=$(command -v mdadm || echo /sbin/mdadm)
WRITER=$TOP/build/asan/tests/test_meta_md_create
[ -x "$MDADM" ] || { fail "mdadm not installed (scripts/deps installs it)"; t_done; }
[ -x "$WRITER" ] || { fail "$WRITER missing (make tests-build)"; t_done; }
export TZ=UTC
W=$T_TMP/members
mkdir -p "$W"
URAID_MD_WRITE_DIR=$W "$WRITER" t_write_members >"$T_TMP/writer.log" 2>&1
check "writer made the member files" grep -q "^ok - t_write_members" "$T_TMP/writer.log"
host=$(hostname)

# name as mdadm prints the level (-1 linear ...)
lvname() { case $1 in -1) echo linear ;; *) echo "raid$1" ;; esac; }
# mdadm's layout words for what the manifest recorded
layout_word() { # level layout
	case $1 in
	5 | 6) case $2 in
		0) echo left-asymmetric ;; 1) echo right-asymmetric ;; 2) echo left-symmetric ;;
		3) echo right-symmetric ;; 4) echo parity-first ;; 5) echo parity-last ;;
		16) echo left-asymmetric-6 ;; 17) echo right-asymmetric-6 ;; 18) echo left-symmetric-6 ;;
		19) echo right-symmetric-6 ;; 20) echo parity-first-6 ;; esac ;;
	10) python3 -c "
l=$2; n=l&255; f=(l>>8)&255; o='offset' if l&0x10000 else 'far'
s=[]
if n!=1: s.append('near=%d'%n)
if f!=1: s.append('%s=%d'%(o,f))
print(', '.join(s))" ;;
	0) case $2 in 1) echo original ;; 2) echo alternate ;; esac ;;
	esac
}
field() { sed -n "s/^ *$1 : //p" "$2" | head -1; }

n=0
while IFS=$'\t' read -r f ver level layout chunk rdisks doff soff uuid name role events size; do
	n=$((n + 1))
	b=$(basename "$f")
	"$MDADM" --examine "$f" >"$T_TMP/m.txt" 2>&1
	check "$b: mdadm --examine accepts it" test $? -eq 0
	check "$b: checksum correct" grep -q "Checksum : [0-9a-f]* - correct" "$T_TMP/m.txt"
	want_ver=$ver; [ "$ver" = 0.90 ] && want_ver=0.90.00
	check "$b: version $want_ver" test "$(field Version "$T_TMP/m.txt")" = "$want_ver"
	check "$b: level" test "$(field 'Raid Level' "$T_TMP/m.txt")" = "$(lvname "$level")"
	check "$b: raid devices" test "$(field 'Raid Devices' "$T_TMP/m.txt")" = "$rdisks"
	check "$b: events" test "$(field Events "$T_TMP/m.txt")" = "$events"
	lw=$(layout_word "$level" "$layout")
	if [ -n "$lw" ] && [ "$level" != 0 ]; then
		check "$b: layout $lw" test "$(field Layout "$T_TMP/m.txt")" = "$lw"
	fi
	case $level in
	0 | 4 | 5 | 6 | 10) check "$b: chunk" test "$(field 'Chunk Size' "$T_TMP/m.txt")" = "${chunk}K" ;;
	esac
	if [ "$ver" = 0.90 ]; then
		check "$b: uuid" test "$(field UUID "$T_TMP/m.txt" | cut -d' ' -f1)" = "$uuid"
		check "$b: used dev size" test "$(field 'Used Dev Size' "$T_TMP/m.txt" | cut -d' ' -f1)" = $((size / 2))
		if [ "$role" -ge 0 ]; then
			check "$b: this disk" grep -Eq "^this +[0-9]+ +0 +0 +$role +active sync" "$T_TMP/m.txt"
		else
			check "$b: this disk spare" grep -Eq "^this .* spare" "$T_TMP/m.txt"
		fi
	else
		check "$b: uuid" test "$(field 'Array UUID' "$T_TMP/m.txt")" = "$uuid"
		check "$b: name" test "$(field Name "$T_TMP/m.txt" | sed 's/  (local.*//')" = "$name"
		if [ "$doff" != 0 ]; then
			check "$b: data offset" test "$(field 'Data Offset' "$T_TMP/m.txt")" = "$doff sectors"
		fi
		check "$b: super offset" test "$(field 'Super Offset' "$T_TMP/m.txt")" = "$soff sectors"
		if [ "$role" -ge 0 ]; then
			check "$b: role" test "$(field 'Device Role' "$T_TMP/m.txt")" = "Active device $role"
		else
			check "$b: role spare" test "$(field 'Device Role' "$T_TMP/m.txt")" = "spare"
		fi
		if [ "$level" = 0 ] && [ "$layout" = 2 ]; then
			check "$b: raid0 layout recorded" test "$(field Layout "$T_TMP/m.txt")" = alternate
		fi
	fi
	if diff "$T_TMP/m.txt" <("$URAID" examine --homehost "$host" "$f" 2>&1) >"$T_TMP/d" 2>&1; then
		ok "$b: uraid examine prints what mdadm --examine prints"
	else
		fail "$b: uraid examine differs from mdadm"; sed 's/^/# /' "$T_TMP/d"
	fi
done <"$W/manifest.tsv"
check "at least 40 members checked" test "$n" -ge 40
t_done
