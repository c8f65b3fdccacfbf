#!/usr/bin/env bash
# Issue #24: bad input gets a message naming the real problem, a non-zero
# exit and no change. Every verb answers --help/-h with its usage (exit 0)
# and refuses an unknown option by name; array names follow one rule
# (uraid_name_check) in every verb; create states the limits of --chunk and
# --raid-devices; write refuses data past the end of the array before it
# writes; serve refuses a --unix path whose directory is missing and prints
# an IPv6 listen address in brackets (RFC 3986), and that URI works.
source "$(dirname "$0")/../lib.sh"
export URAID_RUN_DIR=$T_TMP/run
export URAID_NBDKIT_PLUGIN=${URAID_NBDKIT_PLUGIN:-$TOP/build/rel/nbdkit-uraid-plugin.so}
cleanup() {
	for s in "$URAID_RUN_DIR"/*.sock; do [ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)"; done
	rm -rf "$T_TMP"
}
trap cleanup EXIT
cd "$T_TMP" || exit 1
sha() { sha256sum "$@" | cut -d' ' -f1; }

# 1. --help, -h and unknown options, for every verb `uraid --help` lists
verbs=$("$URAID" --help | awk '/^verbs:/ { on = 1; next } on && !NF { exit } on { print $1 }')
check "uraid --help lists the verbs" [ "$(wc -w <<<"$verbs")" -ge 20 ]
for v in $verbs; do
	for h in --help -h; do
		"$URAID" "$v" "$h" >out 2>&1
		rc=$?
		check "$v $h: exit 0 with a usage" bash -c "[ $rc -eq 0 ] && grep -qi usage out"
	done
	"$URAID" "$v" --bogus-option x >/dev/null 2>err
	rc=$?
	check "$v --bogus-option: refused (exit $rc) naming it" \
		bash -c "[ $rc -ne 0 ] && grep -q -- '--bogus-option' err"
done
check "no verb took --help for an array name" bash -c "! ls '$URAID_RUN_DIR' 2>/dev/null | grep -q -- -"

# 2. names: one rule everywhere, named in the refusal; nothing made for them
long=$(printf 'n%.0s' {1..64})
for name in "../x" "a/b" "" ".hidden" "with space" $'new\nline' "$long"; do
	shown=$(printf '%q' "$name")
	check_fails "create --name=$shown refused" "$URAID" create --level=1 --raid-devices=2 \
		--size=8M --no-daemon --name="$name" n0 n1 2>err
	check "... naming the rule" grep -q "a name is 1 to 63 characters" err
	check "... no member file made" bash -c "! ls n0 n1 2>/dev/null | grep -q ."
	for verb in stop status detail check; do
		"$URAID" $verb "$name" >/dev/null 2>err
		check "$verb $shown: refused by the name rule" grep -q "a name is 1 to 63 characters" err
	done
done
stem=$(printf 's%.0s' {1..40})
check_fails "a member file name too long for a name, without --name: refused" "$URAID" create \
	--level=1 --raid-devices=2 --size=8M --no-daemon "$stem.img" s1.img 2>err
check "... saying so and asking for --name" \
	grep -q "its name would be longer than 32 characters; give --name NAME" err
check "63 characters are fine" "$URAID" create --level=1 --raid-devices=2 --size=8M \
	--no-daemon --name=okname o0 o1 2>/dev/null
check "assemble --name with 63 characters runs under that name" \
	"$URAID" assemble --name="${long:1}" o0 o1 2>/dev/null
check "... status of it" bash -c "'$URAID' status '${long:1}' >/dev/null"
"$URAID" stop "${long:1}"
check_fails "assemble --name=$long (64) refused" "$URAID" assemble --name="$long" o0 o1 2>err
check "... naming the length" grep -q "is 64 characters long" err
check_fails "serve --name=../x refused" "$URAID" serve --name=../x o0 o1 2>err
check "... naming the rule" grep -q "a name is 1 to 63 characters" err
if command -v nbdkit >/dev/null && [ -f "$URAID_NBDKIT_PLUGIN" ]; then
	check_fails "the nbdkit plugin refuses name=../x" nbdkit -U - "$URAID_NBDKIT_PLUGIN" \
		member="$T_TMP/o0" member="$T_TMP/o1" name=../x --run true 2>err
	check "... by the same rule" grep -q "a name is 1 to 63 characters" err
fi
check "nothing in the run dir but what uraid made" \
	bash -c "! ls -a '$URAID_RUN_DIR' | grep -qv -E '^(\.|\.\.|${long:1}\.log|mdstat|\.mdstat\.lock)$'"

# 3. create's limits, each named
try_create() { "$URAID" create --level=5 --raid-devices=3 --size=16M --no-daemon "$@" c0 c1 c2 2>err; }
check_fails "--chunk=2T refused" try_create --chunk=2T
check "... as too large for md's 32-bit sector count" grep -q "chunk size in 32 bits of sectors" err
check_fails "--chunk=1G on 16 MiB members refused" try_create --chunk=1G
check "... quoting both in KiB" grep -q "chunk of 1048576 KiB is larger than member c0 (16384 KiB)" err
# The engine's own check of a chunk larger than 512 MiB uses the real member
# sizes too: members of 3 GiB (sparse) take a 1 GiB chunk.
truncate -s 3G big0 big1 big2
check "--chunk=1G on 3 GiB members accepted" "$URAID" create --level=5 --raid-devices=3 \
	--chunk=1G --assume-clean --no-daemon big0 big1 big2
rm -f big0 big1 big2
check_fails "--chunk=96K refused" try_create --chunk=96K
check "... as not a power of two" grep -q "must be a power of two" err
check_fails "--raid-devices 300 refused" "$URAID" create --level=5 --raid-devices 300 --size=16M \
	--no-daemon c0 c1 c2 2>err
check "... stating the limit 256" grep -q "must be 1 to 256" err
check "none of it made a member" bash -c "! ls c0 c1 c2 2>/dev/null | grep -q ."

# 4. write past the end: refused before anything is written
"$URAID" create --level=5 --raid-devices=3 --chunk=64K --size=16M --assume-clean --name=w \
	w0 w1 w2 2>/dev/null
size=$("$URAID" status --json w | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["array_bytes"])')
head -c 1M /dev/urandom >data
before=$("$URAID" cat w | sha)
check_fails "write of 1 MiB ending past the end refused" "$URAID" write w --offset $((size - 512)) <data 2>err
check "... naming the end of the array, not ERANGE" \
	bash -c "grep -q 'run past the end of array w ($size bytes); nothing written' err && ! grep -q 'out of range' err"
check_fails "... also from a pipe" bash -c "cat data | '$URAID' write w --offset $((size - 512)) 2>err"
check "... named the same way" grep -q "runs past the end of array w" err
check "... the array is unchanged" [ "$("$URAID" cat w | sha)" = "$before" ]

# 5. serve: a missing --unix directory is refused; IPv6 in brackets
check_fails "serve --unix /nonexistent/dir/x.sock refused" \
	"$URAID" serve --unix "$T_TMP/nonexistent/dir/x.sock" w 2>err
check "... naming the missing directory" grep -q "directory $T_TMP/nonexistent/dir: No such file" err
check "... nothing served at ./x.sock" test ! -e x.sock
check "... the array still runs under its daemon" bash -c "'$URAID' status w >/dev/null"
if command -v nbdinfo >/dev/null && [ -f "$URAID_NBDKIT_PLUGIN" ]; then
	port=$((20000 + $$ % 20000))
	uri=$("$URAID" serve --port "$port" --ip-addr :: w 2>err)
	check "serve --ip-addr :: prints nbd://[::]:$port" [ "$uri" = "nbd://[::]:$port" ]
	check "... a URI nbdinfo can use (over [::1])" bash -c "nbdinfo --size 'nbd://[::1]:$port' >/dev/null"
	"$URAID" stop w
else
	fail "nbdinfo or the plugin missing"
fi
t_done
