// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl fetch: bring every object that one or more images need and the
 * local store lacks from HTTP(S) or file:// mirrors serving a digest store
 * (URL/xx/<62 hex>). The objects come from lib/base/objects.c, the downloading
 * and verifying from lib/remote/fetch.c; this file parses options, draws progress,
 * lists what is still missing and writes the --json summary.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/fetch.h"
#include "cfs/image.h"
#include "cfs/store.h"
#include "cfs/util.h"

#define MAX_MISSING_LISTED 20 /* on stderr; --json lists every one */

struct opts {
	struct cfs_basedirs dirs; /* every --basedir's, in order */
	struct cli_mirrors m;
	bool json;
};

static void progress_cb(void *ctx, const struct cfs_fetch_stats *st)
{
	cli_progress_update(ctx, st->done, st->bytes_done);
}

/* Why @o cannot be fetched, before we even try (malloc()ed), or NULL. */
static char *unfetchable(const struct cfs_object *o, const char *const *basedirs)
{
	char *why = NULL;
	int n = 0;

	switch (o->state) {
	case CFS_OBJECT_WRONG_SIZE:
		n = asprintf(&why, "'%s/%s' has %llu bytes, the image says %llu",
			     basedirs[o->basedir], o->path, (unsigned long long)o->found_size,
			     (unsigned long long)o->size);
		break;
	case CFS_OBJECT_NOT_FILE:
		n = asprintf(&why, "'%s/%s' is not a readable regular file",
			     basedirs[o->basedir], o->path);
		break;
	default:
		if (!o->has_digest)
			why = strdup("the image records no digest for it, so it cannot be verified");
		else if (!o->canonical)
			why = strdup("its backing path is not the digest store path of its digest");
		else
			return NULL;
	}
	if (n < 0 || !why)
		return strdup("cannot be fetched"); /* NULL here means "fetch it" */
	return why;
}

