#!/usr/bin/env bash
# make install DESTDIR=...: the udev rule, the systemd units and
# uraid.conf(5) land under DESTDIR with the program's path filled in.
source "$(dirname "$0")/../lib.sh"
cd "$TOP"
i=$T_TMP/inst
check "make install DESTDIR=$i PREFIX=/usr" make -s install DESTDIR="$i" PREFIX=/usr
for f in usr/lib/udev/rules.d/65-uraid-incremental.rules usr/lib/systemd/system/uraid@.service \
	usr/lib/systemd/system/uraid-monitor.service usr/lib/systemd/system/uraid-incremental@.service \
	usr/share/man/man5/uraid.conf.5 usr/bin/uraid; do
	check "installed: /$f" test -s "$i/$f"
done
check "no @BINDIR@ left" bash -c "! grep -r '@BINDIR@' '$i/usr/lib'"
check "the rule wants uraid-incremental@DEVICE.service (no RUN+=: udev kills what it leaves)" \
	bash -c "grep -q 'SYSTEMD_WANTS}+=\"uraid-incremental@\$kernel.service\"' '$i/usr/lib/udev/rules.d/65-uraid-incremental.rules' &&
	 ! grep -v '^#' '$i/usr/lib/udev/rules.d/65-uraid-incremental.rules' | grep -q 'RUN+='"
check "... which runs /usr/bin/uraid incremental /dev/%I" \
	grep -qx 'ExecStart=/usr/bin/uraid incremental /dev/%I' "$i/usr/lib/systemd/system/uraid-incremental@.service"
check "uraid@.service assembles and stops %I" bash -c \
	"grep -qx 'ExecStart=/usr/bin/uraid assemble %I' '$i/usr/lib/systemd/system/uraid@.service' &&
	 grep -qx 'ExecStop=/usr/bin/uraid stop %I' '$i/usr/lib/systemd/system/uraid@.service'"
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify accepts the units" bash -c \
		"systemd-analyze verify --man=no '$i/usr/lib/systemd/system/uraid-monitor.service' '$i/usr/lib/systemd/system/uraid-incremental@sdz1.service' '$i/usr/lib/systemd/system/uraid@data.service' 2>&1 | grep -v -e 'not executable' -e 'No such file' | grep -q . && exit 1 || exit 0"
fi
t_done
