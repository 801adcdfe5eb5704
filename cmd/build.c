// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl build: make an image from a directory tree, a dumpfile, a tar
 * archive or a container image, and fill a digest store with the file
 * contents. The image is written to a
 * temporary file next to IMAGE and renamed into place only when complete,
 * so a failed build leaves nothing at IMAGE.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfsctl.h"
#include "libcfs.h"
#include "oci.h"

enum {
	OPT_FROM_DUMP = 256,
	OPT_FROM_TAR,
	OPT_FROM_OCI,
	OPT_PLATFORM,
	OPT_DIGEST_STORE,
	OPT_REQUIRE_VERITY,
	OPT_PRINT_DIGEST,
	OPT_USE_EPOCH,
	OPT_SKIP_XATTRS,
	OPT_SKIP_DEVICES,
	OPT_THREADS,
	OPT_FORMAT,
	OPT_MIN_VERSION,
	OPT_MAX_VERSION,
	OPT_USER_XATTRS,
	OPT_LAX_DUMP,
};

static const struct option long_options[] = {
	{ "from-dump", no_argument, NULL, OPT_FROM_DUMP },
	{ "from-tar", no_argument, NULL, OPT_FROM_TAR },
	{ "from-oci", no_argument, NULL, OPT_FROM_OCI },
	{ "platform", required_argument, NULL, OPT_PLATFORM },
	{ "digest-store", required_argument, NULL, OPT_DIGEST_STORE },
	{ "require-verity", no_argument, NULL, OPT_REQUIRE_VERITY },
	{ "print-digest", no_argument, NULL, OPT_PRINT_DIGEST },
	{ "use-epoch", no_argument, NULL, OPT_USE_EPOCH },
	{ "skip-xattrs", no_argument, NULL, OPT_SKIP_XATTRS },
	{ "skip-devices", no_argument, NULL, OPT_SKIP_DEVICES },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "min-version", required_argument, NULL, OPT_MIN_VERSION },
	{ "max-version", required_argument, NULL, OPT_MAX_VERSION },
	{ "user-xattrs", no_argument, NULL, OPT_USER_XATTRS },
	{ "lax-dump", no_argument, NULL, OPT_LAX_DUMP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

/* Report @r as the failure to @what @path unless the library said why. */
static int fail(const char *what, const char *path, int r)
{
	if (n_messages == 0)
		cli_error("%s: '%s': %s", what, path, strerror(-r));
	return EXIT_FAIL;
}

enum source_kind { FROM_DIR, FROM_DUMP, FROM_TAR, FROM_OCI };

static int load_tar(const char *source, const struct cfs_build_options *o,
		    struct cfs_node **root)
{
	int fd, r;

	if (strcmp(source, "-") == 0)
		return cfs_tree_from_tar(STDIN_FILENO, "-", o, root);
	fd = open(source, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		cli_error("cannot open archive '%s': %s", source, strerror(errno));
		n_messages++;
		return r;
	}
	r = cfs_tree_from_tar(fd, source, o, root);
	close(fd);
	return r;
}

static int load_tree(const char *source, enum source_kind kind,
		     const struct cfs_oci_platform *platform, const struct cfs_build_options *o,
		     struct cfs_node **root)
{
	FILE *in;
	int r;

	if (kind == FROM_DIR)
		return cfs_tree_from_dir(source, o, root);
	if (kind == FROM_TAR)
		return load_tar(source, o, root);
	if (kind == FROM_OCI)
		return cfs_tree_from_oci(source, platform, o, root);
	if (strcmp(source, "-") == 0)
		return cfs_tree_from_dump(stdin, "-", o, root);
	in = fopen(source, "re");
	if (!in) {
		r = -errno;
		cli_error("cannot open dumpfile '%s': %s", source, strerror(errno));
		n_messages++;
		return r;
	}
	r = cfs_tree_from_dump(in, source, o, root);
	fclose(in);
	return r;
}

/*
 * Write the image of @root to a new temporary file in @image's directory,
 * then rename it to @image. On failure nothing is left behind.
 */
static int write_image(struct cfs_node *root, const char *image, bool print_digest,
		       enum cfs_image_format format, const struct cfs_erofs_options *eo)
{
	uint8_t digest[CFS_DIGEST_SIZE];
	char hex[CFS_DIGEST_HEX_SIZE];
	char *tmp = NULL, *dcopy, *bcopy;
	unsigned int before;
	mode_t mask;
	int fd = -1, r;

	dcopy = strdup(image);
	bcopy = strdup(image);
	if (!dcopy || !bcopy ||
	    asprintf(&tmp, "%s/.%s.tmpXXXXXX", dirname(dcopy), basename(bcopy)) < 0) {
		tmp = NULL;
		r = -ENOMEM;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		tmp = NULL;
		cli_error("cannot create '%s': %s", image, strerror(-r));
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
	r = cfs_tree_write(root, format, eo, fd);
	if (r && n_messages == before)
		goto fail; /* a write failed (a full disk): name the file */
	if (r)
		goto out;
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (print_digest) {
		r = cfs_verity_digest_fd(fd, digest);
		if (r)
			goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, image) < 0) {
		r = -errno;
		goto fail;
	}
	free(tmp);
	tmp = NULL;
	if (print_digest) {
		cfs_digest_to_hex(digest, hex);
		printf("%s\n", hex);
	}
	r = 0;
	goto out;
fail:
	cli_error("writing '%s': %s", image, strerror(-r));
	n_messages++;
out:
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(dcopy);
	free(bcopy);
	return r;
}

int cmd_build(int argc, char **argv)
{
	struct cfs_build_options o = { 0 };
	struct cfs_erofs_options eo = { .min_version = 0, .max_version = 1 };
	bool erofs_only = false;
	struct cli_progress progress;
	struct cfs_oci_platform platform;
	bool have_platform = false;
	struct cfs_node *root = NULL;
	enum source_kind kind = FROM_DIR;
	bool print_digest = false;
	const char *source, *image;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_FROM_DUMP:
		case OPT_FROM_TAR:
		case OPT_FROM_OCI:
			if (kind != FROM_DIR)
				return cli_usage("build",
						 "--from-dump, --from-tar and --from-oci exclude each other");
			kind = c == OPT_FROM_DUMP ? FROM_DUMP : c == OPT_FROM_TAR ? FROM_TAR : FROM_OCI;
			break;
		case OPT_PLATFORM:
			if (cfs_oci_platform_parse(optarg, &platform))
				return cli_usage("build", "invalid --platform '%s' (OS/ARCH[/VARIANT])",
						 optarg);
			have_platform = true;
			break;
		case OPT_DIGEST_STORE:
			if (!optarg[0])
				return cli_usage("build", "--digest-store needs a directory");
			o.digest_store = optarg;
			break;
		case OPT_REQUIRE_VERITY:
			o.require_verity = true;
			break;
		case OPT_PRINT_DIGEST:
			print_digest = true;
			break;
		case OPT_USE_EPOCH:
			o.use_epoch = true;
			break;
		case OPT_SKIP_XATTRS:
			o.skip_xattrs = true;
			break;
		case OPT_SKIP_DEVICES:
			o.skip_devices = true;
			break;
		case OPT_THREADS:
			o.threads = cli_parse_count(optarg);
			if (!o.threads)
				return cli_usage("build", "invalid --threads value '%s' (1..4096)",
						 optarg);
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "v1") == 0)
				o.format = CFS_FORMAT_V1;
			else if (strcmp(optarg, "erofs") == 0)
				o.format = CFS_FORMAT_EROFS;
			else
				return cli_usage("build", "unknown --format '%s' (v1 or erofs)",
						 optarg);
			break;
		case OPT_MIN_VERSION:
		case OPT_MAX_VERSION:
			if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0)
				return cli_usage("build", "invalid --%s value '%s' (0 or 1)",
						 c == OPT_MIN_VERSION ? "min-version" : "max-version",
						 optarg);
			if (c == OPT_MIN_VERSION)
				eo.min_version = (unsigned int)(optarg[0] - '0');
			else
				eo.max_version = (unsigned int)(optarg[0] - '0');
			erofs_only = true;
			break;
		case OPT_LAX_DUMP:
			o.lax_dump = true;
			break;
		case OPT_USER_XATTRS:
			eo.user_xattrs = true;
			erofs_only = true;
			break;
		case 'h':
			cli_print_help("build", stdout);
			return cli_close_stdout();
		default:
			return cli_usage("build", "unknown option");
		}
	}
	if (argc - optind != 2)
		return cli_usage("build", "expected SOURCE and IMAGE, got %d argument%s",
				 argc - optind, argc - optind == 1 ? "" : "s");
	source = argv[optind];
	image = argv[optind + 1];
	if (o.require_verity && !o.digest_store)
		return cli_usage("build", "--require-verity needs --digest-store");
	if (o.lax_dump && kind != FROM_DUMP)
		return cli_usage("build", "--lax-dump needs --from-dump");
	if (have_platform && kind != FROM_OCI)
		return cli_usage("build", "--platform needs --from-oci");
	if (kind == FROM_OCI && strncmp(source, "oci:", 4) != 0 &&
	    strncmp(source, "oci-archive:", 12) != 0)
		return cli_usage("build", "--from-oci needs oci:DIR[:TAG] or oci-archive:FILE[:TAG], not '%s'",
				 source);
	if (erofs_only && o.format != CFS_FORMAT_EROFS)
		return cli_usage("build",
				 "--min-version, --max-version and --user-xattrs need --format=erofs");
	if (eo.max_version < eo.min_version)
		eo.max_version = eo.min_version;

	cfs_set_message_handler(on_message, NULL);
	cli_progress_start(&progress, "build: hashing files", 0, 0);
	o.progress = on_progress;
	o.progress_ctx = &progress;

	r = load_tree(source, kind, have_platform ? &platform : NULL, &o, &root);
	if (r)
		return fail(kind == FROM_DUMP  ? "reading dumpfile" :
			    kind == FROM_TAR ? "reading archive" :
			    kind == FROM_OCI ? "reading image" :
					       "reading directory",
			    source, r);
	r = cfs_tree_finish(root, &o);
	cli_progress_end(&progress);
	if (r) {
		cfs_tree_free(root);
		return fail("building", source, r);
	}
	r = write_image(root, image, print_digest, o.format, &eo);
	cfs_tree_free(root);
	if (r)
		return fail("writing", image, r);
	return cli_close_stdout();
}
