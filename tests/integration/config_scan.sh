#!/usr/bin/env bash
# The configuration file (mdadm.conf syntax) and its users: parse errors name
# the file and line and start nothing; assemble NAME and assemble --scan
# find members by superblock UUID among the DEVICE candidates (decoys with
# other UUIDs and no superblock beside them); examine --scan's output, read
# back as the configuration, assembles the same arrays; detail --scan prints
# one ARRAY line per running array; serve NAME and the plugin's array=NAME
# find the members the same way.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
unset URAID_CONFIG
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
d=$T_TMP/disks
mkdir -p "$d"
q() { "$URAID" "$@" >/dev/null 2>&1; }
q create --level=5 --raid-devices=3 --size=8M --name=alpha --assume-clean --run --no-daemon \
	"$d/a0" "$d/a1" "$d/a2"
q create --level=1 --raid-devices=2 --spare-devices=1 --metadata=1.0 --size=8M --name=beta \
	--assume-clean --run --no-daemon "$d/b0" "$d/b1" "$d/b2"
q create --level=1 --raid-devices=2 --metadata=0.90 --size=8M --assume-clean --run --no-daemon \
	"$d/c0" "$d/c1"
truncate -s 8M "$d/plain"  # no superblock
check "three arrays made" test -s "$d/c1"
uuid() { "$URAID" examine "$1" | sed -n 's/.*UUID : \([0-9a-f:]*\).*/\1/p' | head -1; }
ua=$(uuid "$d/a0") ub=$(uuid "$d/b0") uc=$(uuid "$d/c0")

# 1. Parse errors: file and line, exit non-zero, nothing started.
bad() { # NAME LINE TEXT...: the config TEXT is refused at LINE
	local n=$1 line=$2; shift 2
	printf '%s\n' "$@" >"$T_TMP/bad.conf"
	"$URAID" assemble --config "$T_TMP/bad.conf" --scan >/dev/null 2>"$T_TMP/err"
	local rc=$?
	check "$n: refused (rc $rc)" [ "$rc" -ne 0 ]
	check "... naming $T_TMP/bad.conf:$line ($(head -c 200 "$T_TMP/err"))" \
		grep -q "uraid: assemble: $T_TMP/bad.conf:$line: " "$T_TMP/err"
}
bad "unknown keyword" 3 "DEVICE $d/*" "# a comment" "ARAY /dev/md/x UUID=$ua"
bad "short UUID" 2 "DEVICE $d/*" "ARRAY /dev/md/x UUID=1234"
bad "unknown tag" 3 "DEVICE $d/*" "" "ARRAY /dev/md/x UUID=$ua" "   colour=blue"
bad "unterminated quote" 1 "ARRAY '/dev/md/x UUID=$ua"
bad "ARRAY with nothing to find members by" 2 "MAILADDR root" "ARRAY /dev/md/x"
bad "continuation first" 1 "   UUID=$ua"
bad "spares not a number" 1 "ARRAY /dev/md/x UUID=$ua spares=two"
bad "PROGRAM with two values" 1 "PROGRAM /bin/a /bin/b"
check "nothing started by a refused config" bash -c "! ls '$URAID_RUN_DIR'/*.sock 2>/dev/null"
check_fails "a missing --config file is an error" "$URAID" assemble --config "$T_TMP/none.conf" --scan
URAID_CONFIG=$T_TMP/none.conf "$URAID" assemble --scan 2>"$T_TMP/err"
check "... and so is a missing \$URAID_CONFIG" grep -q "none.conf: No such file" "$T_TMP/err"

