// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl mount: mount an image with the composefs kernel module, building
 * the option string from friendlier arguments. "--digest auto" measures the
 * image's fs-verity digest and passes it, so the kernel then checks the
 * image against it and requires verified backing files.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "cfsctl.h"
#include "libcfs.h"

static const struct option long_options[] = {
	{ "basedir", required_argument, NULL, 'b' },
	{ "digest", required_argument, NULL, 'd' },
	{ "verity-check", required_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What a failed mount(2) most likely means, for the message. */
static const char *mount_hint(int err, bool digest)
{
	switch (err) {
	case ENODEV:
		return "the composefs module is not loaded";
	case EUCLEAN:
		return "the image is corrupt (see the kernel log)";
	case EIO:
		return digest ? "the image's fs-verity digest is not the one given" :
				"I/O error reading the image";
	case ENODATA:
		return "the image has no fs-verity, but a digest was given";
	case EINVAL:
		return "invalid option or image (see the kernel log)";
	default:
		return NULL;
	}
}

int cmd_mount(int argc, char **argv)
{
	const char *basedir = NULL, *digest_arg = NULL, *image, *mnt;
	char hex[CFS_DIGEST_HEX_SIZE], *opts = NULL;
	uint8_t digest[CFS_DIGEST_SIZE];
	int verity_check = -1, opt, r;
	size_t len;

	while ((opt = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
		switch (opt) {
		case 'b':
			basedir = optarg;
			break;
		case 'd':
			digest_arg = optarg;
			break;
		case 'v':
			if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '2')
				return cli_usage("mount", "--verity-check must be 0, 1 or 2");
			verity_check = optarg[0] - '0';
			break;
		case 'h':
			cli_print_help("mount", stdout);
			return cli_close_stdout();
		default:
			return cli_usage("mount", "invalid option");
		}
	}
	if (argc - optind != 2)
		return cli_usage("mount", "need IMAGE and MOUNTPOINT");
	image = argv[optind];
	mnt = argv[optind + 1];
	/* mount(2) splits its option string at commas: no way to pass one. */
	if (basedir && (strchr(basedir, ',') || !*basedir))
		return cli_usage("mount", "--basedir must be non-empty and contain no ','");

	if (digest_arg && strcmp(digest_arg, "auto") == 0) {
		int fd = open(image, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			cli_error("mount: opening '%s': %s", image, strerror(errno));
			return EXIT_FAIL;
		}
		r = cfs_verity_measure_fd(fd, digest);
		close(fd);
		if (r == -ENODATA) {
			cli_error("mount: measuring '%s': fs-verity is not enabled on the image", image);
			return EXIT_FAIL;
		}
		if (r < 0) {
			cli_error("mount: measuring '%s': %s", image, strerror(-r));
			return EXIT_FAIL;
		}
		cfs_digest_to_hex(digest, hex);
	} else if (digest_arg) {
		if (cfs_digest_from_hex(digest_arg, digest) < 0)
			return cli_usage("mount", "--digest must be 'auto' or 64 hex digits");
		cfs_digest_to_hex(digest, hex);
	}

	len = (basedir ? strlen(basedir) : 0) + 128;
	opts = malloc(len);
	if (!opts) {
		cli_error("mount: %s", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	opts[0] = '\0';
	if (basedir)
		snprintf(opts + strlen(opts), len - strlen(opts), "basedir=%s,", basedir);
	if (digest_arg)
		snprintf(opts + strlen(opts), len - strlen(opts), "digest=%s,", hex);
	/* Stricter than the kernel's default of 0: check every digest the
	 * image records unless told not to (with --digest the kernel's
	 * default, 2, is stricter still).
	 */
	if (verity_check < 0 && !digest_arg)
		verity_check = 1;
	if (verity_check >= 0)
		snprintf(opts + strlen(opts), len - strlen(opts), "verity_check=%d,", verity_check);
	if (opts[0])
		opts[strlen(opts) - 1] = '\0'; /* the last comma */

	if (mount(image, mnt, "composefs", MS_RDONLY, opts) < 0) {
		int err = errno;
		const char *hint = mount_hint(err, digest_arg != NULL);

		cli_error("mount: mounting '%s' on '%s': %s%s%s", image, mnt, strerror(err),
			  hint ? ": " : "", hint ? hint : "");
		free(opts);
		return EXIT_FAIL;
	}
	free(opts);
	return EXIT_OK;
}
