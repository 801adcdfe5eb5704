// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl pull: the image of a container image in a registry, its layers
 * streamed from the network into the tree and the digest store. The
 * fetching and the tree are lib/registry.c and lib/oci.c; the build options
 * and the writing are build's (build.c), the download options fetch's
 * (mirrors.c). This file parses the options and draws the progress.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfsctl.h"
#include "cfs/oci.h"

enum {
	OPT_PLAIN_HTTP = CLI_OPT_BUILD_END,
	OPT_LAYERS_CACHE,
	OPT_FULL_PULL,
};

static const struct option long_options[] = {
	CLI_BUILD_LONG_OPTIONS,
	{ "plain-http", no_argument, NULL, OPT_PLAIN_HTTP },
	{ "layers-cache", required_argument, NULL, OPT_LAYERS_CACHE },
	{ "full-pull", no_argument, NULL, OPT_FULL_PULL },
	CLI_OPTION_JSON,
	CLI_DOWNLOAD_LONG_OPTIONS,
	CLI_OPTION_HELP,
	{ NULL, 0, NULL, 0 },
};

static void on_progress(void *ctx, unsigned int layers_done, unsigned int layers, uint64_t done,
			uint64_t total)
{
	struct cli_progress *p = ctx;

	p->total = layers;
	p->total_bytes = total;
	cli_progress_update(p, layers_done, done);
}

/* Why a layer is pulled whole: said, as the pull goes on. */
static void on_notice(void *ctx, const char *msg)
{
	(void)ctx;
	cli_error("pull: %s", msg);
}

static int pull_option(void *ctx, int c, const char *arg)
{
	struct cfs_registry_options *ro = ctx;

	if (c != OPT_LAYERS_CACHE)
		return -1;
	if (!arg[0])
		return cli_usage("pull", "--layers-cache needs a directory");
	ro->layers_cache = arg;
	return EXIT_OK;
}

int cmd_pull(int argc, char **argv)
{
	struct cfs_registry_options ro = { 0 };
	struct cfs_registry_ref ref;
	struct cli_progress progress;
	struct cli_mirrors m;
	struct cli_build b;
	struct cfs_pull_stats stats = { 0 };
	bool json = false;
	const struct cli_var vars[] = { { OPT_PLAIN_HTTP, .flag = &ro.plain_http },
					{ OPT_FULL_PULL, .flag = &ro.full_pull },
					{ CLI_OPT_JSON, .flag = &json },
					{ 0 } };
	const struct cli_parse p = {
		.verb = "pull", .shortopts = "h", .longopts = long_options,
		.unknown = "unknown option", .vars = vars, .mirrors = &m, .build = &b,
		.take = pull_option, .ctx = &ro,
	};
	struct cfs_node *root = NULL;
	const char *reference = NULL, *image = NULL;
	int r;

	cli_mirrors_init(&m);
	r = cli_build_parse(&p, "REFERENCE", argc, argv, &reference, &image);
	if (r >= 0)
		return r;
	if (cfs_registry_ref_parse(reference, &ref))
		return cli_usage("pull", "'%s' is not REGISTRY[:PORT]/REPO[:TAG|@sha256:DIGEST]",
				 reference);
	cfs_registry_ref_free(&ref);
	r = cli_build_check(&b, "pull");
	if (r)
		return r;
	if (json && b.print_digest)
		return cli_usage("pull", "--json and --print-digest both write to stdout: choose one");
	r = cli_mirrors_check_cacert(&m, "pull");
	if (r)
		return r;
	ro.cainfo = m.cacert;
	ro.retries = m.retries;
	ro.timeout = m.timeout;

	r = cli_build_start(&b, "pull");
	if (r)
		return r;
	cli_progress_start(&progress, "pull: layers", 0, 0);
	ro.progress = on_progress;
	ro.progress_ctx = &progress;
	ro.notice = on_notice;
	ro.stats = &stats;
	r = cfs_tree_from_registry(reference, &ro, b.have_platform ? &b.platform : NULL, &b.o,
				   &root);
	cli_progress_end(&progress);
	if (r) {
		cli_build_end(&b);
		return cli_build_fail("pulling", reference, r);
	}
	r = cli_build_write(&b, root, reference, image);
	if (r == EXIT_OK && json) {
		printf("{\"layers_partial\": %u, \"layers_full\": %u, \"layers_cached\": %u, "
		       "\"bytes_fetched\": %llu, \"bytes_reused\": %llu, \"bytes_skipped\": %llu}\n",
		       stats.partial, stats.full, stats.cached, (unsigned long long)stats.fetched,
		       (unsigned long long)stats.reused, (unsigned long long)stats.skipped);
		r = cli_close_stdout();
	}
	return r;
}
