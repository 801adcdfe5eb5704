// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Helpers shared by the fuzz targets and their regression replay: failing
 * loudly when a checked property breaks. Library messages are dropped
 * unless CFS_FUZZ_VERBOSE is set in the environment, which helps when
 * looking at one input by hand.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "base/internal.h"

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz: property broken: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

static void print_msg(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "libcfs: %s\n", msg);
}

/* Runs before main() (or libFuzzer's): decide where messages go. */
__attribute__((constructor)) static void fuzz_init(void)
{
	cfs_set_message_handler(getenv("CFS_FUZZ_VERBOSE") ? print_msg : NULL, NULL);
}
