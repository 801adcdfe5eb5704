// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs-mount-root: the mount of the boot script (scripts/local-bottom/composefs,
 * docs/boot.md), as "cfsctl mount --digest=DIGEST --basedir=OBJECTS IMAGE
 * MOUNTPOINT" does it: the image must have the fs-verity digest DIGEST and
 * every file's object the digest the image records (v1: the composefs
 * module with verity_check=2; composefs 1.0: erofs under overlayfs with
 * verity=require).
 *
 * A program of its own because the initramfs holds it: it takes from
 * libcfs only the mount and the image's probe, so it needs libc and
 * libfsverity's few libraries, where cfsctl needs some seventy (a registry
 * client, ostree, a terminal UI), each to be unpacked from the initramfs
 * and loaded on every boot.
 *
 * Prints the image's format (its short name: "v1", "EROFS") on stdout
 * before mounting, so that the script knows what the mount must look like
 * and, if the mount fails, why.
 *
 * Usage: cfs-mount-root DIGEST OBJECTS IMAGE MOUNTPOINT
 * Exits 0 when mounted, 1 when not, 2 on a usage error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cfs/mount.h"
#include "cfs/store.h"
#include "cfs/util.h"

static void say(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "cfs-mount-root: %s\n", msg);
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("cfs-mount-root: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int main(int argc, char **argv)
{
	struct cfs_basedirs dirs = { 0 };
	struct cfs_mount_options mo = { 0 };
	struct cfs_mount_caps caps;
	uint8_t digest[CFS_DIGEST_SIZE];
	const char *image, *mnt;
	int r;

	if (argc != 5) {
		fputs("usage: cfs-mount-root DIGEST OBJECTS IMAGE MOUNTPOINT\n", stderr);
		return 2;
	}
	image = argv[3];
	mnt = argv[4];
	if (strlen(argv[1]) != 2 * CFS_DIGEST_SIZE || cfs_digest_from_hex(argv[1], digest) < 0) {
		fail("the digest must be %d hex digits: '%s'", 2 * CFS_DIGEST_SIZE, argv[1]);
		return 2;
	}
	cfs_set_message_handler(say, NULL);

	r = cfs_image_mount_caps(image, &caps);
	if (r < 0)
		return fail("'%s': %s", image, strerror(-r));
	printf("%s\n", caps.format);
	if (fflush(stdout) != 0)
		return fail("writing the format: %s", strerror(errno));

	r = cfs_basedirs_add(&dirs, argv[2]);
	if (r < 0)
		return fail("'%s': %s", argv[2], strerror(-r));
	mo.basedirs = &dirs;
	mo.digest = digest;
	/* v1: the module's strictest level; EROFS: overlayfs's verity=require,
	 * which the digest implies */
	mo.verity_check = caps.verity_check ? 2 : -1;
	mo.userns_fd = -1;
	r = cfs_image_mount(image, mnt, &mo);
	cfs_basedirs_free(&dirs);
	if (r < 0)
		return fail("mounting '%s' on '%s': %s", image, mnt, strerror(-r));
	return 0;
}
