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
#include <stdio.h>
#include <string.h>

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

/*
 * Say what is wrong with the option @arg (argv's word) of getopt's answer
 * @c: '?' unknown, ':' missing its value. Once, in the house's form:
 * getopt_long() itself is kept quiet.
 */
static int bad_option(const struct cli_parse *p, int c, const char *arg)
{
	char name[3] = { '-', (char)optopt, '\0' };
	int len;

	/* a short option's letter, else the word up to any '=' */
	if (optopt && (arg[0] != '-' || arg[1] != '-'))
		arg = name;
	len = (int)strcspn(arg, "=");
	if (c == ':')
		return cli_usage(p->verb, "option '%.*s' needs a value", len, arg);
	return cli_usage(p->verb, "unknown option '%.*s'", len, arg);
}

int cli_parse(const struct cli_parse *p, int argc, char **argv)
{
	char shortopts[64];
	int c, rc;

	/* A leading ':' tells a missing value (':') from an unknown option ('?'). */
	snprintf(shortopts, sizeof(shortopts), ":%s", p->shortopts);
	optind = 1;
	opterr = 0;
	for (;;) {
		optopt = 0;
		c = getopt_long(argc, argv, shortopts, p->longopts, NULL);
		if (c == -1)
			break;
		if (c == CLI_OPT_HELP) {
			fputs(p->help, stdout);
			return cli_close_stdout();
		}
		if (c == '?' || c == ':')
			return bad_option(p, c, argv[optind - 1]);
		rc = take(p, c, optarg);
		if (rc < 0) /* taken by getopt_long(), and by no one here */
			return bad_option(p, '?', argv[optind - 1]);
		if (rc != EXIT_OK)
			return rc;
	}
	return -1;
}
