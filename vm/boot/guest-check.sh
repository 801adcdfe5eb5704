#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs in the booted Debian (a systemd service, cfs-boot-check.service,
# installed into the image by vm/boot-test.sh) and reports on the serial
# console, one "CFS-BOOT key=value" line each, what the host checks: the
# system's state and failed units, what / is, a program run from the
# image, the mark a previous boot left in /etc (and a new one), and with
# cfs.eio on the command line, that a changed object reads as EIO. Then it
# powers the machine off. With cfs.bench on the command line (the boot
# benchmark, bench/boot.sh) it reports only what the boot cost and changes
# nothing: the monotonic times, in microseconds since the kernel started,
# at which systemd started (the end of the kernel and the initramfs) and
# at which multi-user.target was reached, and the sectors read from the
# disk until now.
say() { echo "CFS-BOOT $*" > /dev/console; }
case " $(cat /proc/cmdline) " in
*" cfs.bench "*)
	say "bench userspace_us=$(systemctl show -p UserspaceTimestampMonotonic --value)" \
		"multi_user_us=$(systemctl show -p ActiveEnterTimestampMonotonic --value multi-user.target)" \
		"read_sectors=$(awk '{print $3}' /sys/block/vda/stat)" \
		"root=$(findmnt -n -o FSTYPE /)"
	say DONE
	systemctl poweroff
	exit 0
	;;
esac
state=$(systemctl is-system-running --wait 2>/dev/null)
say "state=$state"
say "failed=$(systemctl list-units --failed --plain --no-legend 2>/dev/null | awk '{print $1}' | tr '\n' ' ')"
say "root=$(findmnt -n -o FSTYPE,OPTIONS /)"
say "etc=$(findmnt -n -o FSTYPE /etc) var=$(findmnt -n -o SOURCE /var)"
say "program=$(sha256sum /usr/share/cfs-boot/canary | cut -d' ' -f1)"
say "mark=$(cat /etc/cfs-boot-mark 2>/dev/null || echo none)"
echo "written by boot $(cat /proc/sys/kernel/random/boot_id)" > /etc/cfs-boot-mark && sync
case " $(cat /proc/cmdline) " in
*" cfs.eio "*)
	# The canary's object, replaced behind the image's back by a file of
	# other content (no fs-verity); a read after the caches are dropped
	# must fail.
	repo=/run/cfs/device/cfs
	hex=$(fsverity digest /usr/share/cfs-boot/canary | sed 's/^sha256:\([0-9a-f]*\) .*/\1/')
	obj=$repo/objects/$(echo "$hex" | cut -c1-2)/$(echo "$hex" | cut -c3-)
	if [ ! -f "$obj" ]; then
		say "eio=no object $obj"
	else
		mv "$obj" "$obj.orig" && echo changed > "$obj" && sync
		echo 3 > /proc/sys/vm/drop_caches
		if err=$(cat /usr/share/cfs-boot/canary 2>&1 >/dev/null); then
			say "eio=the changed object was read"
		else
			case $err in
			*"Input/output error"*) say "eio=ok" ;;
			*) say "eio=read failed otherwise: $err" ;;
			esac
		fi
	fi
	;;
esac
say DONE
systemctl poweroff
