// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mounting a composefs 1.0 (EROFS) image as composefs 1.0's mount.composefs
 * does on a stock kernel: the image read-only as erofs on a private
 * directory (the file itself, or a loop device where erofs cannot mount a
 * file), overlayfs on top with the basedirs as data-only lower layers,
 * then the erofs mount detached so only the mount point remains.
 *
 * overlayfs takes no digest of the image: it is checked here, before
 * anything is mounted, on the open file that is then mounted. An overlayfs mount cannot be idmapped, but its
 * layers can: the erofs layer, which holds every owner, is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <fcntl.h>

#include "cfs/build.h"
#include "cfs/mount.h"
#include "erofs.h"
#include "format/mount-util.h"

/* Append @path to @out escaped for overlayfs's lowerdir (',' ':' '\'). */
static void ovl_escape(char *out, const char *path, size_t len)
{
	size_t n = strlen(out);

	for (; *path && n + 2 < len; path++) {
		if (*path == ',' || *path == ':' || *path == '\\')
			out[n++] = '\\';
		out[n++] = *path;
	}
	out[n] = '\0';
}

/* Is the fs-verity digest of @fd (named @image) @want? 0, or -errno with a message. */
static int check_digest(int fd, const char *image, const uint8_t *want)
{
	uint8_t got[CFS_DIGEST_SIZE];
	char ghex[CFS_DIGEST_HEX_SIZE], whex[CFS_DIGEST_HEX_SIZE];
	int r = cfs_verity_measure_fd(fd, got);

	if (r < 0) {
		cfs_msg("measuring '%s': %s", image,
			r == -ENODATA ? "fs-verity is not enabled on the image" : strerror(-r));
		return r;
	}
	if (memcmp(got, want, sizeof(got)) != 0) {
		cfs_digest_to_hex(got, ghex);
		cfs_digest_to_hex(want, whex);
		cfs_msg("'%s' has fs-verity digest %s, not %s", image, ghex, whex);
		return -EIO;
	}
	return 0;
}

/*
 * The image is measured through @fd and mounted through @fd: erofs is
 * given /proc/self/fd/N, a link to the open file itself that no rename of
 * @image's name can redirect, or where erofs cannot mount a file (or /proc
 * is not there), a loop device configured from @fd. @image is never looked
 * up again, so a file swapped in under its name after the measurement is
 * not what is mounted.
 */
int cfs_erofs_mount(int fd, const char *image, const char *mnt,
		    const struct cfs_mount_options *o)
{
	char tmp[] = "/tmp/cfs-erofs.XXXXXX", dev[64], src[32], *opts = NULL;
	size_t len, n_dirs = o->basedirs ? o->basedirs->n : 0;
	int kfd, loopfd = -1, ret;

	if (o->digest) {
		ret = check_digest(fd, image, o->digest);
		if (ret < 0)
			return ret;
	}
	if (!mkdtemp(tmp)) {
		ret = -errno;
		cfs_msg("creating '%s': %s", tmp, strerror(-ret));
		return ret;
	}
	kfd = cfs_kmsg_open();
	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	if (mount(src, tmp, "erofs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
		int err = errno;

		/* Not an erofs that reads files: through a loop device. */
		ret = cfs_loop_attach(fd, dev, sizeof(dev), &loopfd);
		if (ret < 0) {
			cfs_mount_refused("erofs", image, kfd, err);
			cfs_msg("no loop device for '%s' either: %s", image, strerror(-ret));
			goto out_rmdir;
		}
		cfs_kmsg_skip(kfd); /* what the first try logged */
		if (mount(dev, tmp, "erofs", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL) < 0) {
			ret = -errno;
			cfs_mount_refused("erofs", dev, kfd, -ret);
			goto out_rmdir;
		}
	}
	if (o->userns_fd >= 0) {
		ret = cfs_mount_idmap(tmp, o);
		if (ret < 0)
			goto out_rmdir;
	}

	len = 3 * (strlen(tmp) + (o->upperdir ? strlen(o->upperdir) : 0) +
		   (o->workdir ? strlen(o->workdir) : 0)) + 256;
	for (size_t i = 0; i < n_dirs; i++)
		len += 3 * strlen(o->basedirs->dirs[i]) + 2;
	opts = malloc(len);
	if (!opts) {
		ret = -ENOMEM;
		cfs_msg("%s", strerror(ENOMEM));
		goto out_umount;
	}
	strcpy(opts, "lowerdir=");
	ovl_escape(opts, tmp, len);
	/* The basedirs, as data-only layers: "::DIR" each. */
	for (size_t i = 0; i < n_dirs; i++) {
		strcat(opts, "::");
		ovl_escape(opts, o->basedirs->dirs[i], len);
	}
	strcat(opts, ",metacopy=on,redirect_dir=on");
	if (o->digest)
		strcat(opts, ",verity=require");
	if (o->upperdir) {
		strcat(opts, ",upperdir=");
		ovl_escape(opts, o->upperdir, len);
		strcat(opts, ",workdir=");
		ovl_escape(opts, o->workdir, len);
	}
	cfs_kmsg_skip(kfd);
	if (mount("composefs", mnt, "overlay", o->upperdir ? 0 : MS_RDONLY, opts) < 0) {
		ret = -errno;
		cfs_mount_refused("overlayfs", image, kfd, -ret);
		goto out_umount;
	}
	ret = 0;
out_umount:
	/* overlayfs holds the erofs mount now (or nobody needs it). */
	umount2(tmp, MNT_DETACH);
out_rmdir:
	if (loopfd >= 0)
		close(loopfd);
	rmdir(tmp);
	if (kfd >= 0)
		close(kfd);
	free(opts);
	return ret;
}
