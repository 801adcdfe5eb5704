// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of cfs_tree_commit() (lib/store/commit.c), called as a program
 * outside cfsctl would: a tree's image at a path, with its objects in a
 * digest store and its digest that of the file; the same tree under a name
 * of a repository; the guard bracket balanced and the pending file told
 * and then cleared; and three failures (the caller's before_publish, a bad
 * name, a path in no directory) that leave no image, no name, no object and
 * no temporary. Also cfs_tmpfile(), which the seal, push and zstd:chunked
 * use: an unnamed 0600 file, and a message naming the directory that has
 * none. The CLI tests (1507, 1501, 8001, 8002) cover the verbs and signals.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"
#include "cfs/build.h"
#include "cfs/repo.h"
#include "check.h"

static char messages[8192];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(messages + strlen(messages), sizeof(messages) - strlen(messages), "%s\n", msg);
}

static char top[256];

static void put(const char *rel, const char *text, size_t len)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	f = fopen(p, "w");
	CHECK(f != NULL, "fopen %s", p);
	if (!f)
		return;
	for (size_t i = 0; i < len; i++)
		fputc(text[i % strlen(text)], f);
	fclose(f);
}

/* Files under @rel (recursively), not counting directories. */
static unsigned int count_files(const char *rel)
{
	char p[1400];
	unsigned int n = 0;
	struct dirent *e;
	DIR *d;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	d = opendir(p);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char sub[600];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", rel, e->d_name);
		snprintf(p, sizeof(p), "%s/%s", top, sub);
		if (lstat(p, &st))
			continue;
		n += S_ISDIR(st.st_mode) ? count_files(sub) : 1;
	}
	closedir(d);
	return n;
}

struct calls {
	int depth, max_depth, pendings;
	char last[512];
};

static void guard(void *ctx, bool on)
{
	struct calls *c = ctx;

	c->depth += on ? 1 : -1;
	if (c->depth > c->max_depth)
		c->max_depth = c->depth;
}

static void pending(void *ctx, const char *path)
{
	struct calls *c = ctx;

	c->pendings++;
	snprintf(c->last, sizeof(c->last), "%s", path ? path : "");
}

static int refuse(void *ctx, struct cfs_node *root)
{
	(void)ctx;
	(void)root;
	return -EIO;
}

static struct cfs_node *tree(struct cfs_build_options *o)
{
	char src[512];
	struct cfs_node *root = NULL;
	int r;

	snprintf(src, sizeof(src), "%s/src", top);
	r = cfs_tree_from_dir(src, o, &root);
	CHECK(r == 0, "tree_from_dir: %d %s", r, messages);
	return root;
}

static void test_tmpfile(void)
{
	char p[512];
	struct stat st;
	int fd;

	fd = cfs_tmpfile(-1, top);
	CHECK(fd >= 0, "tmpfile in %s: %d", top, fd);
	if (fd >= 0) {
		CHECK(fstat(fd, &st) == 0 && st.st_nlink == 0, "the temporary has no name");
		CHECK((st.st_mode & 07777) == 0600, "mode %o", st.st_mode & 07777);
		close(fd);
	}
	CHECK(count_files("") == 0, "nothing left in %s", top);
	snprintf(p, sizeof(p), "%s/none", top);
	messages[0] = '\0';
	fd = cfs_tmpfile(-1, p);
	CHECK(fd == -ENOENT, "tmpfile in a missing directory: %d", fd);
	CHECK(strstr(messages, p) != NULL, "the message names '%s': %s", p, messages);
}

