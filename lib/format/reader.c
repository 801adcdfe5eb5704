// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The image reader's front end: it maps a descriptor, recognises its format
 * by its magic and hands every call to that format's reader through the
 * format's table (struct cfs_format, format.h). What
 * does not depend on the format lives here: opening and closing, the
 * accessors, path resolution, and lookup by a scan of the entries for a
 * format that has no faster one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "reader.h"
#include "cfs-format.h"

/* Undo cfs_image_open_mem() but for the mapping. */
static void release(struct cfs_image *img)
{
	if (img->format->close)
		img->format->close(img);
	pthread_mutex_destroy(&img->keys_lock);
	free(img);
}

int cfs_image_open_mem(const void *data, size_t len, struct cfs_image **out)
{
	struct cfs_image *img;
	int ret;

	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	pthread_mutex_init(&img->keys_lock, NULL);
	img->data = data;
	img->size = len;
	img->format = cfs_format_probe(data, len);
	ret = img->format->open(img);
	if (ret < 0) {
		release(img);
		return ret;
	}
	*out = img;
	return 0;
}

void cfs_image_set_view(struct cfs_image *img, enum cfs_image_view view)
{
	img->view = view;
}

int cfs_image_map(const char *path, void **map, size_t *size)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto err;
	}
	if (!S_ISREG(st.st_mode)) {
		cfs_msg("not a regular file");
		ret = -EINVAL;
		goto err;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		cfs_msg("image is too large to map");
		ret = -EFBIG;
		goto err;
	}
	*size = (size_t)st.st_size;
	*map = NULL;
	if (*size == 0)
		return fd;
	*map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (*map == MAP_FAILED) {
		ret = -errno;
		goto err;
	}
	return fd;
err:
	close(fd);
	return ret;
}

int cfs_image_open(const char *path, struct cfs_image **out)
{
	struct cfs_image *img = NULL;
	size_t size;
	void *map;
	int fd, ret;

	fd = cfs_image_map(path, &map, &size);
	if (fd < 0)
		return fd;
	close(fd);
	if (size == 0) {
		cfs_msg("image is empty");
		return -EFSCORRUPTED;
	}
	ret = cfs_image_open_mem(map, size, &img);
	if (ret < 0) {
		munmap(map, size);
		return ret;
	}
	img->map_len = size;
	*out = img;
	return 0;
}

void cfs_image_close(struct cfs_image *img)
{
	if (!img)
		return;
	if (img->map_len)
		munmap((void *)img->data, img->map_len);
	release(img);
}

uint64_t cfs_image_root(const struct cfs_image *img)
{
	return img->root;
}

uint64_t cfs_image_size(const struct cfs_image *img)
{
	return img->size;
}

unsigned int cfs_image_version(const struct cfs_image *img)
{
	return img->version;
}

void cfs_image_describe(const struct cfs_image *img, struct cfs_image_desc *d)
{
	memset(d, 0, sizeof(*d));
	img->format->describe(img, d);
}

void cfs_inode_describe(const struct cfs_image *img, const struct cfs_inode *in,
			struct cfs_inode_desc *d)
{
	memset(d, 0, sizeof(*d));
	img->format->inode_describe(img, in, d);
}

int cfs_image_read(struct cfs_image *img, const struct cfs_inode *in, uint64_t off, void *buf,
		   size_t len)
{
	if (!img->format->read)
		return -EINVAL;
	return img->format->read(img, in, off, buf, len);
}

bool cfs_inode_content_in_image(const struct cfs_image *img, const struct cfs_inode *in)
{
	return img->format->content_in_image && img->format->content_in_image(in);
}

int cfs_image_inode(struct cfs_image *img, uint64_t ino, struct cfs_inode *out)
{
	return img->format->inode(img, ino, out);
}

/* ---- directories ---- */

int cfs_dir_iter_init(struct cfs_image *img, const struct cfs_inode *dir, struct cfs_dir_iter *it)
{
	memset(it, 0, sizeof(*it));
	if ((dir->mode & S_IFMT) != S_IFDIR)
		return -ENOTDIR;
	it->img = img;
	it->dir_ino = dir->ino;
	return img->format->dir_iter_init(img, dir, it);
}

int cfs_dir_iter_next(struct cfs_dir_iter *it, struct cfs_dirent *out)
{
	if (!it->img)
		return 0; /* cfs_dir_iter_init() refused the directory */
	return it->img->format->dir_iter_next(it, out);
}

void cfs_dir_iter_skip(struct cfs_dir_iter *it)
{
	if (it->img)
		it->img->format->dir_iter_skip(it);
}

/* Lookup by reading the entries in order, which checks the order on the way. */
static int lookup_scan(struct cfs_image *img, const struct cfs_inode *dir, const char *name,
		       size_t name_len, uint64_t *ino)
{
	struct cfs_dir_iter it;
	struct cfs_dirent d;
	int ret, cmp;

	ret = cfs_dir_iter_init(img, dir, &it);
	if (ret < 0)
		return ret;
	while ((ret = cfs_dir_iter_next(&it, &d)) == 1) {
		cmp = cfs_name_cmp(name, name_len, d.name, d.name_len);
		if (cmp == 0) {
			*ino = d.ino;
			return 0;
		}
		if (cmp < 0)
			return -ENOENT;
	}
	return ret < 0 ? ret : -ENOENT;
}

int cfs_image_lookup(struct cfs_image *img, const struct cfs_inode *dir, const char *name,
		     size_t name_len, uint64_t *ino)
{
	if ((dir->mode & S_IFMT) != S_IFDIR)
		return -ENOTDIR;
	if (!img->format->lookup)
		return lookup_scan(img, dir, name, name_len, ino);
	return img->format->lookup(img, dir, name, name_len, ino);
}

int cfs_image_resolve(struct cfs_image *img, const char *path, struct cfs_inode *out)
{
	struct cfs_inode cur;
	const char *p = path;
	int ret;

	ret = cfs_image_inode(img, img->root, &cur);
	if (ret < 0)
		return ret;
	for (;;) {
		const char *end;
		size_t len;
		uint64_t ino;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchr(p, '/');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len == 1 && p[0] == '.') {
			p += len;
			continue;
		}
		if ((cur.mode & S_IFMT) != S_IFDIR)
			return -ENOTDIR;
		ret = cfs_image_lookup(img, &cur, p, len, &ino);
		if (ret < 0)
			return ret;
		ret = cfs_image_inode(img, ino, &cur);
		if (ret < 0)
			return ret;
		p += len;
	}
	*out = cur;
	return 0;
}

/* ---- xattrs ---- */

int cfs_image_xattrs(struct cfs_image *img, const struct cfs_inode *inode, cfs_xattr_fn fn,
		     void *ctx)
{
	return img->format->xattrs(img, inode, fn, ctx);
}
