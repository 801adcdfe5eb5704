// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of lib/store/index.c: entries added are found at once through
 * the same index and, once it is closed, through the next; the newest
 * entry of a sha256 wins; an index vouches only for the inode it was told
 * of; enough entries merge the log into the table, which is then found by
 * both keys; a damaged entry is skipped; and a store that is no
 * repository's has no index. The CLI tests (tests/cli/1600-1604) cover
 * migration, concurrent and killed writers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "store/index.h"

static void key(uint8_t k[32], unsigned int i, uint8_t tag)
{
	memset(k, 0, 32);
	k[0] = (uint8_t)(i * 37);
	k[1] = (uint8_t)(i >> 8);
	k[2] = (uint8_t)i;
	k[31] = tag;
}

static struct stat fake_stat(unsigned int i)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_ino = 1000 + i;
	st.st_size = 100 + i;
	st.st_ctim.tv_sec = 1700000000 + i;
	return st;
}

static struct cfs_index *open_index(int store_fd)
{
	struct cfs_index *ix = NULL;
	int r = cfs_index_open(store_fd, &ix);

	CHECK(r == 0 && ix, "cfs_index_open: %d", r);
	return ix;
}

/* Whether all @n entries are there, with their signatures. */
static int all_there(struct cfs_index *ix, unsigned int n)
{
	int missing = 0;

	for (unsigned int i = 0; i < n; i++) {
		uint8_t sha[32], dig[32], got[32];
		struct stat st = fake_stat(i);

		key(sha, i, 's');
		key(dig, i, 'd');
		missing += cfs_index_lookup(ix, sha, got) != 0 || memcmp(got, dig, 32) ||
			   !cfs_index_vouches(ix, dig, &st, sha);
	}
	return missing;
}

int main(void)
{
	char dir[] = "/tmp/cfs-index-test.XXXXXX", p[256];
	uint8_t sha[32], dig[32], other[32], got[32];
	struct cfs_index *ix;
	struct stat st, st2;
	int store_fd, fd;

	if (!mkdtemp(dir))
		return 1;
	snprintf(p, sizeof(p), "%s/objects", dir);
	mkdir(p, 0755);
	store_fd = open(p, O_RDONLY | O_DIRECTORY);
	/* no "images" beside "objects": no repository, no index */
	ix = (struct cfs_index *)1;
	CHECK(cfs_index_open(store_fd, &ix) == -ENOENT && !ix, "an index for a bare store");
	snprintf(p, sizeof(p), "%s/images", dir);
	mkdir(p, 0755);

	ix = open_index(store_fd);
	key(sha, 1, 's');
	key(dig, 1, 'd');
	st = fake_stat(1);
	CHECK(cfs_index_lookup(ix, sha, got) == -ENOENT, "an entry in an empty index");
	CHECK(cfs_index_add(ix, sha, dig, &st) == 0, "add");
	CHECK(cfs_index_lookup(ix, sha, got) == 0 && !memcmp(got, dig, 32), "an entry just added");
	CHECK(cfs_index_vouches(ix, dig, &st, sha), "no vouching for the inode told of");
	st2 = st;
	st2.st_ctim.tv_nsec++;
	CHECK(!cfs_index_vouches(ix, dig, &st2, sha), "vouching for an inode changed since");
	key(other, 2, 's');
	CHECK(!cfs_index_vouches(ix, dig, &st, other), "vouching for another sha256");
	CHECK(cfs_index_close(ix) == 0, "close");

	/* the next index sees it; a newer entry of the sha256 wins */
	ix = open_index(store_fd);
	CHECK(cfs_index_lookup(ix, sha, got) == 0 && !memcmp(got, dig, 32), "an entry of the log");
	CHECK(cfs_index_vouches(ix, dig, &st, sha), "the log's entry lost its signature");
	key(other, 9, 'd');
	CHECK(cfs_index_add(ix, sha, other, &st) == 0, "add");
	CHECK(cfs_index_close(ix) == 0, "close");
	ix = open_index(store_fd);
	CHECK(cfs_index_lookup(ix, sha, got) == 0 && !memcmp(got, other, 32), "not the newest entry");
	CHECK(!cfs_index_vouches(ix, dig, &st, sha), "vouching for an overridden entry");
	CHECK(cfs_index_add(ix, sha, dig, &st) == 0, "add");

	/* enough entries to merge: all found in the table by both keys */
	for (unsigned int i = 0; i < 3000; i++) {
		struct stat s = fake_stat(i);

		key(sha, i, 's');
		key(dig, i, 'd');
		CHECK(cfs_index_add(ix, sha, dig, &s) == 0, "add %u", i);
	}
	CHECK(cfs_index_close(ix) == 0, "close");
	snprintf(p, sizeof(p), "%s/index/log", dir);
	CHECK(stat(p, &st) == 0 && st.st_size == 0, "the log was not merged: %lld bytes",
	      (long long)st.st_size);
	ix = open_index(store_fd);
	CHECK(all_there(ix, 3000) == 0, "%d entries of the table missing", all_there(ix, 3000));
	cfs_index_close(ix);

	/* one entry damaged in the table: that one is not found, the others are */
	snprintf(p, sizeof(p), "%s/index/table", dir);
	fd = open(p, O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, "\xff", 1, 32 + 1024 + 80 * 1500 + 40) == 1, "damaging the table");
	if (fd >= 0)
		close(fd);
	ix = open_index(store_fd);
	CHECK(all_there(ix, 3000) == 1, "%d entries missing, not the one damaged", all_there(ix, 3000));
	cfs_index_close(ix);

	/* a table that is not one: ignored, and the index still opens */
	fd = open(p, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "cfsindex", 8) == 8, "truncating the table");
	if (fd >= 0)
		close(fd);
	ix = open_index(store_fd);
	CHECK(all_there(ix, 3000) == 3000, "entries found in a broken table");
	cfs_index_close(ix);
	CHECK(cfs_index_lookup(NULL, sha, got) == -ENOENT && cfs_index_close(NULL) == 0,
	      "no index");

	close(store_fd);
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	if (system(p) != 0)
		return 1;
	return check_exit("index");
}
