// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl: one binary for every composefs task. This file holds the command
 * table that dispatches the verbs and drives --help, and the helpers in
 * cfsctl.h that all verbs share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "libcfs.h"

#ifndef CFS_VERSION_STRING
#define CFS_VERSION_STRING "unknown"
#endif

static const struct cfs_command commands[] = {
	{ "build", cmd_build, "build an image from a directory or a dumpfile",
	  "Usage: cfsctl build [OPTIONS] SOURCE IMAGE\n" },
	{ "inspect", cmd_inspect, "show what an image holds",
	  "Usage: cfsctl inspect [--json] IMAGE\n" },
	{ "mount", cmd_mount, "mount an image with the composefs kernel module",
	  "Usage: cfsctl mount [OPTIONS] IMAGE MOUNTPOINT\n"
	  "\n"
	  "Mount IMAGE read-only on MOUNTPOINT with the composefs kernel module\n"
	  "(mount -t composefs). File contents come from the backing files the\n"
	  "image names, looked up beneath each basedir in turn.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir=DIR[:DIR...]  directories holding the backing files, tried\n"
	  "                          in order ('\\:' for a colon in a name)\n"
	  "  --digest=auto|HEX       the fs-verity digest the image must have;\n"
	  "                          'auto' measures IMAGE (fs-verity must be\n"
	  "                          enabled on it). Implies --verity-check=2\n"
	  "                          unless given\n"
	  "  --verity-check=N        0: never check backing files; 1 (default):\n"
	  "                          check those the image records a digest for;\n"
	  "                          2: also refuse files without a recorded digest\n"
	  "  -h, --help              show this help\n"
	  "\n"
	  "Needs CAP_SYS_ADMIN. Details of a refused mount are in the kernel log.\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cfs_command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

void cli_print_help(const char *verb, FILE *out)
{
	const struct cfs_command *c = find_command(verb);

	if (c)
		fputs(c->usage, out);
}

int cli_usage(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fputs("cfsctl: ", stderr);
	if (verb)
		fprintf(stderr, "%s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (verb)
		fprintf(stderr, "\nTry 'cfsctl %s --help' for more information.\n", verb);
	else
		fputs("\nTry 'cfsctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cfsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno ? errno : EIO));
		return EXIT_FAIL;
	}
	return EXIT_OK;
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

static void print_message(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "cfsctl: %s\n", msg);
}

static void print_overview(FILE *out)
{
	fputs("Usage: cfsctl [--version] [--help] COMMAND [ARGS]\n\n"
	      "Build, inspect and use composefs images.\n\nCommands:\n",
	      out);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'cfsctl COMMAND --help' for the options of a command.\n"
	      "Exit status: 0 success, 1 failure, 2 usage error.\n",
	      out);
}

int main(int argc, char **argv)
{
	const struct cfs_command *c;

	cfs_set_message_handler(print_message, NULL);

	if (argc < 2) {
		print_overview(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && find_command(argv[2])) {
			cli_print_help(argv[2], stdout);
			return cli_close_stdout();
		}
		print_overview(stdout);
		return cli_close_stdout();
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cfsctl %s\n", CFS_VERSION_STRING);
		return cli_close_stdout();
	}
	c = find_command(argv[1]);
	if (!c) {
		cli_error("'%s' is not a command; see 'cfsctl --help'", argv[1]);
		return EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
