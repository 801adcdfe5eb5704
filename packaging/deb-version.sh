#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Prints the Debian spelling of VERSION, the version cfsctl --version gives
# ('git describe --always --dirty', see the Makefile). A Debian version
# starts with a digit and has no '-' in a native package:
#   v1.2 or 1.2            -> 1.2
#   1.2-5-gabc1234[-dirty] -> 1.2+5.gabc1234[+dirty]
#   abc1234[-dirty]        -> 0~gitN.gabc1234[+dirty]  (no tag yet: N commits,
#                             so that a later commit, or any tag, is newer)
# Usage: packaging/deb-version.sh VERSION
set -eu
v=$1 dirty=
case $v in *-dirty) v=${v%-dirty} dirty=+dirty ;; esac
case $v in
v[0-9]* | [0-9]*.*)
	v=${v#v}
	case $v in
	*-*-g*) tag=${v%-*-g*} rest=${v#"$tag"-}; v=$tag+${rest%%-*}.${rest#*-} ;;
	esac
	;;
*)
	n=$(git rev-list --count HEAD 2>/dev/null || echo 0)
	v=0~git$n.g$v
	;;
esac
v=$v$dirty
case $v in
[0-9]*) ;;
*) echo "deb-version: cannot make a Debian version of '$1'" >&2; exit 1 ;;
esac
case $v in
*[!A-Za-z0-9.+~]*) echo "deb-version: '$1' gives '$v', not a Debian version" >&2; exit 1 ;;
esac
echo "$v"
