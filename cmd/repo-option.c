// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What the verbs' --repo shares: opening a repository (lib/store/repo.c) with
 * the library's messages in the verb's name, and finding the image a NAME
 * or digest names. It is no verb: the verbs and the builder call it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfsctl.h"
#include "cfs/repo.h"
#include "cfs/util.h"

/* The verb's messages, whatever handler it has installed for its own work. */
static void verb_message(void *ctx, const char *msg)
{
	cli_error("%s: %s", (const char *)ctx, msg);
}

int cli_repo_open(const char *verb, const char *dir, bool create, struct cfs_repo **repo)
{
	cfs_message_fn fn;
	void *ctx;
	int r;

	cfs_get_message_handler(&fn, &ctx);
	cfs_set_message_handler(verb_message, (void *)verb);
	r = cfs_repo_open(dir, create, repo);
	cfs_set_message_handler(fn, ctx);
	if (r == -ENOMEM)
		cli_error("%s: %s", verb, strerror(ENOMEM));
	/* Otherwise the library said which directory and why. */
	return r ? EXIT_FAIL : EXIT_OK;
}

char *cli_repo_basedir(const char *dir)
{
	size_t n = 0;
	char *out, *o;

	for (const char *p = dir; *p; p++)
		n += (*p == ':' || *p == '\\') ? 2 : 1;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	o = out;
	for (const char *p = dir; *p; p++) {
		if (*p == ':' || *p == '\\')
			*o++ = '\\';
		*o++ = *p;
	}
	*o = '\0';
	return out;
}

int cli_repo_image(const char *verb, const char *dir, const char *what, char **path,
		   char **basedir, uint8_t *digest)
{
	struct cfs_repo *repo = NULL;
	cfs_message_fn fn;
	void *ctx;
	int r;

	*path = NULL;
	if (basedir)
		*basedir = NULL;
	cfs_get_message_handler(&fn, &ctx);
	cfs_set_message_handler(verb_message, (void *)verb);
	r = cfs_repo_open(dir, false, &repo);
	if (r == 0)
		r = cfs_repo_resolve(repo, what, digest, path);
	cfs_set_message_handler(fn, ctx);
	if (r == 0 && basedir) {
		*basedir = cli_repo_basedir(cfs_repo_objects(repo));
		if (!*basedir)
			r = -ENOMEM;
	}
	cfs_repo_close(repo);
	if (r == -ENOMEM)
		cli_error("%s: %s", verb, strerror(ENOMEM));
	if (r) {
		free(*path);
		*path = NULL;
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
