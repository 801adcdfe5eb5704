// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What every verb shares, below the option loop: the messages in the
 * house's form (cli_usage(), cli_error()), the check of standard output,
 * and the parsers of option values. It calls no verb and no other file of
 * cmd/, so that every file above may call it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfsctl.h"
#include "cfs/store.h"
#include "cfs/util.h"

int cli_basedirs(const char *verb, struct cfs_basedirs *b, const char *arg)
{
	int ret = cfs_basedirs_parse(b, arg);

	if (ret == -EINVAL)
		return cli_usage(verb, "--basedir: empty directory name in '%s' (':' separates names, '\\:' is a colon in one)",
				 arg);
	if (ret < 0) {
		cli_error("%s: %s", verb, strerror(-ret));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/*
 * @fmt made of @ap and escaped for a terminal with cfs_printable()'s
 * @flags (an argument it quotes may hold anything); NULL when out of memory.
 */
static char *printable(int flags, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static char *printable(int flags, const char *fmt, va_list ap)
{
	char *raw = NULL, *msg;
	int len = vasprintf(&raw, fmt, ap);

	msg = len < 0 ? NULL : cfs_printable(raw, (size_t)len, CFS_MSG_MAX, flags);
	free(raw);
	return msg;
}

int cli_usage(const char *verb, const char *fmt, ...)
{
	char *msg;
	va_list ap;

	va_start(ap, fmt);
	msg = printable(0, fmt, ap);
	va_end(ap);
	fputs("cfsctl: ", stderr);
	if (verb)
		fprintf(stderr, "%s: ", verb);
	fputs(msg ? msg : "out of memory", stderr);
	free(msg);
	if (verb)
		fprintf(stderr, "\nTry 'cfsctl %s --help' for more information.\n", verb);
	else
		fputs("\nTry 'cfsctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

void cli_error(const char *fmt, ...)
{
	char *msg;
	va_list ap;

	/*
	 * Escaped as the library's messages are, which it may quote
	 * (escaped already: a backslash stays).
	 */
	va_start(ap, fmt);
	msg = printable(CFS_ESCAPE_NO_BACKSLASH, fmt, ap);
	va_end(ap);
	fprintf(stderr, "cfsctl: %s\n", msg ? msg : "out of memory");
	free(msg);
}

int cli_close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno ? errno : EIO));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_parse_size(const char *s, uint64_t *size)
{
	static const char units[] = "KMGTPE";
	const char *u;
	uint64_t v = 0;
	unsigned int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s) {
		u = strchr(units, *s);
		if (!u || s[1])
			return -1;
		shift = 10 * (unsigned int)(u - units + 1);
		if (v > UINT64_MAX >> shift)
			return -1;
	}
	*size = v << shift;
	return 0;
}

unsigned int cli_parse_count(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > 4096 || s[0] == '-')
		return 0;
	return (unsigned int)v;
}
