# SPDX-License-Identifier: GPL-2.0 OR MIT
# Helpers for the guest's tests (busybox sh). A test sets SUITE and prints
# one line per check: "PASS SUITE/name", "FAIL SUITE/name: why" or
# "SKIP SUITE/name: why".

pass() { echo "PASS $SUITE/$1"; }
fail() { echo "FAIL $SUITE/$1: $2"; }
skip() { echo "SKIP $SUITE/$1: $2"; }

# expect NAME WANT GOT
expect() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want '$2', got '$3'"; fi
}

# cfsmount IMAGE MNT OPTIONS: mount(2); prints OK or the errno name
cfsmount() {
	mkdir -p "$2"
	cfs-vmtool mount "$1" "$2" "$3"
}

# readfile PATH: open and read it all; prints OK or "open|read ERRNO"
readfile() { cfs-vmtool read "$1"; }

# need FILE...: skip the whole suite unless the test data is there
need() {
	for f in "$@"; do
		if [ ! -e "$f" ]; then
			skip all "no $f on the test disk (cfsctl build was not available)"
			exit 0
		fi
	done
}

# object DIGEST-HEX: store-relative object path
object() { echo "$(echo "$1" | cut -c1-2)/$(echo "$1" | cut -c3-)"; }

# Scratch space on the ext4 disk (fs-verity needs ext4).
W=/disk/work
mkdir -p $W
