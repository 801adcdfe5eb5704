// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_verify_image() on a small composefs 1.0 (EROFS) image and on every
 * damaged copy of it: the image cut at every length, and every byte
 * replaced by its complement and, where it is not 0, by itself plus one. The intact image has
 * no problem at all; every cut one has an error; no copy makes the check
 * fail to run or crash (the sanitizer build runs this too); and whatever
 * the reader refuses to read, verify calls an error. In process, since
 * that is some 35,000 checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "dump-image.h"
#include "cfs/verify.h"

/* Every kind of inode and xattr, a hardlink, inline and external files, a whiteout. */
static const char dump[] =
	"/ 4096 40755 4 0 0 0 0.0 - - - user.top=1\n"
	"/a 100 100644 2 1 2 0 5.7 - - 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff user.x=yz trusted.overlay.keep=1\n"
	"/b 5 100600 1 0 0 0 0.0 - hello -\n"
	"/d 4096 40700 2 7 7 0 0.0 - - - security.selinux=system_u:object_r:x\n"
	"/d/c 0 20644 1 0 0 259 0.0 - - -\n"
	"/d/h 100 @100644 2 1 2 0 5.7 /a - -\n"
	"/d/l 3 120777 1 0 0 0 0.0 ../b - -\n"
	"/d/p 0 10644 1 0 0 0 0.0 - - -\n"
	"/d/w 0 20000 1 0 0 0 0.0 - - -\n"
	"/e 4096 40755 2 0 0 0 0.0 - - - user.x=yz\n"
	"/e/big 9000 100644 1 0 0 0 0.0 fe/dcba98765432100123456789abcdeffedcba98765432100123456789abcdef - fedcba98765432100123456789abcdeffedcba98765432100123456789abcdef\n";

struct count {
	uint64_t errors;
};

static int build(uint8_t **out, size_t *len)
{
	int fd = memfd_create("img", 0), ret;
	off_t size;

	if (fd < 0)
		return -errno;
	ret = dump_image(dump, sizeof(dump) - 1, CFS_FORMAT_EROFS, fd);
	if (ret < 0)
		return ret;
	size = lseek(fd, 0, SEEK_END);
	*out = malloc((size_t)size);
	if (!*out || pread(fd, *out, (size_t)size, 0) != size)
		return -EIO;
	*len = (size_t)size;
	close(fd);
	return 0;
}

/* Does the reader read all of it (every inode, entry and xattr)? */
static bool reads(const uint8_t *data, size_t len)
{
	struct cfs_image *img;
	FILE *null;
	bool ok;

	if (cfs_image_open_mem(data, len, &img) < 0)
		return false;
	null = fopen("/dev/null", "w");
	ok = null && cfs_image_write_dump(img, null) == 0;
	if (null)
		fclose(null);
	cfs_image_close(img);
	return ok;
}

static int set(int fd, const uint8_t *data, size_t len)
{
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, len, 0) != (ssize_t)len)
		return -errno;
	return 0;
}

static void run(int fd, const char *path, const uint8_t *data, size_t len, const char *what,
		size_t at, bool cut, unsigned int *flagged)
{
	struct cfs_verify_result r;
	int ret;

	CHECK(set(fd, data, len) == 0, "writing the %s copy at %zu", what, at);
	ret = cfs_verify_image(path, NULL, NULL, NULL, &r);
	CHECK(ret == 0, "%s at %zu: the check did not run: %s", what, at, strerror(-ret));
	if (ret)
		return;
	if (r.errors)
		(*flagged)++;
	if (cut)
		CHECK(r.errors > 0, "cut at %zu: no error", at);
	else if (!reads(data, len))
		CHECK(r.errors > 0, "%s at %zu: the reader refuses it, verify finds no error", what, at);
}

int main(void)
{
	struct cfs_verify_result r;
	unsigned int cut = 0, flipped = 0, n_flips = 0;
	uint8_t *img = NULL, *copy;
	char path[64];
	size_t len = 0;
	int fd, ret;

	ret = build(&img, &len);
	CHECK(ret == 0, "building the image: %s", strerror(-ret));
	if (ret)
		return check_exit("verify-erofs");
	copy = malloc(len);
	fd = memfd_create("variant", 0);
	CHECK(copy && fd >= 0, "memfd: %s", strerror(errno));
	if (!copy || fd < 0)
		return check_exit("verify-erofs");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	CHECK(set(fd, img, len) == 0, "writing the image");
	ret = cfs_verify_image(path, NULL, NULL, NULL, &r);
	CHECK(ret == 0 && r.errors == 0 && r.warnings == 0,
	      "the intact image: ret %d, %llu errors, %llu warnings", ret,
	      (unsigned long long)r.errors, (unsigned long long)r.warnings);
	CHECK(r.directories == 3 && r.entries == 10 + 256,
	      "the intact image: %llu directories, %llu entries",
	      (unsigned long long)r.directories, (unsigned long long)r.entries);

	for (size_t n = 0; n < len; n++)
		run(fd, path, img, n, "cut", n, true, &cut);
	for (size_t n = 0; n < len; n++) {
		uint8_t with[2] = { (uint8_t)~img[n], (uint8_t)(img[n] + 1) };

		for (int k = 0; k < (img[n] ? 2 : 1); k++) {
			memcpy(copy, img, len);
			copy[n] = with[k];
			run(fd, path, copy, len, k ? "plus one" : "complement", n, false, &flipped);
			n_flips++;
		}
	}
	CHECK(cut == len, "%u of %zu cuts flagged", cut, len);
	/* Most bytes are padding or block maps no one reads; but not all are. */
	CHECK(flipped > 500, "only %u of %u changed bytes flagged", flipped, n_flips);
	printf("%zu-byte image: %u cuts and %u changed bytes checked, %u of these with errors\n",
	       len, cut, n_flips, flipped);
	close(fd);
	free(copy);
	free(img);
	return check_exit("verify-erofs");
}
