// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What the formats' mounts share (format/v1/mount.c, format/erofs/mount.c):
 * the kernel log quoted for a refused mount, loop devices, and idmapping a
 * mount in place. It calls no format, so the formats sit above it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "base/internal.h"
#include "mount-util.h"

int cfs_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The last kernel log line since cfs_kmsg_open(), without its prefix. */
static bool kmsg_last(int fd, char *buf, size_t size)
{
	char rec[1024];
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		char *msg, *nl;

		if (n <= 0)
			continue; /* EPIPE: records were overwritten */
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		snprintf(buf, size, "%s", msg);
		found = true;
	}
	return found;
}

void cfs_kmsg_skip(int fd)
{
	char buf[1];

	kmsg_last(fd, buf, sizeof(buf));
}

void cfs_mount_refused(const char *layer, const char *src, int kfd, int err)
{
	char msg[512];

	if (kmsg_last(kfd, msg, sizeof(msg)))
		cfs_msg("%s refused '%s': %s (kernel: %s)", layer, src, strerror(err), msg);
	else
		cfs_msg("%s refused '%s': %s", layer, src, strerror(err));
}

int cfs_loop_attach(int fd, char *dev, size_t size, int *loopfd)
{
	struct loop_config cfg = { 0 };
	int ctl, nr, lfd, r = 0;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	for (int tries = 0; tries < 8; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			r = -errno;
			break;
		}
		snprintf(dev, size, "/dev/loop%d", nr);
		lfd = open(dev, O_RDONLY | O_CLOEXEC);
		if (lfd < 0) {
			r = -errno;
			break;
		}
		cfg.fd = fd;
		cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) == 0) {
			*loopfd = lfd;
			r = 0;
			break;
		}
		r = -errno;
		close(lfd);
		if (r != -EBUSY) /* EBUSY: someone else took it first */
			break;
	}
	close(ctl);
	return r;
}

int cfs_mount_idmap(const char *mnt, const struct cfs_mount_options *o)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = o->userns_fd };
	const char *step = "cloning the mount";
	int tree, err = 0;

	tree = open_tree(AT_FDCWD, mnt, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		err = errno;
	/* The clone holds the filesystem now, or nothing does. */
	umount2(mnt, MNT_DETACH);
	if (!err) {
		step = "setting the idmap";
		if (mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
			err = errno;
	}
	if (!err) {
		step = "attaching the idmapped mount";
		if (move_mount(tree, "", AT_FDCWD, mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			err = errno;
	}
	if (tree >= 0)
		close(tree);
	if (err) {
		cfs_msg("idmap '%s' on '%s': %s: %s%s", o->userns, mnt, step, strerror(err),
			err == EINVAL ? " (the filesystem does not take idmapped mounts?)" : "");
		return -err;
	}
	return 0;
}
