// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The option loop of the verbs: getopt_long() over a verb's table, with
 * what several verbs share handled here once: --help, the options that
 * only set a flag or keep their value (--json and the like), --basedir,
 * --repo and the download options of mirrors.c.
 * The verb's other options are handed to it (builder.c's build options
 * among them). The table entries of the shared options are in cfsctl.h.
 * It calls no verb, and nothing that calls it.
 */
#include <getopt.h>

#include "cfsctl.h"

/* One option other than --help: EXIT_OK, an exit status, or -1 when unknown. */
static int take(const struct cli_parse *p, int c, const char *arg)
{
	int rc;

	for (const struct cli_var *v = p->vars; v && v->opt; v++) {
		if (v->opt != c)
			continue;
		if (v->flag)
			*v->flag = true;
		else
			*v->str = arg;
		return EXIT_OK;
	}
	if (c == CLI_OPT_REPO && p->repo) {
		if (*p->repo)
			return cli_usage(p->verb, "--repo given twice: one repository at a time");
		if (!arg[0])
			return cli_usage(p->verb, "--repo needs a directory");
		*p->repo = arg;
		return EXIT_OK;
	}
	if (c == CLI_OPT_BASEDIR && p->basedirs)
		/* DIR:DIR as in the kernel's basedir= mount option */
		return cli_basedirs(p->verb, p->basedirs, arg);
	if (p->mirrors) {
		rc = cli_mirrors_option(p->mirrors, p->verb, c, arg);
		if (rc >= 0)
			return rc;
	}
	return p->take ? p->take(p->ctx, c, arg) : -1;
}

int cli_parse(const struct cli_parse *p, int argc, char **argv)
{
	int c, rc;

	optind = 1;
	opterr = !p->quiet;
	while ((c = getopt_long(argc, argv, p->shortopts, p->longopts, NULL)) != -1) {
		if (c == CLI_OPT_HELP) {
			fputs(p->help, stdout);
			return cli_close_stdout();
		}
		rc = take(p, c, c == '?' ? argv[optind - 1] : optarg);
		if (rc < 0)
			/* what getopt_long() refused, or took and no one else knows */
			rc = cli_usage(p->verb, p->unknown, argv[optind - 1]);
		if (rc != EXIT_OK)
			return rc;
	}
	return -1;
}
