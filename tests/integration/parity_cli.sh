#!/usr/bin/env bash
# The parity backend as the CLI shows it, and `uraid bench parity` output.
. "$(dirname "$0")/../lib.sh"

names=$("$URAID" version | sed -n 's/^parity backends compiled in: //p')
check "version lists portable" grep -qw portable <<<"$names"
def=$("$URAID" version | sed -n 's/^parity backend: //p')
check "default backend '$def' is compiled in" grep -qw -- "$def" <<<"$names"
for b in $names; do
	got=$(URAID_PARITY=$b "$URAID" version 2>/dev/null | sed -n 's/^parity backend: //p')
	# A SIMD backend may be unsupported by this CPU; then version must fail.
	if [ -n "$got" ] && [ "$got" != "(none: URAID_PARITY names an unsupported backend)" ]; then
		check "URAID_PARITY=$b selects it" test "$got" = "$b"
	else
		check_fails "URAID_PARITY=$b unsupported: version fails" env URAID_PARITY=$b "$URAID" version
	fi
done
check_fails "URAID_PARITY=bogus is an error" env URAID_PARITY=bogus "$URAID" version
check_fails "bench: unknown benchmark" "$URAID" bench no-such-bench
check_fails "bench parity: bad -k" "$URAID" bench parity -k 1
check_fails "bench parity: unknown backend" "$URAID" bench parity --backend bogus

json=$T_TMP/bench.json
# (redirections inside the command, not on `check`, whose own output must not land in the file)
check "bench parity --quick --json runs" \
	sh -c '"$1" bench parity --quick --json -k 3 --block 64K >"$2" 2>"$3"' sh "$URAID" "$json" \
	"$T_TMP/bench.err"
check "bench header names CPU and backend" grep -q "CPU .*cores, backend" "$T_TMP/bench.err"
check "bench JSON rows: exact kernel names, k=3, 64 KiB, positive GB/s" python3 - "$json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
want = {"memcpy", "readsum", "uraid_xor_gen", "uraid_pq_gen", "uraid_pq_update",
        "uraid_recover_1data", "uraid_recover_2data"}
isal = {"isal_xor_gen", "isal_pq_gen", "isal_ec_2xk"}
names = {r["kernel"] for r in rows}
assert want <= names <= want | isal, names
assert all(set(r) == {"kernel", "k", "block", "gbps"} for r in rows)
assert all(r["k"] == 3 and r["block"] == 65536 and r["gbps"] > 0 for r in rows)
PY
t_done
