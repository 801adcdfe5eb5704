#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The kernel part of 'make demo': boots the test VM (vm/run-tests.sh --demo)
# and shows examples/tree mounted with digest= and verity_check=2, a file
# read through it, and the EIO after an object is tampered with. Needs what
# 'make vm-test' needs (qemu, the kernel package, cfsctl build).
set -euo pipefail
exec "$(cd "$(dirname "$0")" && pwd)/run-tests.sh" --demo
