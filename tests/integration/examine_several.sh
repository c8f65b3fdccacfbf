#!/usr/bin/env bash
# Issue #24: `uraid examine M1 M2 ...` prints each member's own header. Ten
# members of six arrays that differ in everything examine prints (1.2 with a
# spare, 0.90, 1.2 with a bitmap, a journal, 1.0 raid6, 1.1 raid10 far) in
# an order that changes metadata and features at every step. Each block of
# the one-call output (split at the "PATH:" lines) must be that member's
# own `uraid examine PATH` and `mdadm --examine PATH` (the reference), and
# the whole must equal `mdadm --examine` of the same list; with --json each
# element must be that member's single --json element.
source "$(dirname "$0")/../lib.sh"
MDADM=$(command -v mdadm || echo /sbin/mdadm)
[ -x "$MDADM" ] || { fail "mdadm not installed"; t_done; }
export URAID_RUN_DIR=$T_TMP/run TZ=UTC
cd "$T_TMP" || exit 1
mk() { "$URAID" create --size=8M --no-daemon --assume-clean "$@" >/dev/null 2>&1; }
mk --level=5 --raid-devices=3 --spare-devices=1 --name=e5 a0 a1 a2 a3
mk --level=1 --raid-devices=2 --metadata=0.90 --name=e1 b0 b1
mk --level=1 --raid-devices=2 --bitmap=internal --name=eb c0 c1
truncate -s 8M j
mk --level=5 --raid-devices=3 --write-journal j --name=ej d0 d1 d2
mk --level=6 --raid-devices=4 --metadata=1.0 --name=e6 f0 f1 f2 f3
mk --level=10 --raid-devices=4 --layout=f2 --metadata=1.1 --name=e10 g0 g1 g2 g3
list=(c0 a0 j d1 b0 f2 a3 g1 c1 b1)
host=$(hostname)
"$URAID" examine --homehost "$host" "${list[@]}" >all.txt 2>&1
check "examine of ten members exits 0" test $? -eq 0
# block PATH FILE: the lines from "PATH:" up to the next member's header
block() { awk -v h="$1:" -v names=" ${list[*]} " '
	$0 == h { on = 1; print; next }
	on && /^[^ ].*:$/ && index(names, " " substr($0, 1, length($0) - 1) " ") { exit }
	on { print }' "$2"; }
for f in "${list[@]}"; do
	"$URAID" examine --homehost "$host" "$f" >one.txt 2>&1
	if diff <(block "$f" all.txt) one.txt >d.txt; then
		ok "$f: its block is its own single examine"
	else
		fail "$f: its block differs from examine $f"; sed 's/^/# /' d.txt | head -20
	fi
	if diff <(block "$f" all.txt) <("$MDADM" --examine "$f" 2>&1) >d.txt; then
		ok "$f: its block is mdadm --examine $f"
	else
		fail "$f: its block differs from mdadm --examine $f"; sed 's/^/# /' d.txt | head -20
	fi
done
check "the whole output is mdadm --examine of the same list" \
	diff all.txt <("$MDADM" --examine "${list[@]}" 2>&1)
"$URAID" examine --json --homehost "$host" "${list[@]}" >all.json
for f in "${list[@]}"; do "$URAID" examine --json --homehost "$host" "$f"; done >one.json
check "--json: each element is that member's own" python3 -c '
import json, sys
many = json.load(open("all.json"))
singles = []
dec = json.JSONDecoder()
text = open("one.json").read()
i = 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    v, i = dec.raw_decode(text, i)
    singles += v
sys.exit(0 if many == singles and len(many) == 10 else 1)'
t_done