static int run(struct opts *o, char **images, size_t n_images)
{
	struct cfs_objects set;
	struct cfs_fetch_object *fobjs = NULL;
	struct cfs_fetch_options fo = { 0 };
	struct cfs_fetch_stats st = { 0 };
	struct cli_progress prog;
	struct timespec t0, t1;
	size_t *fidx = NULL, nf = 0, present_before = 0, still_missing = 0;
	char **why = NULL; /* per object: why it is missing, malloc()ed */
	const char *const *basedirs = (const char *const *)o->dirs.dirs;
	double seconds;
	int ret, rc = EXIT_FAIL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	cfs_objects_init(&set);
	/* the store we fetch into may be new (and private); its parent must exist */
	ret = cfs_store_dir_open(o->dirs.dirs[0]);
	if (ret < 0)
		goto out; /* said, naming the store */
	close(ret);
	cli_interrupt_start();
	cli_interrupt_dir(o->dirs.dirs[0]);
	for (size_t i = 0; i < n_images; i++) {
		struct cfs_image *img;

		ret = cfs_image_open(images[i], &img);
		if (ret < 0) {
			cli_error("fetch: opening image: '%s': %s", images[i], strerror(-ret));
			goto out;
		}
		ret = cfs_objects_add_image(&set, img);
		cfs_image_close(img);
		if (ret < 0) {
			cli_error("fetch: reading image: '%s': %s", images[i], strerror(-ret));
			goto out;
		}
	}
	ret = cfs_objects_locate(&set, &o->dirs);
	if (ret < 0)
		goto out;

	fobjs = calloc(set.n + 1, sizeof(*fobjs));
	fidx = calloc(set.n + 1, sizeof(*fidx));
	why = calloc(set.n + 1, sizeof(*why));
	if (!fobjs || !fidx || !why) {
		cli_error("fetch: %s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < set.n; i++) {
		const struct cfs_object *ob = &set.objs[i];

		if (ob->state == CFS_OBJECT_PRESENT) {
			present_before++;
			continue;
		}
		why[i] = unfetchable(ob, basedirs);
		if (why[i])
			continue;
		memcpy(fobjs[nf].digest, ob->digest, CFS_DIGEST_SIZE);
		fobjs[nf].size = ob->size;
		fidx[nf++] = i;
	}

	fo.basedir = o->dirs.dirs[0];
	fo.urls = o->m.urls;
	fo.n_urls = o->m.n_urls;
	fo.jobs = o->m.jobs;
	fo.retries = o->m.retries;
	fo.timeout = o->m.timeout;
	fo.cainfo = o->m.cacert;
	fo.logins = o->m.logins;
	fo.progress = progress_cb;
	fo.progress_ctx = &prog;
	if (nf > 0) {
		uint64_t bytes = 0;

		for (size_t k = 0; k < nf; k++)
			bytes += fobjs[k].size;
		cli_progress_start(&prog, "fetch", nf, bytes);
		ret = cfs_fetch_objects(fobjs, nf, &fo, &st);
		cli_progress_end(&prog);
		if (ret < 0) {
			cli_error("fetch: into '%s': %s", o->dirs.dirs[0], strerror(-ret));
			goto out;
		}
		for (size_t k = 0; k < nf; k++) {
			why[fidx[k]] = fobjs[k].reason; /* ours now */
			fobjs[k].reason = NULL;
		}
	}

	/* the answer is what the basedirs hold now, not what we think we did */
	ret = cfs_objects_locate(&set, &o->dirs);
	if (ret < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	for (size_t i = 0; i < set.n; i++) {
		const struct cfs_object *ob = &set.objs[i];

		if (ob->state == CFS_OBJECT_PRESENT)
			continue;
		still_missing++;
		if (!why[i])
			why[i] = strdup("not in the store after fetching it");
		if (still_missing <= MAX_MISSING_LISTED)
			cli_error("fetch: missing object: '%s' (for '%s' in '%s'): %s", ob->path,
				  ob->n_users ? ob->users[0].path : "?",
				  images[ob->n_users ? ob->users[0].image : 0],
				  why[i] ? why[i] : "?");
	}
	if (still_missing > MAX_MISSING_LISTED)
		cli_error("fetch: %zu objects missing in all; the first %d are listed above "
			  "(--json lists every one)", still_missing, MAX_MISSING_LISTED);

	if (o->json) {
		json_t *doc = json_object(), *missing = json_array();
		int r;

		cli_json_set(doc, "objects", json_integer((json_int_t)set.n));
		cli_json_set(doc, "fetched", json_integer((json_int_t)st.fetched));
		cli_json_set(doc, "already_present",
			     json_integer((json_int_t)(present_before + (size_t)st.present)));
		cli_json_set(doc, "failed", json_integer((json_int_t)still_missing));
		cli_json_set(doc, "unavailable", json_integer((json_int_t)st.unavailable));
		cli_json_set(doc, "bytes", json_integer((json_int_t)st.bytes_fetched));
		cli_json_set(doc, "retries", json_integer((json_int_t)st.retries));
		cli_json_set(doc, "rejected", json_integer((json_int_t)st.rejected));
		cli_json_set(doc, "verity_enabled", json_integer((json_int_t)st.verity_enabled));
		/* milliseconds, as "%.3f" gave them */
		cli_json_set(doc, "seconds", json_real((double)(long long)(seconds * 1000 + 0.5) / 1000));
		for (size_t i = 0; i < set.n; i++)
			if (set.objs[i].state != CFS_OBJECT_PRESENT)
				cli_json_push(missing,
					      json_pack("{s:o, s:o}", "path",
							cli_json_text(set.objs[i].path), "reason",
							cli_json_text(why[i] ? why[i] : "?")));
		cli_json_set(doc, "missing", missing);
		r = cli_json_print(doc, CLI_JSON_LINE);
		if (r < 0) {
			cli_error("fetch: the JSON summary: %s", strerror(-r));
			rc = EXIT_FAIL;
			goto out;
		}
	}
	rc = still_missing ? EXIT_FAIL : EXIT_OK;
out:
	for (size_t i = 0; why && i < set.n; i++)
		free(why[i]);
	free(fobjs);
	free(fidx);
	free(why);
	cfs_objects_free(&set);
	if (cli_close_stdout() != EXIT_OK)
		rc = EXIT_FAIL;
	return rc;
}

/* cfsctl fetch --help, and its man page (docs/mkman.py) */
const char cmd_fetch_usage[] =
	  "Usage: cfsctl fetch [OPTIONS] --basedir DIR[:DIR...] --url URL[,URL...] IMAGE...\n"
	  "\n"
	  "Bring every object that the IMAGEs reference and the basedirs lack from\n"
	  "mirrors that serve a digest store's layout: URL/xx/<62 hex digits>. Each\n"
	  "object is accepted only when its size and fs-verity digest match the\n"
	  "image; it is written to a temporary file in DIR, fsynced and linked into\n"
	  "place (fs-verity is enabled where the filesystem supports it), so a\n"
	  "failed or interrupted fetch never leaves a partial object. Running the\n"
	  "command again continues where it stopped.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir DIR[:DIR...]  the store to fill (created if missing), then\n"
	  "                     more basedirs to look in, as in the kernel's basedir=\n"
	  "                     option (may be repeated): an object found in any of\n"
	  "                     them counts as present, new ones go into the first;\n"
	  "                     '\\:' for a colon in a name, '\\\\' for a backslash\n"
	  "  --url URL[,URL...] mirrors (http://, https://, file://), tried in order;\n"
	  "                     may be repeated. A URL's USER:PASSWORD@ is never\n"
	  "                     printed, and is hidden from ps once read; give\n"
	  "                     credentials with --authfile instead\n"
	  "  --authfile FILE    the mirrors' credentials (HTTP Basic) in FILE, in\n"
	  "                     containers-auth.json(5) format: an entry keyed\n"
	  "                     HOST[:PORT], or HOST[:PORT]/PATH for the URLs below\n"
	  "                     PATH (the longest first), holds base64 of\n"
	  "                     USER:PASSWORD as \"auth\"\n"
	  "  -j, --jobs N       transfers in flight at once (default 16, at most 256)\n"
	  "  --retries N        retries per mirror after a transient error: reset,\n"
	  "                     timeout, HTTP 5xx/408/429, short body (default 3),\n"
	  "                     with exponential backoff; then the next mirror\n"
	  "  --timeout SECONDS  give up on a connection attempt, or a transfer that\n"
	  "                     receives nothing, after SECONDS (default 30)\n"
	  "  --cacert FILE      trust the CA certificates in FILE (PEM) for https\n"
	  "                     mirrors instead of the system CA store\n"
	  "  --json             print a summary as JSON on stdout: objects, fetched,\n"
	  "                     already_present, failed (still missing), unavailable\n"
	  "                     (not found on any mirror), bytes, retries, rejected\n"
	  "                     (content that did not verify), verity_enabled,\n"
	  "                     seconds, and missing: [{path, reason}]\n"
	  "  -h, --help         show this help\n"
	  "\n"
	  "A progress line is drawn on stderr when it is a terminal. Every object\n"
	  "still missing at the end is listed on stderr with the reason.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl fetch --basedir objects --url https://mirror.example/objects rootfs.cfs\n"
	  "  cfsctl fetch --basedir objects --url https://a.example/o,https://b.example/o *.cfs\n"
	  "\n"
	  "Exit status: 0 when every object the images need is present at the end,\n"
	  "1 otherwise, 2 for a usage error. SIGINT, SIGTERM or SIGHUP removes\n"
	  "its temporaries, then it dies of that signal (a shell says 130, 143\n"
	  "or 129, and a loop stops).\n";

int cmd_fetch(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTION_BASEDIR,
		CLI_MIRRORS_LONG_OPTIONS,
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 0 };
	const struct cli_var vars[] = { { CLI_OPT_JSON, .flag = &o.json }, { 0 } };
	const struct cli_parse p = {
		.verb = "fetch", .shortopts = "b:u:j:h", .longopts = longopts,
		.help = cmd_fetch_usage, .vars = vars, .basedirs = &o.dirs, .mirrors = &o.m,
	};
	int rc;

	cli_mirrors_init(&o.m);
	rc = cli_parse(&p, argc, argv);
	if (rc >= 0)
		goto out;
	if (o.dirs.n == 0) {
		rc = cli_usage("fetch", "--basedir DIR is required");
		goto out;
	}
	rc = cli_mirrors_check_urls(&o.m, "fetch");
	if (rc == EXIT_OK)
		rc = cli_mirrors_check_cacert(&o.m, "fetch");
	if (rc == EXIT_OK)
		rc = cli_mirrors_logins(&o.m, "fetch");
	if (rc != EXIT_OK)
		goto out;
	if (optind >= argc) {
		rc = cli_usage("fetch", "no IMAGE given");
		goto out;
	}
	rc = run(&o, argv + optind, (size_t)(argc - optind));
out:
	cfs_basedirs_free(&o.dirs);
	cli_mirrors_free(&o.m);
	return rc;
}