# 2. examine --scan: ARRAY lines as mdadm prints them (mdvm: scan_mdvm.sh).
"$URAID" examine --scan "$d"/* >"$T_TMP/scan.out" 2>/dev/null
cat >"$T_TMP/scan.expect" <<EOT
ARRAY /dev/md/alpha  metadata=1.2 UUID=$ua name=$(hostname):alpha
ARRAY /dev/md/beta  metadata=1.0 UUID=$ub name=$(hostname):beta
   spares=1
ARRAY /dev/md0 UUID=$uc
EOT
check "examine --scan prints one ARRAY line per array, spares on a continuation" \
	diff "$T_TMP/scan.expect" "$T_TMP/scan.out"
check_fails "examine --scan of a member without superblock fails" \
	q examine --scan "$d/plain"

# 3. examine --scan read back: DEVICE + its lines assemble the arrays.
{ echo "DEVICE $d/*"; echo "# made by examine --scan"; cat "$T_TMP/scan.out"; } >"$T_TMP/u.conf"
check "assemble --scan with that config" "$URAID" assemble --config "$T_TMP/u.conf" --scan
check "... started alpha, beta and md0" bash -c "'$URAID' status alpha && '$URAID' status beta && '$URAID' status md0" 
"$URAID" status beta >"$T_TMP/st"
check "... beta with its spare" grep -q 'b2\[2\](S)' "$T_TMP/st"
"$URAID" detail --scan >"$T_TMP/dscan"
cat >"$T_TMP/dscan.expect" <<EOT
ARRAY /dev/md/alpha metadata=1.2 name=$(hostname):alpha UUID=$ua
ARRAY /dev/md/beta metadata=1.0 spares=1 name=$(hostname):beta UUID=$ub
ARRAY /dev/md/md0 metadata=0.90 UUID=$uc
EOT
check "detail --scan: an ARRAY line per running array (mdadm's order of tags)" \
	diff "$T_TMP/dscan.expect" "$T_TMP/dscan"
{ echo "DEVICE $d/*"; cat "$T_TMP/dscan"; } >"$T_TMP/d.conf"
check "assemble --scan again: all running, nothing to do (rc 1 as mdadm)" \
	check_fails_q "$URAID" assemble --config "$T_TMP/d.conf" --scan
for n in alpha beta md0; do q stop $n; done

# 4. detail --scan's lines as the config, by name.
check "assemble NAME through detail --scan's lines" \
	"$URAID" assemble --config "$T_TMP/d.conf" beta
check "... beta runs" q status beta
check_fails "assemble NAME of a running array refused" q assemble --config "$T_TMP/d.conf" beta
q stop beta
check_fails "assemble of an unknown NAME refused" q assemble --config "$T_TMP/d.conf" gamma
"$URAID" assemble --config "$T_TMP/d.conf" gamma 2>"$T_TMP/err"
check "... saying no ARRAY line names it" grep -q "no ARRAY line names it in $T_TMP/d.conf" "$T_TMP/err"
# A UUID no member has: nothing found, nothing started.
printf 'DEVICE %s/*\nARRAY /dev/md/ghost UUID=01234567:89abcdef:01234567:89abcdef\n' "$d" >"$T_TMP/g.conf"
"$URAID" assemble --config "$T_TMP/g.conf" ghost 2>"$T_TMP/err"
check "an ARRAY line whose UUID no candidate has: no member found" \
	grep -q "no member found among the candidates" "$T_TMP/err"
check "... and not started" check_fails_q "$URAID" status ghost
# devices= narrows the candidates; the name in the config wins over md's.
printf 'ARRAY /dev/md/other UUID=%s devices=%s/a0,%s/a1\n' "$ua" "$d" "$d" >"$T_TMP/n.conf"
check "devices= with two of three members: alpha starts degraded as 'other'" \
	q assemble --config "$T_TMP/n.conf" other
"$URAID" status other >"$T_TMP/st" 2>&1
check "... [3/2]" grep -q '\[3/2\]' "$T_TMP/st"
q stop other
# Abbreviated keywords, quotes, continuation lines, $URAID_CONFIG.
printf 'dev %s/b?\n# note\narr "/dev/md/be ta"\n   uuid=%s\n' "$d" "$(echo "$ub" | tr : .)" >"$T_TMP/a.conf"
URAID_CONFIG=$T_TMP/a.conf "$URAID" assemble --scan 2>"$T_TMP/err"
check "abbreviations, a quoted name, a continuation, \$URAID_CONFIG: beta found" \
	grep -q "has been started with 3 members" "$T_TMP/err"
for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && q stop "$(basename "$s" .sock)"; done

# 5. serve NAME and nbdkit's array=NAME, through $URAID_CONFIG.
export URAID_CONFIG=$T_TMP/d.conf
if command -v nbdkit >/dev/null && command -v nbdcopy >/dev/null &&
	[ -f "${URAID_NBDKIT_PLUGIN:=$TOP/build/rel/nbdkit-uraid-plugin.so}" ]; then
	export URAID_NBDKIT_PLUGIN
	"$URAID" cat "$d/a0" "$d/a1" "$d/a2" | sha256sum >"$T_TMP/want"
	nbdkit -U - "$URAID_NBDKIT_PLUGIN" array=alpha readonly=true control=false \
		--run 'nbdcopy "$uri" - | sha256sum' >"$T_TMP/got" 2>"$T_TMP/err"
	check "nbdkit uraid array=alpha reads what cat reads" diff "$T_TMP/want" "$T_TMP/got"
	nbdkit -U - "$URAID_NBDKIT_PLUGIN" array=gamma --run true 2>"$T_TMP/err"
	check "array=gamma (no such line) refused, naming the file" \
		grep -q "array=gamma: no such ARRAY line in $T_TMP/d.conf" "$T_TMP/err"
	uri=$("$URAID" serve alpha 2>"$T_TMP/err")
	check "serve alpha (not running): served from the config's members" [ -n "$uri" ]
	nbdcopy "$uri" - 2>/dev/null | sha256sum >"$T_TMP/got"
	check "... the same bytes" diff "$T_TMP/want" "$T_TMP/got"
	q stop alpha
else
	ok "# skip: nbdkit, nbdcopy or the plugin missing"
fi

# 6. DEVICE partitions (and no DEVICE line at all): every device of
# /proc/partitions, here loop devices over the members (root only).
unset URAID_CONFIG
loops=()
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
	for x in b0 b1 b2; do
		l=$(losetup -f --show "$d/$x" 2>/dev/null) && loops+=("$l")
	done
fi
if [ ${#loops[@]} = 3 ]; then
	trap 'for l in "${loops[@]}"; do losetup -d "$l"; done; cleanup' EXIT
	for l in "${loops[@]}"; do udevadm settle 2>/dev/null; grep -q " ${l#/dev/}\$" /proc/partitions || sleep 1; done
	printf 'DEVICE partitions\nARRAY /dev/md/beta UUID=%s\n' "$ub" >"$T_TMP/p.conf"
	"$URAID" assemble --config "$T_TMP/p.conf" --scan 2>"$T_TMP/err"
	check "DEVICE partitions: beta found on the loop devices" grep -q "beta has been started with 3 members" "$T_TMP/err"
	"$URAID" status beta >"$T_TMP/st" 2>&1
	check "... its members are them" grep -q "${loops[0]#/dev/}\[" "$T_TMP/st"
	q stop beta
	printf 'ARRAY /dev/md/beta UUID=%s\n' "$ub" >"$T_TMP/p.conf"
	check "no DEVICE line: partitions too" q assemble --config "$T_TMP/p.conf" beta
	q stop beta
else
	ok "# skip: DEVICE partitions needs root and loop devices"
fi
t_done
