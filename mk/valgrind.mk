# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl under valgrind: the few CLI tests make check runs so, and make
# check-valgrind (included by the top Makefile).

# The CLI tests make check also runs under valgrind: a representative few
# (the whole set is make check-valgrind).
CHECK_VALGRIND ?= 13-build-dump 42-inspect-dump 21-build-store-leftovers

# The CLI tests with cfsctl under valgrind (memcheck, leaks included;
# about half an hour here), but for those that cannot run there: 11 and 16
# hash a 5 GiB sparse file and 44 and 73 run cfsctl on thousands of
# corrupt images (each takes over 5 minutes under memcheck; 73 over an
# hour), 62 looks into /proc/PID/fd of the cfsctl it started and 93 sends
# it signals, where the process is the wrapper's shell (tests/valgrind-cfsctl)
# and not cfsctl. The sanitizer build runs all six.
VALGRIND_SKIP := 11-build-store 16-build-content 44-inspect-corrupt 62-fetch-kill \
	73-verify-corrupt 93-tui-terminal
check-valgrind: all
	$(Q)tests/run.sh --build $(BUILD) --only valgrind --valgrind '*' \
		--valgrind-skip '$(VALGRIND_SKIP)'
