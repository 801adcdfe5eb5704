# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl under valgrind: the few CLI tests make check runs so, and make
# check-valgrind (included by the top Makefile).

# The CLI tests make check also runs under valgrind: a representative few
# (the whole set is make check-valgrind).
CHECK_VALGRIND ?= 1002-build-dump 3002-inspect-dump 1501-build-store-leftovers

# The CLI tests with cfsctl under valgrind (memcheck, leaks included;
# about half an hour here), but for those that cannot run there: 11 and 16
# hash a 5 GiB sparse file and 44 and 73 run cfsctl on thousands of
# corrupt images (each takes over 5 minutes under memcheck; 73 over an
# hour), 62 looks into /proc/PID/fd of the cfsctl it started and 93 sends
# it signals, where the process is the wrapper's shell (tests/lib/valgrind-cfsctl)
# and not cfsctl. The sanitizer build runs all six.
VALGRIND_SKIP := 1500-build-store 1005-build-content 3004-inspect-corrupt 5003-fetch-kill \
	3304-verify-corrupt 6003-tui-terminal
check-valgrind: all
	$(Q)tests/run.sh --build $(BUILD) --only valgrind --valgrind '*' \
		--valgrind-skip '$(VALGRIND_SKIP)'
