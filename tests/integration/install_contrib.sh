#!/usr/bin/env bash
# make install DESTDIR=...: the udev rule, the systemd units and
# uraid.conf(5) land under DESTDIR with the program's path filled in.
source "$(dirname "$0")/../lib.sh"
cd "$TOP"
i=$T_TMP/inst
check "make install DESTDIR=$i PREFIX=/usr" make -s install DESTDIR="$i" PREFIX=/usr
for f in usr/lib/udev/rules.d/65-uraid-incremental.rules usr/lib/systemd/system/uraid@.service \
	usr/lib/systemd/system/uraid-monitor.service usr/share/man/man5/uraid.conf.5 usr/bin/uraid; do
	check "installed: /$f" test -s "$i/$f"
done
check "no @BINDIR@ left" bash -c "! grep -r '@BINDIR@' '$i/usr/lib'"
check "the rule runs /usr/bin/uraid incremental" \
	grep -q 'RUN+="/usr/bin/uraid incremental $devnode"' "$i/usr/lib/udev/rules.d/65-uraid-incremental.rules"
check "uraid@.service assembles and stops %I" bash -c \
	"grep -qx 'ExecStart=/usr/bin/uraid assemble %I' '$i/usr/lib/systemd/system/uraid@.service' &&
	 grep -qx 'ExecStop=/usr/bin/uraid stop %I' '$i/usr/lib/systemd/system/uraid@.service'"
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify accepts the units" bash -c \
		"systemd-analyze verify --man=no '$i/usr/lib/systemd/system/uraid-monitor.service' 2>&1 | grep -v -e 'not executable' -e 'No such file' | grep -q . && exit 1 || exit 0"
fi
t_done
