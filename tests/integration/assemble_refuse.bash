# assemble_refuse.table's member sets and rows (sourced by
# assemble_refuse.sh, which makes the sets with uraid and runs uraid on
# them, and assemble_refuse_mdvm.sh, whose guest makes them with mdadm 4.2
# and runs mdadm on them, and which then runs uraid on the guest's images).
# A run's outputs in one form: "ROW K rc=N", "OUT K LINE" per line printed
# (the "uraid: assemble: " / "mdadm: " prefix off) and "SUM K MEMBER
# same|changed" per member the row names; checked against the table.
AR_TABLE=$TOP/tests/integration/assemble_refuse.table
AR_MB=$(awk '$1 == "size" { print $2 }' "$AR_TABLE")
# ar_list: the images in the table's order (the guest's out disk holds them
# so, AR_MB MiB apiece).
ar_list() {
	awk '$1 == "array" { for (j = 1; j <= $4; j++) print $2 "." j }
		$1 == "blank" || $1 == "copy" { print $2 }' "$AR_TABLE"
}
ar_members() { ar_list | grep -E "^$1\.[0-9]+\$"; }
# ar_images_uraid DIR: the table's member sets made by uraid in DIR.
ar_images_uraid() {
	local dir=$1 kind name a b opts devs f j
	mkdir -p "$dir"
	(
		cd "$dir" || exit 1
		while read -r kind name a b opts; do
			case $kind in
			array)
				devs=()
				for j in $(seq "$b"); do
					truncate -s ${AR_MB}M "$name.$j"
					devs+=("$name.$j")
				done
				# shellcheck disable=SC2086
				"$URAID" create --level="$a" --raid-devices="$b" --name="$name" --run \
					--assume-clean $opts "${devs[@]}" >/dev/null 2>&1 </dev/null || exit 1
				"$URAID" stop "$name" || exit 1
				;;
			fail)
				# shellcheck disable=SC2046
				"$URAID" assemble $(ar_members "$name") >/dev/null 2>&1 </dev/null || exit 1
				"$URAID" fail "$name" "$PWD/$name.$a" >/dev/null || exit 1
				"$URAID" remove "$name" "$PWD/$name.$a" >/dev/null || exit 1
				"$URAID" stop "$name" || exit 1
				;;
			dirty)
				for f in $(ar_members "$name"); do
					python3 "$TOP/tests/md_sb1_edit.py" "$f" 208 '<Q' set 0 || exit 1
				done
				;;
			blank) truncate -s ${AR_MB}M "$name" ;;
			copy) cp --sparse=always "$a" "$name" ;;
			esac
		done <"$AR_TABLE"
	)
}
# ar_images_split OUT DIR: the guest's images, from its out disk, in DIR.
ar_images_split() {
	local out=$1 dir=$2 k=0 f
	mkdir -p "$dir"
	for f in $(ar_list); do
		dd if="$out" of="$dir/$f" bs=1M skip=$((k * AR_MB)) count=$AR_MB conv=sparse \
			status=none || return 1
		k=$((k + 1))
	done
}
# ar_norm: what changes from run to run (and between uraid's and mdadm's
# member sets) read as the table writes it.
ar_norm() {
	sed -E -e 's/[0-9a-f]{8}(:[0-9a-f]{8}){3}/UUID/g' \
		-e 's/\(daemon pid [0-9]+, log [^)]*\)/(daemon pid N, log L)/' \
		-e 's/events [0-9]+, array at [0-9]+/events N, array at M/' \
		-e 's/events [0-9]+ of [0-9]+/events E of F/' \
		-e 's/from [0-9]+ up to [0-9]+/from E up to F/' \
		-e 's/, clearing the faulty mark the others hold for it:/:/'
}
# ar_run_uraid DIR: each row through uraid assemble in DIR, in the
# outputs' form; an array started is stopped and the members put back.
ar_run_uraid() {
	local dir=$1 kind want args k=0 out rc w s
	(
		cd "$dir" || exit 1
		mkdir -p .p
		for f in $(ar_list); do
			cp --sparse=always "$f" ".p/$f"
			md5sum <"$f" >".p/$f.md5"
		done
		while read -r kind want args; do
			[ "$kind" = row ] || continue
			rc=0
			# shellcheck disable=SC2086
			out=$("$URAID" assemble $args 2>&1 </dev/null) || rc=$?
			for s in "$URAID_RUN_DIR"/*.sock; do
				[ -e "$s" ] && "$URAID" stop "$(basename "$s" .sock)" >/dev/null 2>&1
			done
			echo "ROW $k rc=$rc"
			[ -z "$out" ] || printf '%s\n' "$out" | ar_norm | sed -e 's/^uraid: assemble: //' \
				-e "s/^/OUT $k /"
			for w in $args; do
				[ -e ".p/$w.md5" ] || continue
				if [ "$(md5sum <"$w")" = "$(cat ".p/$w.md5")" ]; then
					echo "SUM $k $w same"
				else
					echo "SUM $k $w changed"
					cp --sparse=always ".p/$w" "$w"
				fi
			done
			k=$((k + 1))
		done <"$AR_TABLE"
	)
}
# ar_compare FILE WHO LABEL: FILE's rows (the outputs' form) against the
# table's status (RC, or M/U: mdadm's and uraid's) and its "=" and WHO
# ("m" mdadm, "u" uraid) lines; a refused row's members all unchanged.
ar_compare() {
	local file=$1 who=$2 label=$3 want=$T_TMP/ar_want.$2 k=0 n kind rc args d
	awk -v who="$who" '
		/^row / { k++; rc = $2; if (rc ~ /\//) { split(rc, r, "/"); rc = who == "m" ? r[1] : r[2] }
			printf "ROW %d rc=%s\n", k, rc; next }
		/^= / || substr($0, 1, 2) == who " " { printf "OUT %d %s\n", k, substr($0, 3) }
	' k=-1 "$AR_TABLE" >"$want"
	n=$(grep -c '^row ' "$AR_TABLE")
	while read -r kind rc args; do
		[ "$kind" = row ] || continue
		if d=$(diff <(grep -E "^(ROW|OUT) $k( |\$)" "$want") \
			<(tr -d '\r' <"$file" | ar_norm | grep -E "^(ROW|OUT) $k( |\$)")); then
			ok "$label: $args"
		else
			fail "$label: $args"
			printf '%s\n' "$d" | sed 's/^/# /'
		fi
		if ! grep -q "^ROW $k rc=0\$" "$want"; then
			check "$label: $args: refused, every member unchanged" \
				sh -c "! tr -d '\r' <'$file' | grep -q '^SUM $k .* changed'"
		fi
		k=$((k + 1))
	done <"$AR_TABLE"
	check "$label: all $n rows answered" grep -q "^ROW $((n - 1)) " "$file"
}
