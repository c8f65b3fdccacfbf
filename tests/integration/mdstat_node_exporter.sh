#!/usr/bin/env bash
# A real consumer of $URAID_RUN_DIR/mdstat: Debian's prometheus-node-exporter
# (--path.procfs pointed at the run directory, only its mdadm collector, on
# 127.0.0.1 and a free port) must report four uraid arrays as it reports md
# arrays: node_md_disks / node_md_state / node_md_blocks(_synced) for a clean
# raid5, a raid1 with a failed member, a raid5 recovering onto a spare and a
# raid1 being checked (both held slow), each against what uraid itself says.
source "$(dirname "$0")/../lib.sh"
NE=$(command -v prometheus-node-exporter || true)
[ -n "$NE" ] || { fail "prometheus-node-exporter not installed (scripts/deps)"; t_done; }
export URAID_RUN_DIR=$T_TMP/run
NE_PID=
cleanup() {
	[ -n "$NE_PID" ] && kill "$NE_PID" 2>/dev/null
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
cd "$T_TMP" || exit 1
mk() { "$URAID" create --assume-clean --name "$@" >/dev/null 2>&1; }
mk cl --level=5 --raid-devices=4 --size=8M c0 c1 c2 c3
mk dg --level=1 --raid-devices=2 --size=8M g0 g1
"$URAID" fail dg "$T_TMP/g1"
URAID_SYNC_SPEED_MAX=300 mk rb --level=5 --raid-devices=3 --size=16M r0 r1 r2
"$URAID" fail rb "$T_TMP/r1" && "$URAID" remove rb "$T_TMP/r1"
truncate -s 16M r3
"$URAID" add rb "$T_TMP/r3"
URAID_SYNC_SPEED_MAX=300 mk ck --level=1 --raid-devices=2 --size=16M k0 k1
"$URAID" check ck >/dev/null 2>&1 &
CK_PID=$!
sleep 2
f=$URAID_RUN_DIR/mdstat
sed 's/^/# /' "$f"
check "the run directory's mdstat lists the four arrays" \
	[ "$(grep -Ec '^(cl|dg|rb|ck) : active ' "$f")" -eq 4 ]
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$NE" --path.procfs="$URAID_RUN_DIR" --collector.disable-defaults --collector.mdadm \
	--web.listen-address="127.0.0.1:$port" >"$T_TMP/ne.log" 2>&1 &
NE_PID=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && break; sleep 0.2; done
before=$(cat "$f")
curl -sf "http://127.0.0.1:$port/metrics" | grep '^node_md_' >"$T_TMP/metrics"
after=$(cat "$f")
sed 's/^/# /' "$T_TMP/metrics"
check "node_exporter answered with node_md_ metrics" [ -s "$T_TMP/metrics" ]
check "... and no mdstat parse error in its log" bash -c "! grep -qi 'error' '$T_TMP/ne.log'"
m() { sed -n "s/^$1{$2} //p" "$T_TMP/metrics"; }
blocks() { awk -v a="$1" '$1 == a {getline; print $1}' <<<"$before"; }
# the done count of an array's progress line in a copy of the file
synced() { awk -v a="$1" '$1 == a {getline; getline; if (match($0, /\(([0-9]+)\//)) print substr($0, RSTART + 1, RLENGTH - 2)}' <<<"$2"; }
check "cl: 4 active, 0 failed, 0 spare disks" \
	[ "$(m node_md_disks 'device="cl",state="active"')/$(m node_md_disks 'device="cl",state="failed"')/$(m node_md_disks 'device="cl",state="spare"')" = 4/0/0 ]
check "cl: state active, 4 required, blocks = blocks synced = $(blocks cl)" \
	[ "$(m node_md_state 'device="cl",state="active"')/$(m node_md_disks_required 'device="cl"')/$(m node_md_blocks 'device="cl"')/$(m node_md_blocks_synced 'device="cl"')" = "1/4/$(blocks cl)/$(blocks cl)" ]
check "dg: 1 active, 1 failed disk, state active" \
	[ "$(m node_md_disks 'device="dg",state="active"')/$(m node_md_disks 'device="dg",state="failed"')/$(m node_md_state 'device="dg",state="active"')" = 1/1/1 ]
# md flags no (S) on the member being rebuilt: node_exporter counts no spare
check "rb: recovering, 2 active disks, no spare, 3 required" \
	[ "$(m node_md_state 'device="rb",state="recovering"')/$(m node_md_disks 'device="rb",state="active"')/$(m node_md_disks 'device="rb",state="spare"')/$(m node_md_disks_required 'device="rb"')" = 1/2/0/3 ]
b=$(m node_md_blocks_synced 'device="rb"') lo=$(synced rb "$before") hi=$(synced rb "$after")
check "rb: blocks synced $b, between what the file said before and after ($lo..$hi)" \
	[ -n "$b" -a -n "$lo" -a "${b:-0}" -ge "${lo:-1}" -a "${b:-0}" -le "${hi:-0}" -a "${b:-0}" -gt 0 ]
check "ck: checking, 2 active disks" \
	[ "$(m node_md_state 'device="ck",state="check"')/$(m node_md_disks 'device="ck",state="active"')" = 1/2 ]
b=$(m node_md_blocks_synced 'device="ck"') lo=$(synced ck "$before") hi=$(synced ck "$after")
check "ck: blocks synced $b, between what the file said before and after ($lo..$hi)" \
	[ -n "$b" -a -n "$lo" -a "${b:-0}" -ge "${lo:-1}" -a "${b:-0}" -le "${hi:-0}" -a "${b:-0}" -gt 0 ]
"$URAID" stop ck >/dev/null 2>&1
wait "$CK_PID"
sleep 0.5
check "a stopped array leaves the run directory's mdstat" bash -c "! grep -q '^ck : ' '$f'"
t_done
