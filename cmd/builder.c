// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The builder that cfsctl build, cfsctl pull and build --from-ostree
 * share: the options that choose how an image is built, and the writing
 * of the built tree: to a temporary file next to IMAGE, renamed into place
 * only when complete (or, with --repo, stored in the repository and named),
 * after which the new objects are published. It is no verb: the verbs call
 * it, and it calls none of them, nor does the option loop call it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/build.h"
#include "cfs/oci.h"
#include "cfs/repo.h"
#include "cfs/store.h"
#include "cfs/util.h"

/* Library messages go to stderr; counting them tells whether one was said. */
static unsigned int n_messages;

static void on_message(void *ctx, const char *msg)
{
	(void)ctx;
	__atomic_add_fetch(&n_messages, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "cfsctl: %s\n", msg);
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct cli_progress *p = ctx;

	p->total = total;
	cli_progress_update(p, done, 0);
}

void cli_build_said(void)
{
	n_messages++;
}

/* Report @r as the failure to @what @path unless the library said why. */
int cli_build_fail(const char *what, const char *path, int r)
{
	if (n_messages == 0)
		cli_error("%s: '%s': %s", what, path, strerror(-r));
	return EXIT_FAIL;
}

/*
 * cfs_tree_commit()'s bracket: the signals are held off while a file is
 * made and named to the handler, which removes that one file.
 */
static void commit_guard(void *ctx, bool on)
{
	sigset_t *old = ctx;

	if (on)
		cli_interrupt_block(old);
	else
		cli_interrupt_unblock(old);
}

static void commit_pending(void *ctx, const char *path)
{
	(void)ctx;
	/* A path too long for the handler: it is the next gc's. */
	cli_interrupt_file(path);
}

void cli_build_init(struct cli_build *b)
{
	memset(b, 0, sizeof(*b));
	b->lock = -1;
	b->wo.min_version = 0;
	b->wo.max_version = 1;
	b->o.max_size = CLI_DEFAULT_MAX_SIZE;
	b->o.max_entries = CLI_DEFAULT_MAX_ENTRIES;
	b->o.reserve = CFS_RESERVE_AUTO;
}

/*
 * Take getopt's @c if it is a CLI_OPT_* of build: -1 when it is not; else
 * EXIT_OK, or EXIT_USAGE after saying why.
 */
static int build_option(struct cli_build *b, const char *verb, int c, const char *arg)
{
	switch (c) {
	case CLI_OPT_PLATFORM:
		if (cfs_oci_platform_parse(arg, &b->platform))
			return cli_usage(verb, "invalid --platform '%s' (OS/ARCH[/VARIANT])", arg);
		b->have_platform = true;
		return EXIT_OK;
	case CLI_OPT_REPO:
		if (b->repo_dir)
			return cli_usage(verb, "--repo given twice: one repository at a time");
		if (!arg[0])
			return cli_usage(verb, "--repo needs a directory");
		b->repo_dir = arg;
		return EXIT_OK;
	case CLI_OPT_DIGEST_STORE:
		if (!arg[0])
			return cli_usage(verb, "--digest-store needs a directory");
		b->o.digest_store = arg;
		return EXIT_OK;
	case CLI_OPT_REQUIRE_VERITY:
		b->o.require_verity = true;
		return EXIT_OK;
	case CLI_OPT_PRINT_DIGEST:
		b->print_digest = true;
		return EXIT_OK;
	case CLI_OPT_USE_EPOCH:
		b->o.use_epoch = true;
		return EXIT_OK;
	case CLI_OPT_SKIP_XATTRS:
		b->o.skip_xattrs = true;
		return EXIT_OK;
	case CLI_OPT_SKIP_DEVICES:
		b->o.skip_devices = true;
		return EXIT_OK;
	case CLI_OPT_THREADS:
		b->o.threads = cli_parse_count(arg);
		if (!b->o.threads)
			return cli_usage(verb, "invalid --threads value '%s' (1..4096)", arg);
		return EXIT_OK;
	case CLI_OPT_FORMAT:
		if (cfs_format_from_name(arg, &b->o.format) < 0)
			return cli_usage(verb, "unknown --format '%s' (v1 or erofs)", arg);
		return EXIT_OK;
	case CLI_OPT_MIN_VERSION:
	case CLI_OPT_MAX_VERSION:
		if (strcmp(arg, "0") != 0 && strcmp(arg, "1") != 0)
			return cli_usage(verb, "invalid --%s value '%s' (0 or 1)",
					 c == CLI_OPT_MIN_VERSION ? "min-version" : "max-version", arg);
		if (c == CLI_OPT_MIN_VERSION)
			b->wo.min_version = (unsigned int)(arg[0] - '0');
		else
			b->wo.max_version = (unsigned int)(arg[0] - '0');
		b->writer_options = true;
		return EXIT_OK;
	case CLI_OPT_MAX_SIZE:
	case CLI_OPT_RESERVE:
		if (cli_parse_size(arg, c == CLI_OPT_MAX_SIZE ? &b->o.max_size : &b->o.reserve) < 0)
			return cli_usage(verb, "invalid --%s value '%s' (a size: digits, then K, M, G, T)",
					 c == CLI_OPT_MAX_SIZE ? "max-size" : "reserve", arg);
		return EXIT_OK;
	case CLI_OPT_MAX_ENTRIES: {
		unsigned int n;

		if (cli_parse_uint(arg, UINT_MAX, &n) < 0)
			return cli_usage(verb, "invalid --max-entries value '%s' (a number)", arg);
		b->o.max_entries = n;
		b->max_entries_given = true;
		return EXIT_OK;
	}
	case CLI_OPT_USER_XATTRS:
		b->wo.user_xattrs = true;
		b->writer_options = true;
		return EXIT_OK;
	}
	return -1;
}