int main(void)
{
	struct cfs_build_options o = { .format = CFS_FORMAT_V1, .threads = 1 };
	struct cfs_image_target t;
	struct cfs_repo *repo = NULL;
	struct calls c = { 0 };
	uint8_t want[CFS_DIGEST_SIZE], got[CFS_DIGEST_SIZE];
	char store[512], img[512], rp[512];
	struct cfs_node *root;
	unsigned int objects;
	int fd, r;

	cfs_set_message_handler(on_msg, NULL);
	snprintf(top, sizeof(top), "%s/cfs-commit-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	test_tmpfile();

	snprintf(store, sizeof(store), "%s/store", top);
	snprintf(img, sizeof(img), "%s/out.img", top);
	snprintf(rp, sizeof(rp), "%s/src", top);
	CHECK(mkdir(rp, 0755) == 0 && mkdir(store, 0755) == 0, "mkdir");
	snprintf(rp, sizeof(rp), "%s/src/sub", top);
	CHECK(mkdir(rp, 0755) == 0, "mkdir");
	put("src/a", "hello", 5);
	put("src/b", "0123456789", 10000);
	put("src/sub/c", "xyz", 70000);

	/* an image at a path, its objects in a digest store */
	o.digest_store = store;
	root = tree(&o);
	t = (struct cfs_image_target){ .path = img, .format = CFS_FORMAT_V1, .want_digest = true,
				       .guard = guard, .pending = pending, .ctx = &c };
	r = cfs_tree_commit(root, &o, &t);
	cfs_tree_free(root);
	CHECK(r == 0, "commit to a path: %d %s", r, messages);
	fd = open(img, O_RDONLY);
	CHECK(fd >= 0, "the image %s", img);
	if (fd >= 0) {
		CHECK(cfs_verity_digest_fd(fd, want) == 0, "digest");
		CHECK(memcmp(want, t.digest, CFS_DIGEST_SIZE) == 0, "t.digest is the image's");
		close(fd);
	}
	objects = count_files("store");
	CHECK(objects == 3, "3 objects in the store, not %u", objects);
	CHECK(c.depth == 0 && c.max_depth == 1, "guard: depth %d, deepest %d", c.depth,
	      c.max_depth);
	CHECK(c.pendings >= 2 && c.last[0] == '\0', "pending told %d times, last '%s'", c.pendings,
	      c.last);
	CHECK(count_files("") == 1 + objects + 3, "only the image, the objects and the sources");

	/* the same tree into a repository, under a name */
	snprintf(rp, sizeof(rp), "%s/repo", top);
	r = cfs_repo_open(rp, true, &repo);
	CHECK(r == 0, "repo_open: %d %s", r, messages);
	if (!repo)
		return check_exit("commit");
	o.digest_store = cfs_repo_objects(repo);
	root = tree(&o);
	t = (struct cfs_image_target){ .repo = repo, .name = "apps/one", .origin = "a test",
				       .format = CFS_FORMAT_V1 };
	r = cfs_tree_commit(root, &o, &t);
	cfs_tree_free(root);
	CHECK(r == 0, "commit to a repository: %d %s", r, messages);
	CHECK(memcmp(want, t.digest, CFS_DIGEST_SIZE) == 0, "the same image as at the path");
	r = cfs_repo_resolve(repo, "apps/one", got, NULL);
	CHECK(r == 0 && memcmp(got, want, CFS_DIGEST_SIZE) == 0, "apps/one names it: %d", r);
	objects = count_files("repo/objects");

	/* failures leave nothing: the caller's check, a bad name, no directory */
	put("src/new", "not yet stored", 9000);
	o.before_publish = refuse;
	root = tree(&o);
	t = (struct cfs_image_target){ .repo = repo, .name = "apps/two", .format = CFS_FORMAT_V1 };
	r = cfs_tree_commit(root, &o, &t);
	cfs_tree_free(root);
	CHECK(r == -EIO, "before_publish's error comes back: %d", r);
	CHECK(cfs_repo_resolve(repo, "apps/two", got, NULL) == -ENOENT, "no name apps/two");
	o.before_publish = NULL;

	messages[0] = '\0';
	root = tree(&o);
	t = (struct cfs_image_target){ .repo = repo, .name = "apps/../x", .format = CFS_FORMAT_V1 };
	r = cfs_tree_commit(root, &o, &t);
	cfs_tree_free(root);
	CHECK(r == -EINVAL, "a bad name is refused: %d", r);
	CHECK(strstr(messages, "apps/../x") != NULL, "the message names it: %s", messages);

	o.digest_store = store;
	root = tree(&o);
	snprintf(img, sizeof(img), "%s/no/such/dir/out.img", top);
	t = (struct cfs_image_target){ .path = img, .format = CFS_FORMAT_V1 };
	r = cfs_tree_commit(root, &o, &t);
	cfs_tree_free(root);
	CHECK(r < 0, "a path in no directory fails: %d", r);
	CHECK(count_files("store") == 3, "no new object in the store: %u", count_files("store"));
	CHECK(count_files("repo/objects") == objects, "no new object in the repository: %u, was %u",
	      count_files("repo/objects"), objects);
	cfs_repo_close(repo);
	CHECK(count_files("repo/images") == count_files("repo/images/refs") + 1 +
						 count_files("repo/images/origins"),
	      "one image in the repository, no temporary");

	if (!failures) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", top);
	}
	return check_exit("commit");
}
