// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fs-verity digests: computed in userspace with libfsverity, measured from
 * and enabled in the kernel with the FS_IOC_* ioctls. Always sha256 with
 * 4096-byte blocks and no salt, the parameters composefs images assume.
 */
#include <errno.h>
#include <libfsverity.h>
#include <linux/fsverity.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libcfs.h"

struct read_ctx {
	int fd;
	uint64_t pos;
};

static int read_fd(void *opaque, void *buf, size_t count)
{
	struct read_ctx *rc = opaque;

	while (count > 0) {
		ssize_t n = pread(rc->fd, buf, count, (off_t)rc->pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* the file shrank under us */
		buf = (char *)buf + n;
		count -= (size_t)n;
		rc->pos += (uint64_t)n;
	}
	return 0;
}

int cfs_verity_digest_stream(void *ctx, int (*read)(void *ctx, void *buf, size_t count),
			     uint64_t size, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct libfsverity_merkle_tree_params params = { 0 };
	struct libfsverity_digest *d = NULL;
	int ret;

	params.version = 1;
	params.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	params.block_size = 4096;
	params.file_size = size;
	ret = libfsverity_compute_digest(ctx, read, &params, &d);
	if (ret < 0)
		return ret;
	if (d->digest_size != CFS_DIGEST_SIZE) {
		free(d);
		return -EINVAL;
	}
	memcpy(digest, d->digest, CFS_DIGEST_SIZE);
	free(d);
	return 0;
}

int cfs_verity_digest_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct read_ctx rc = { .fd = fd, .pos = 0 };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return cfs_verity_digest_stream(&rc, read_fd, (uint64_t)st.st_size, digest);
}

int cfs_verity_measure_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct {
		struct fsverity_digest d;
		uint8_t buf[64];
	} m = { .d.digest_size = 64 };

	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m.d) < 0) {
		if (errno == ENOTTY)
			return -EOPNOTSUPP;
		return -errno;
	}
	if (m.d.digest_algorithm != FS_VERITY_HASH_ALG_SHA256 ||
	    m.d.digest_size != CFS_DIGEST_SIZE)
		return -EINVAL; /* verity with other parameters than ours */
	memcpy(digest, m.d.digest, CFS_DIGEST_SIZE);
	return 0;
}

int cfs_verity_enable_fd(int fd)
{
	struct libfsverity_merkle_tree_params params = { 0 };
	int ret;

	params.version = 1;
	params.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	params.block_size = 4096;
	ret = libfsverity_enable(fd, &params);
	if (ret == -ENOTTY || ret == -EINVAL)
		return -EOPNOTSUPP;
	return ret;
}

struct read_mem {
	const uint8_t *p;
	size_t left;
};

static int read_mem(void *opaque, void *buf, size_t count)
{
	struct read_mem *rm = opaque;

	if (count > rm->left)
		return -EIO;
	memcpy(buf, rm->p, count);
	rm->p += count;
	rm->left -= count;
	return 0;
}

int cfs_verity_digest_mem(const void *buf, size_t len, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct read_mem rm = { buf, len };

	return cfs_verity_digest_stream(&rm, read_mem, len, digest);
}
