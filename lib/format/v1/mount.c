// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mounting a v1 image: by this project's composefs module, which takes the
 * basedirs, the image's digest and the verity_check level as options and
 * checks them all itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "cfs/build.h"
#include "format/mount-util.h"
#include "v1.h"

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

/*
 * "basedir=LIST," as the module reads it: the names joined by ':', with a
 * backslash before each ':' and backslash in a name (as cfs_basedirs_parse()
 * reads them back).
 */
static int basedir_option(char *opts, const struct cfs_basedirs *b)
{
	char *d = opts + strlen(opts);

	if (!b || !b->n)
		return 0;
	d = stpcpy(d, "basedir=");
	for (size_t i = 0; i < b->n; i++) {
		if (strchr(b->dirs[i], ',')) {
			cfs_msg("basedir '%s': a name holding ',' cannot be passed to mount(2)",
				b->dirs[i]);
			return -EINVAL;
		}
		if (i)
			*d++ = ':';
		for (const char *s = b->dirs[i]; *s; s++) {
			if (*s == ':' || *s == '\\')
				*d++ = '\\';
			*d++ = *s;
		}
	}
	strcpy(d, ",");
	return 0;
}

/*
 * The module opens @image itself, by its path: what it mounts is what it
 * checks against digest=, so a file swapped in after the caller opened @fd
 * is refused by the kernel, not mounted. The path, rather than @fd's
 * /proc/self/fd link, keeps the image's name in /proc/self/mountinfo.
 */
int cfs_v1_mount(int fd, const char *image, const char *mnt, const struct cfs_mount_options *o)
{
	size_t len = 128;
	int verity_check = o->verity_check;
	const char *hint;
	char *opts;
	int err;

	(void)fd;
	for (size_t i = 0; o->basedirs && i < o->basedirs->n; i++)
		len += 2 * strlen(o->basedirs->dirs[i]) + 1;
	opts = malloc(len);
	if (!opts) {
		cfs_msg("%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	opts[0] = '\0';
	err = basedir_option(opts, o->basedirs);
	if (err < 0) {
		free(opts);
		return err;
	}
	if (o->digest) {
		char hex[CFS_DIGEST_HEX_SIZE];

		cfs_digest_to_hex(o->digest, hex);
		snprintf(opts + strlen(opts), len - strlen(opts), "digest=%s,", hex);
	}
	/* Stricter than the module's default of 0: check every digest the
	 * image records unless told not to (with a digest the module's
	 * default, 2, is stricter still).
	 */
	if (verity_check < 0 && !o->digest)
		verity_check = 1;
	if (verity_check >= 0)
		snprintf(opts + strlen(opts), len - strlen(opts), "verity_check=%d,", verity_check);
	if (opts[0])
		opts[strlen(opts) - 1] = '\0'; /* the last comma */

	if (mount(image, mnt, "composefs", MS_RDONLY, opts) < 0) {
		err = errno;
		hint = mount_hint(err, o->digest != NULL);
		cfs_msg("mounting '%s' on '%s': %s%s%s", image, mnt, strerror(err),
			hint ? ": " : "", hint ? hint : "");
		free(opts);
		return -err;
	}
	free(opts);
	return o->userns_fd >= 0 ? cfs_mount_idmap(mnt, o) : 0;
}
