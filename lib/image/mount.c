// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mounting an image: the front end picks the format by the image's
 * magic, as the reader does, and calls its mount (what the formats'
 * mounts share is in mount-util.c). The image is opened once: its
 * format is probed, and it is measured and mounted, through that one open
 * file (cfs_image_mount_fd()).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "base/internal.h"

/* The format of the open image @fd, by its magic: 0, or -errno. */
static int probe_fd(int fd, const struct cfs_format **out)
{
	uint8_t b[4];
	ssize_t n = pread(fd, b, sizeof(b), 0);

	if (n < 0)
		return -errno;
	*out = cfs_format_probe(b, (uint64_t)n);
	return 0;
}

static int probe(const char *path, const struct cfs_format **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = probe_fd(fd, out);
	close(fd);
	return ret;
}

int cfs_image_mount_caps(const char *path, struct cfs_mount_caps *caps)
{
	const struct cfs_format *f = NULL;
	int ret = probe(path, &f);

	if (ret == 0)
		*caps = f->mount_caps;
	return ret;
}

int cfs_image_mount_fd(int fd, const char *image, const char *mnt,
		       const struct cfs_mount_options *o)
{
	const struct cfs_format *f = NULL;
	struct stat st;
	int ret;

	if (!cfs_reserved_ok(o->reserved, sizeof(o->reserved), "mount options"))
		return -EINVAL;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		cfs_msg("opening '%s': %s", image, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		cfs_msg("'%s': not a regular file or a block device", image);
		return -EINVAL;
	}
	ret = probe_fd(fd, &f);
	if (ret < 0) {
		cfs_msg("reading '%s': %s", image, strerror(-ret));
		return ret;
	}
	if (((o->upperdir || o->workdir) && !f->mount_caps.upper) ||
	    (o->verity_check >= 0 && !f->mount_caps.verity_check)) {
		cfs_msg("'%s': a %s image takes no %s", image, f->mount_caps.format,
			o->upperdir || o->workdir ? "upper directory" : "verity_check");
		return -EINVAL;
	}
	return f->mount(fd, image, mnt, o);
}

int cfs_image_mount(const char *image, const char *mnt, const struct cfs_mount_options *o)
{
	int fd = open(image, O_RDONLY | O_CLOEXEC | O_NOCTTY), ret;

	if (fd < 0) {
		ret = -errno;
		cfs_msg("opening '%s': %s", image, strerror(-ret));
		return ret;
	}
	ret = cfs_image_mount_fd(fd, image, mnt, o);
	close(fd);
	return ret;
}
