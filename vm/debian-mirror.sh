#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Prints the Debian mirror this machine's apt reads its own release from
# (the source whose suite is /etc/os-release's VERSION_CODENAME), for the
# debootstrap and apt runs of vm/ and bench/: the project names no archive
# of its own, and a machine behind its own mirror uses that one.
# Usage: vm/debian-mirror.sh
# Exits 1, saying why, when apt has no source for the release.
set -euo pipefail
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || { echo "debian-mirror: /etc/os-release names no VERSION_CODENAME" >&2; exit 1; }
mirror=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' 2>/dev/null |
	awk -v c="$codename" '$1 == c {print $2; exit}')
[ -n "$mirror" ] || { echo "debian-mirror: the machine's apt sources have no Debian mirror for '$codename'" >&2; exit 1; }
echo "${mirror%/}"
