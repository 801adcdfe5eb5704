#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A fuzzer-found image (tests/data/fuzz-regressions/image/) with a regular
# file whose backing path is longer than the format allows: cfsctl verify
# once read that path through a NULL pointer (a crash), and with --basedir
# copied it into a buffer of the allowed size (a stack overflow). It must
# report the path's size as an error and exit 1, with or without basedirs.
. "$(dirname "$0")/../lib/common.sh"

img=$TOP/tests/data/fuzz-regressions/image/verify-backing-path-too-long.cfs
mkdir "$T/store"
expect_exit 1 "$CFSCTL" verify "$img"
assert_contains "$T/out" "backing path of [0-9]+ bytes \(must be 0\.\.4096\)"
assert_contains "$T/out" "^verify: FAILED"
expect_exit 1 "$CFSCTL" verify --basedir "$T/store" "$img"
assert_contains "$T/out" "backing path of [0-9]+ bytes \(must be 0\.\.4096\)"
assert_contains "$T/out" "^verify: FAILED"
