// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mounting an image: the front end picks the format by the image's
 * magic, as the reader does, and calls its mount (what the formats'
 * mounts share is in mount-util.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "base/internal.h"

static int probe(const char *path, const struct cfs_format **out)
{
	uint8_t b[4];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, b, sizeof(b), 0);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	*out = cfs_format_probe(b, (uint64_t)n);
	return 0;
}

int cfs_image_mount_caps(const char *path, struct cfs_mount_caps *caps)
{
	const struct cfs_format *f;
	int ret = probe(path, &f);

	if (ret == 0)
		*caps = f->mount_caps;
	return ret;
}

int cfs_image_mount(const char *image, const char *mnt, const struct cfs_mount_options *o)
{
	const struct cfs_format *f;
	int ret = probe(image, &f);

	if (ret < 0) {
		cfs_msg("opening '%s': %s", image, strerror(-ret));
		return ret;
	}
	if (((o->upperdir || o->workdir) && !f->mount_caps.upper) ||
	    (o->verity_check >= 0 && !f->mount_caps.verity_check)) {
		cfs_msg("'%s': a %s image takes no %s", image, f->mount_caps.format,
			o->upperdir || o->workdir ? "upper directory" : "verity_check");
		return -EINVAL;
	}
	return f->mount(image, mnt, o);
}
