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
#include <libgen.h>
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

/* The image being written: a temporary file next to @image until it is renamed. */
struct image_out {
	const char *image;
	bool print_digest;
	enum cfs_image_format format;
	const struct cfs_write_options *wo;
	char *tmp; /* NULL: none (yet, or any more) */
	uint8_t digest[CFS_DIGEST_SIZE];
	/* with --repo: the build, and the open temporary in REPO/images */
	struct cli_build *b;
	int fd;
	char repo_tmp[CFS_REPO_TMP_SIZE];
	/* with --repo, once the image is in REPO/images: its path, NULL if it was there before */
	char *added;
};

/*
 * Remove the image that write_repo_tmp() added to REPO/images, unnamed:
 * a build that fails leaves no image.
 */
static void remove_added_image(struct image_out *io)
{
	if (io->added) {
		unlink(io->added);
		cli_interrupt_file(NULL);
		free(io->added);
		io->added = NULL;
	}
}

/* Remove the temporary image of @io, written but not to be kept. */
static void abort_image(struct image_out *io)
{
	if (io->b && io->b->repo) {
		cfs_repo_image_abort(io->b->repo, io->fd, io->repo_tmp);
		io->fd = -1;
	} else {
		unlink(io->tmp);
	}
	cli_interrupt_file(NULL);
	free(io->tmp);
	io->tmp = NULL;
}

static int write_repo_tmp(struct image_out *io, struct cfs_node *root);

/*
 * Write the image of @root to a new temporary file in the image's
 * directory: the before_publish callback of cfs_tree_finish(), so that an
 * image that cannot be written fails the build before any new object is
 * published. On failure nothing is left behind.
 */
static int write_image_tmp(void *ctx, struct cfs_node *root)
{
	struct image_out *io = ctx;
	char *dcopy, *bcopy;
	sigset_t sigs;
	unsigned int before;
	mode_t mask;
	int fd = -1, r;

	if (io->b && io->b->check) {
		r = io->b->check(io->b->check_ctx, root);
		if (r)
			return r;
	}
	if (io->b && io->b->repo)
		return write_repo_tmp(io, root);
	dcopy = strdup(io->image);
	bcopy = strdup(io->image);
	if (!dcopy || !bcopy ||
	    asprintf(&io->tmp, "%s/.%s.tmpXXXXXX", dirname(dcopy), basename(bcopy)) < 0) {
		io->tmp = NULL;
		r = -ENOMEM;
		goto out;
	}
	/* Made and named for the signal handler at once: no signal leaves it behind. */
	cli_interrupt_block(&sigs);
	fd = mkostemp(io->tmp, O_CLOEXEC);
	if (fd >= 0 && cli_interrupt_file(io->tmp) < 0) {
		unlink(io->tmp);
		close(fd);
		fd = -1;
		errno = ENAMETOOLONG;
	}
	r = fd < 0 ? -errno : 0;
	cli_interrupt_unblock(&sigs);
	if (fd < 0) {
		free(io->tmp);
		io->tmp = NULL;
		cli_error("cannot create '%s': %s", io->image, strerror(-r));
		n_messages++;
		goto out;
	}
	/* mkostemp() makes 0600; an image is as readable as any new file. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0644 & ~mask) < 0) {
		r = -errno;
		goto fail;
	}
	before = n_messages;
	r = cfs_tree_write(root, io->format, io->wo, fd);
	if (r && n_messages == before)
		goto fail; /* a write failed (a full disk): name the file */
	if (r)
		goto out;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (io->print_digest) {
		r = cfs_verity_digest_fd(fd, io->digest);
		if (r)
			goto fail;
	}
	r = close(fd) < 0 ? -errno : 0;
	fd = -1;
	if (r)
		goto fail;
	goto out;
fail:
	cli_error("writing '%s': %s", io->image, strerror(-r));
	n_messages++;
out:
	if (fd >= 0)
		close(fd);
	if (r && io->tmp) {
		unlink(io->tmp);
		cli_interrupt_file(NULL);
		free(io->tmp);
		io->tmp = NULL;
	}
	free(dcopy);
	free(bcopy);
	return r;
}

/*
 * With --repo, the before_publish step writes the image to a temporary in
 * REPO/images, stores it there under its digest, and checks the name once
 * more: all that can fail is found before a new object is published. An
 * image that was not there before is removed again if the build fails
 * after (io->added), and by the signal handler.
 */
