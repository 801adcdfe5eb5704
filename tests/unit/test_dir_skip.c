// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_dir_iter_skip() in both formats: a wide directory with one bad name
 * planted in the middle is listed as cfsctl tui lists it, going on past
 * each error. The listing must end, report the unit that failed (a v1
 * chunk, an EROFS block) once, give every other entry once and in order,
 * and lose only entries of the failed unit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "dump-image.h"
#include "base/internal.h"

#define N 600

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

static char *wide_dump(size_t *len)
{
	size_t cap = 64 + N * 96, n;
	char *d = malloc(cap);

	if (!d)
		return NULL;
	n = (size_t)snprintf(d, cap, "/ 4096 40755 3 0 0 0 0.0 - - -\n"
				     "/w 4096 40755 2 0 0 0 0.0 - - -\n");
	for (int i = 0; i < N; i++)
		n += (size_t)snprintf(d + n, cap - n,
				      "/w/n%04d-abcdefghijklmnopqrstuvwxyz 0 100644 1 0 0 0 0.0 - - -\n",
				      i);
	*len = n;
	return d;
}

static void run(enum cfs_image_format format, const char *what)
{
	size_t dlen = 0, len;
	char *dump = wide_dump(&dlen), *name;
	int fd = memfd_create("img", 0), seen[N] = { 0 }, errors = 0, got = 0, dups = 0, calls;
	uint8_t *data;
	struct cfs_image *img;
	struct cfs_inode dir;
	struct cfs_dir_iter it;
	struct cfs_dirent e;
	char prev[64] = "";
	bool sorted = true;
	off_t size;

	CHECK(dump && fd >= 0, "%s: setup", what);
	if (!dump || fd < 0)
		return;
	CHECK(dump_image(dump, dlen, format, fd) == 0, "%s: build", what);
	free(dump);
	size = lseek(fd, 0, SEEK_END);
	len = size > 0 ? (size_t)size : 0;
	data = malloc(len + 1);
	CHECK(data && pread(fd, data, len, 0) == size, "%s: read back", what);
	close(fd);
	if (!data)
		return;

	/* A '/' inside one name in the middle of the directory. */
	name = memmem(data, len, "n0300-abcdefghijklmnopqrstuvwxyz", 32);
	CHECK(name != NULL, "%s: the name is in the image", what);
	if (!name)
		goto out;
	name[10] = '/';

	CHECK(cfs_image_open_mem(data, len, &img) == 0, "%s: open", what);
	CHECK(cfs_image_resolve(img, "/w", &dir) == 0, "%s: resolve /w", what);
	CHECK(cfs_dir_iter_init(img, &dir, &it) == 0, "%s: iter init", what);
	for (calls = 0; calls < 4 * N; calls++) {
		int ret = cfs_dir_iter_next(&it, &e);
		char buf[64];
		int i;

		if (ret == 0)
			break;
		if (ret < 0) {
			errors++;
			cfs_dir_iter_skip(&it);
			continue;
		}
		snprintf(buf, sizeof(buf), "%.*s", (int)e.name_len, e.name);
		if (strcmp(prev, buf) >= 0)
			sorted = false;
		strcpy(prev, buf);
		if (sscanf(buf, "n%4d-", &i) == 1 && i >= 0 && i < N) {
			if (seen[i]++)
				dups++;
			got++;
		}
	}
	CHECK(calls < 4 * N, "%s: the listing ends", what);
	CHECK(errors == 1, "%s: %d errors, not one", what, errors);
	CHECK(dups == 0, "%s: %d entries listed twice", what, dups);
	CHECK(sorted, "%s: entries out of order", what);
	CHECK(!seen[300], "%s: the bad entry listed", what);
	CHECK(got > N / 2 && got < N, "%s: %d of %d entries listed", what, got, N);
	/* What is lost is one unit around the bad name: a run with no gap. */
	for (int i = 0, state = 0; i < N; i++) {
		if (state == 0 && !seen[i])
			state = 1;
		else if (state == 1 && seen[i])
			state = 2;
		else if (state == 2 && !seen[i])
			CHECK(0, "%s: entry %d lost outside the failed unit", what, i);
	}
	printf("%s: %d of %d entries listed past one error\n", what, got, N);
	cfs_image_close(img);
out:
	free(data);
}

int main(void)
{
	cfs_set_message_handler(on_msg, NULL);
	run(CFS_FORMAT_V1, "v1");
	run(CFS_FORMAT_EROFS, "erofs");
	return check_exit("directory skip");
}