int cli_build_check(struct cli_build *b, const char *verb)
{
	if (b->repo_dir && b->o.digest_store)
		return cli_usage(verb, "--repo and --digest-store exclude each other: the repository's store is REPO/objects");
	if (b->repo_dir && cfs_repo_name_check(b->name) < 0) {
		fprintf(stderr, "Try 'cfsctl %s --help' for more information.\n", verb);
		return EXIT_USAGE;
	}
	if (b->o.require_verity && !b->o.digest_store && !b->repo_dir)
		return cli_usage(verb, "--require-verity needs --digest-store or --repo");
	/* cfs_tree_write() would refuse them too, but only after the build */
	if (b->writer_options && !cfs_format_takes_options(b->o.format))
		return cli_usage(verb,
				 "--min-version, --max-version and --user-xattrs need --format=erofs");
	if (b->wo.max_version < b->wo.min_version)
		b->wo.max_version = b->wo.min_version;
	return EXIT_OK;
}

void cli_build_end(struct cli_build *b)
{
	cfs_store_unlock(b->lock);
	b->lock = -1;
	if (b->repo)
		b->o.digest_store = NULL; /* it was the repository's */
	cfs_repo_close(b->repo);
	b->repo = NULL;
}

int cli_build_start(struct cli_build *b, const char *verb)
{
	cfs_set_message_handler(on_message, NULL);
	if (b->repo_dir) {
		if (cli_repo_open(verb, b->repo_dir, true, &b->repo) != EXIT_OK)
			return EXIT_FAIL;
		b->o.digest_store = cfs_repo_objects(b->repo);
		/* Shared from before the first object until the name is set. */
		/* A name that cannot be set is said before any work is done. */
		if (cfs_repo_name_usable(b->repo, b->name) < 0) {
			cli_build_end(b);
			return EXIT_FAIL;
		}
		b->lock = cfs_repo_lock(b->repo, false, false);
		if (b->lock == -EWOULDBLOCK) {
			cli_error("%s: waiting for the repository '%s': a gc is using it", verb,
				  b->repo_dir);
			b->lock = cfs_repo_lock(b->repo, false, true);
		}
		if (b->lock < 0) {
			cli_error("%s: locking the repository: '%s': %s", verb, b->repo_dir,
				  strerror(-b->lock));
			cli_build_end(b);
			return EXIT_FAIL;
		}
	}
	cli_interrupt_start();
	if (b->o.digest_store)
		cli_interrupt_dir(b->o.digest_store);
	cli_progress_start(&b->progress, "build: hashing files", 0, 0);
	b->o.progress = on_progress;
	b->o.progress_ctx = &b->progress;
	return EXIT_OK;
}


int cli_build_write(struct cli_build *b, struct cfs_node *root, const char *source,
		    const char *image)
{
	sigset_t sigs;
	struct cfs_image_target t = {
		.path = b->repo ? NULL : image, .repo = b->repo, .name = b->name,
		.origin = b->origin, .format = b->o.format, .wo = &b->wo,
		.require_verity = b->o.require_verity, .want_digest = b->print_digest,
		.guard = commit_guard, .pending = commit_pending, .ctx = &sigs,
		.store_seal = b->repo && b->store_seal,
	};
	char hex[CFS_DIGEST_HEX_SIZE];
	unsigned int before = n_messages;
	int r;

	if (t.store_seal)
		t.seal = b->seal;
	if (b->check) {
		b->o.before_publish = b->check;
		b->o.before_publish_ctx = b->check_ctx;
	}
	r = cfs_tree_commit(root, &b->o, &t);
	cli_progress_end(&b->progress);
	cfs_tree_free(root);
	cli_build_end(b);
	if (r)
		return n_messages == before ? cli_build_fail("building", source, r) : EXIT_FAIL;
	if (b->repo_dir)
		memcpy(b->digest, t.digest, CFS_DIGEST_SIZE);
	if (b->print_digest) {
		cfs_digest_to_hex(t.digest, hex);
		printf("%s\n", hex);
	}
	return cli_close_stdout();
}

/* The verb's parse, and its build options: the option loop knows no verb. */
struct build_parse {
	struct cli_build *b;
	const struct cli_parse *p;
};

/* The build options first, then the verb's own (cli_parse's @take). */
static int take_option(void *ctx, int c, const char *arg)
{
	struct build_parse *bp = ctx;
	int rc = build_option(bp->b, bp->p->verb, c, arg);

	if (rc >= 0)
		return rc;
	return bp->p->take ? bp->p->take(bp->p->ctx, c, arg) : -1;
}

int cli_build_parse(struct cli_build *b, const struct cli_parse *p, const char *what, int argc,
		    char **argv, const char **source, const char **image)
{
	struct build_parse bp = { .b = b, .p = p };
	struct cli_parse with_build = *p;
	int r;

	cli_build_init(b);
	with_build.take = take_option;
	with_build.ctx = &bp;
	r = cli_parse(&with_build, argc, argv);
	if (r >= 0)
		return r;
	if (argc - optind != 2)
		return cli_usage(p->verb, "expected %s and IMAGE, got %d argument%s", what,
				 argc - optind, argc - optind == 1 ? "" : "s");
	*source = argv[optind];
	*image = argv[optind + 1];
	b->name = *image;
	return -1;
}
