# grow_refuse.table's arrays and rows (sourced by grow_takeover.sh, which
# runs uraid on them, and grow_meta_mdvm.sh, whose guest runs mdadm 4.2 on
# them): the rows' outputs in one form, "ROW K rc=N" then "OUT K LINE" per
# line printed (the "uraid: grow: " or "uraid: create: " / "mdadm: " prefix off), checked
# against the table line for line.
GR_TABLE=$TOP/tests/integration/grow_refuse.table
# gr_arrays: the table's arrays, made by uraid in the current directory
# (members NAME.1 .. NAME.N, 8 MiB), and the create rows' blank members
# (cm.1 .. cm.5).
gr_arrays() {
	local kind name level n opts m devs
	for m in 1 2 3 4 5; do truncate -s 8M "cm.$m"; done
	while read -r kind name level n opts; do
		[ "$kind" = array ] || continue
		devs=()
		for m in $(seq "$n"); do
			truncate -s 8M "$name.$m"
			devs+=("$name.$m")
		done
		# shellcheck disable=SC2086
		"$URAID" create --level="$level" --raid-devices="$n" --name="$name" --run \
			--assume-clean $opts "${devs[@]}" >/dev/null 2>&1 </dev/null || return 1
	done <"$GR_TABLE"
}
gr_stop() {
	local kind name rest
	while read -r kind name rest; do
		[ "$kind" = array ] && "$URAID" stop "$name" >/dev/null 2>&1 </dev/null
	done <"$GR_TABLE"
	return 0
}
# gr_run_uraid: each row through uraid grow, in the outputs' form.
gr_run_uraid() {
	local kind name want opts k=0 out rc
	while read -r kind name want opts; do
		rc=0
		# shellcheck disable=SC2086,SC2046
		case $kind in
		row) out=$("$URAID" grow "$name" $opts 2>&1 </dev/null) || rc=$? ;;
		crow) # name: the rc, want: the member count
			out=$("$URAID" create --run --name=CR $opts $(seq -f cm.%g "$want") 2>&1 \
				</dev/null) || rc=$?
			"$URAID" stop CR >/dev/null 2>&1 </dev/null
			;;
		*) continue ;;
		esac
		echo "ROW $k rc=$rc"
		[ -z "$out" ] || printf '%s\n' "$out" | sed -e 's/^uraid: \(grow\|create\): //' -e "s/^/OUT $k /"
		k=$((k + 1))
	done <"$GR_TABLE"
}
# gr_compare FILE WHO LABEL: FILE's rows (the outputs' form) against the
# table's status and its "=" and WHO ("m" mdadm, "u" uraid) lines.
gr_compare() {
	local file=$1 who=$2 label=$3 want=$T_TMP/gr_want.$2 k n kind name opts d
	awk -v who="$who" '
		/^row / { k++; printf "ROW %d rc=%s\n", k, $3; next }
		/^crow / { k++; printf "ROW %d rc=%s\n", k, $2; next }
		/^= / || substr($0, 1, 2) == who " " { printf "OUT %d %s\n", k, substr($0, 3) }
	' k=-1 "$GR_TABLE" >"$want"
	n=$(grep -Ec '^c?row ' "$GR_TABLE")
	k=0
	while read -r kind name _ opts; do
		case $kind in
		row) ;;
		crow) name=create ;;
		*) continue ;;
		esac
		if d=$(diff <(grep -E "^(ROW|OUT) $k( |\$)" "$want") \
			<(tr -d '\r' <"$file" | grep -E "^(ROW|OUT) $k( |\$)")); then
			ok "$label: $name ${opts:-(no options)}"
		else
			fail "$label: $name ${opts:-(no options)}"
			printf '%s\n' "$d" | sed 's/^/# /'
		fi
		k=$((k + 1))
	done <"$GR_TABLE"
	check "$label: all $n rows answered" grep -q "^ROW $((n - 1)) " "$file"
}
