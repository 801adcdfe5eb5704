/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The assertion the unit test programs share: CHECK(cond, fmt, ...) reports
 * a failed condition with its place and a message and counts it, so one run
 * shows every failure; check_exit() turns the count into the exit status.
 */
#ifndef CFS_TEST_CHECK_H
#define CFS_TEST_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                           \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
				#cond);                                            \
			fprintf(stderr, __VA_ARGS__);                              \
			fputc('\n', stderr);                                       \
			failures++;                                                \
		}                                                                  \
	} while (0)

/* The exit status of a test program: 0 when every check held. */
static inline int check_exit(const char *what)
{
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("all %s checks passed\n", what);
	return 0;
}

#endif /* CFS_TEST_CHECK_H */