static int write_repo_tmp(struct image_out *io, struct cfs_node *root)
{
	struct cli_build *b = io->b;
	unsigned int before = n_messages;
	char hex[CFS_DIGEST_HEX_SIZE], *path = NULL;
	bool existed;
	sigset_t sigs;
	int r;

	cli_interrupt_block(&sigs);
	io->fd = cfs_repo_image_create(b->repo, io->repo_tmp);
	if (io->fd >= 0 &&
	    (asprintf(&io->tmp, "%s/images/%s", b->repo_dir, io->repo_tmp) < 0 ||
	     cli_interrupt_file(io->tmp) < 0)) {
		cfs_repo_image_abort(b->repo, io->fd, io->repo_tmp);
		io->fd = -ENOMEM;
	}
	cli_interrupt_unblock(&sigs);
	if (io->fd < 0) {
		r = io->fd;
		free(io->tmp);
		io->tmp = NULL;
		return r;
	}
	r = cfs_tree_write(root, io->format, io->wo, io->fd);
	if (r == 0)
		r = cfs_verity_digest_fd(io->fd, io->digest);
	if (r) {
		if (n_messages == before)
			cli_error("writing an image into '%s/images': %s", b->repo_dir,
				  strerror(-r));
		n_messages++;
		abort_image(io);
		return r;
	}
	cfs_digest_to_hex(io->digest, hex);
	if (asprintf(&path, "%s/images/%s", b->repo_dir, hex) < 0) {
		abort_image(io);
		return -ENOMEM;
	}
	existed = access(path, F_OK) == 0;
	cli_interrupt_block(&sigs);
	r = cfs_repo_image_commit(b->repo, io->fd, io->repo_tmp, b->o.require_verity,
				  io->digest);
	io->fd = -1;
	free(io->tmp);
	io->tmp = NULL;
	cli_interrupt_file(NULL);
	if (r == 0 && !existed) {
		io->added = path;
		path = NULL;
		if (cli_interrupt_file(io->added) < 0) {
			cli_interrupt_unblock(&sigs);
			remove_added_image(io);
			return -ENAMETOOLONG;
		}
	}
	cli_interrupt_unblock(&sigs);
	free(path);
	if (r)
		return r;
	/* The names may have changed while the build worked. */
	r = cfs_repo_name_usable(b->repo, b->name);
	if (r)
		remove_added_image(io);
	return r;
}

/* Point the name at the image write_repo_tmp() stored. */
static int commit_repo_image(struct image_out *io)
{
	struct cli_build *b = io->b;
	char hex[CFS_DIGEST_HEX_SIZE];
	sigset_t sigs;
	int r;

	cli_interrupt_block(&sigs);
	r = b->origin ? cfs_repo_set_origin(b->repo, b->name, io->digest, b->origin) : 0;
	if (r == 0)
		r = cfs_repo_set_name(b->repo, b->name, io->digest);
	if (r == 0) {
		cli_interrupt_file(NULL); /* named: the image stays */
		free(io->added);
		io->added = NULL;
	}
	cli_interrupt_unblock(&sigs);
	if (r) {
		/* Only a change of the names since write_repo_tmp() gets here. */
		remove_added_image(io);
		return r;
	}
	memcpy(b->digest, io->digest, CFS_DIGEST_SIZE);
	if (io->print_digest) {
		cfs_digest_to_hex(io->digest, hex);
		printf("%s\n", hex);
	}
	return 0;
}

/* Rename the image written by write_image_tmp() into place. */
static int commit_image(struct image_out *io)
{
	char hex[CFS_DIGEST_HEX_SIZE];
	int r = 0;

	if (rename(io->tmp, io->image) < 0) {
		r = -errno;
		cli_error("writing '%s': %s", io->image, strerror(-r));
		n_messages++;
		unlink(io->tmp);
	} else if (io->print_digest) {
		cfs_digest_to_hex(io->digest, hex);
		printf("%s\n", hex);
	}
	cli_interrupt_file(NULL);
	free(io->tmp);
	io->tmp = NULL;
	return r;
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
	struct image_out io = {
		.image = image, .print_digest = b->print_digest, .format = b->o.format, .wo = &b->wo,
		.b = b, .fd = -1,
	};
	int r;

	/* The image is written before the new objects are published: on failure, neither is. */
	b->o.before_publish = write_image_tmp;
	b->o.before_publish_ctx = &io;
	r = cfs_tree_finish(root, &b->o);
	cli_progress_end(&b->progress);
	cfs_tree_free(root);
	if (r) {
		if (io.tmp) /* the image was written, but the objects not all published */
			abort_image(&io);
		remove_added_image(&io);
		cli_build_end(b);
		return cli_build_fail("building", source, r);
	}
	r = b->repo ? commit_repo_image(&io) : commit_image(&io);
	cli_build_end(b);
	if (r)
		return cli_build_fail("writing", image, r);
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
