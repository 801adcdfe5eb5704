// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl: one binary for every composefs task. This file holds the command
 * table that dispatches the verbs and drives --help; the helpers in
 * cfsctl.h that all verbs share are in util.c and the files it names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/store.h"
#include "cfs/util.h"

#ifndef CFS_VERSION_STRING
#define CFS_VERSION_STRING "unknown"
#endif

static const struct cfs_command commands[] = {
	{ "build", cmd_build,
	  "build an image from a directory, dumpfile, tar archive, container image or ostree commit",
	  cmd_build_usage },
	{ "pull", cmd_pull, "build an image from a container image in a registry",
	  cmd_pull_usage },
	{ "push", cmd_push, "publish a directory as a container image in a registry",
	  cmd_push_usage },
	{ "inspect", cmd_inspect, "show what an image holds",
	  cmd_inspect_usage },
	{ "fetch", cmd_fetch, "download the objects images need from HTTP mirrors",
	  cmd_fetch_usage },
	{ "gc", cmd_gc, "remove the objects no image needs from a digest store",
	  cmd_gc_usage },
	{ "images", cmd_images, "list, name and unname the images of a repository",
	  cmd_images_usage },
	{ "lazy", cmd_lazy, "serve a digest store that fetches each missing object on first lookup",
	  cmd_lazy_usage },
	{ "mount", cmd_mount, "mount an image (v1: the composefs module; EROFS: overlayfs)",
	  cmd_mount_usage },
	{ "verify", cmd_verify, "check an image, and the objects it needs, thoroughly",
	  cmd_verify_usage },
	{ "diff", cmd_diff, "show what differs between two images or trees",
	  cmd_diff_usage },
	{ "tui", cmd_tui, "browse an image in the terminal",
	  cmd_tui_usage },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cfs_command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
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
	      "Exit status: 0 success, 1 failure, 2 usage error. SIGINT, SIGTERM\n"
	      "and SIGHUP during a build, pull or fetch remove its temporaries, then\n"
	      "it dies of the signal (a shell says 130, 143 or 129).\n"
	      "With --json, a failure that ends a command before its result (a\n"
	      "usage error, a file that cannot be read, a refused pull) prints\n"
	      "nothing on stdout, no JSON error object: its message is on stderr,\n"
	      "and the exit status says it. (verify --json lists the problems it\n"
	      "found in its document, and exits 1.)\n"
	      "\n"
	      "Bytes that came from input (names, symlink targets, media types,\n"
	      "HTTP headers, arguments) are escaped when printed: a backslash as\n"
	      "\\\\, newline, return and tab as \\n, \\r, \\t, any other control\n"
	      "character (C1 ones and those that reorder text included) and every\n"
	      "byte of invalid UTF-8 as \\xXY. A message longer than 1000 bytes\n"
	      "so escaped is shortened in the middle, '...', keeping its start and\n"
	      "its end, where the reason is.\n",
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
		if (argc > 2 && (c = find_command(argv[2]))) {
			fputs(c->usage, stdout);
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
