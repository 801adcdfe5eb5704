#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# make install puts cfsctl, a man page for it and one per verb (each with
# EXAMPLES), and the bash completion under DESTDIR/PREFIX, and
# mount.composefs in /sbin with its page in section 8; 'man --warnings' is
# silent on every page; each page holds every option its verb's --help lists; the
# completion offers the verbs, a verb's options and fixed option values;
# make uninstall removes exactly what was installed.
# test: exclusive (it runs make install in the tree)
. "$(dirname "$0")/../lib/common.sh"
command -v man >/dev/null || skip "needs man (Debian package man-db)"
command -v python3 >/dev/null || skip "needs python3"

d=$T/dest
expect_exit 0 make -s -C "$TOP" install DESTDIR="$d" PREFIX=/usr
before=$(cd "$d" && find . -type f | sort)
[ -x "$d/usr/bin/cfsctl" ] || fail "no usr/bin/cfsctl installed"
[ -f "$d/usr/share/bash-completion/completions/cfsctl" ] || fail "no bash completion installed"
[ -x "$d/sbin/mount.composefs" ] || fail "no /sbin/mount.composefs (where mount(8) looks)"
grep -qx 'cfsctl=/usr/bin/cfsctl' "$d/sbin/mount.composefs" ||
	fail "mount.composefs does not run the cfsctl installed with it"

verbs=$("$CFSCTL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
[ -n "$verbs" ] || fail "cfsctl --help lists no verbs"
for p in cfsctl $(printf 'cfsctl-%s\n' $verbs); do
	page=$d/usr/share/man/man1/$p.1
	[ -f "$page" ] || fail "no man page $p.1"
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$T/page" 2>"$T/warn"
	[ -s "$T/warn" ] && { cat "$T/warn"; fail "man --warnings on $p.1 is not silent"; }
	grep -q "^NAME" "$T/page" || fail "$p.1 renders without a NAME section"
done
# mount(8)'s helper has its page, from its --help, in section 8.
page=$d/usr/share/man/man8/mount.composefs.8
[ -f "$page" ] || fail "no man page mount.composefs.8"
LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$T/page" 2>"$T/warn"
[ -s "$T/warn" ] && { cat "$T/warn"; fail "man --warnings on mount.composefs.8 is not silent"; }
for o in basedir= digest= verity_check= upperdir= workdir= idmap= EXAMPLES; do
	grep -q -- "$o" "$T/page" || fail "mount.composefs.8 does not mention $o"
done
for v in $verbs; do
	MANWIDTH=200 man -l "$d/usr/share/man/man1/cfsctl-$v.1" 2>/dev/null | tr -s ' ' >"$T/page"
	grep -q '^EXAMPLES' "$T/page" || fail "cfsctl-$v.1 has no EXAMPLES section"
	grep -q "^ cfsctl $v " "$T/page" || fail "cfsctl-$v.1's examples do not run cfsctl $v"
	for o in $("$CFSCTL" "$v" --help | sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p'); do
		grep -q -- "$o" "$T/page" || fail "cfsctl-$v.1 does not mention $o"
	done
done

# The completion, driven as bash drives it.
complete_line() { # WORDS...: what completing the last word offers
	PATH=$(dirname "$CFSCTL"):$PATH bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
		_cfsctl 2>/dev/null; printf "%s\n" "${COMPREPLY[@]}"' _ \
		"$d/usr/share/bash-completion/completions/cfsctl" "$@"
}
got=$(complete_line cfsctl "" | sort | tr '\n' ' ')
assert_eq "$(printf '%s\n' $verbs | sort | tr '\n' ' ')" "$got" "verbs completed"
complete_line cfsctl build --dig >"$T/c"
assert_contains "$T/c" '^--digest-store=$'
complete_line cfsctl mount --verity-check= | tr '\n' ' ' >"$T/c"
assert_eq "0 1 2 " "$(cat "$T/c")" "values of --verity-check="
complete_line cfsctl inspect "" >"$T/c"
assert_contains "$T/c" '^dump$'
mkdir "$T/imgdir" && touch "$T/imgdir/a.cfs"
complete_line cfsctl inspect "$T/imgdir/a" >"$T/c"
assert_contains "$T/c" "a\\.cfs$"

expect_exit 0 make -s -C "$TOP" uninstall DESTDIR="$d" PREFIX=/usr
left=$(cd "$d" && find . -type f | sort)
[ -z "$left" ] || fail "make uninstall left: $left"
[ "$(echo "$before" | wc -l)" -ge 10 ] || fail "install put only: $before"
echo "installed and removed $(echo "$before" | wc -l) files"
