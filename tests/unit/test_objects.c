// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of lib/base/objects.c: objects are unique by backing path and keep
 * every user, images that disagree about an object are an error, and
 * cfs_objects_locate() answers as the kernel looks up backing files: the
 * first basedir that has the path wins, a wrong size or a non-file there
 * is reported rather than skipped. cfs_basedirs_parse() splits a basedir
 * list as the kernel module does. The image walk is exercised by the
 * cfsctl fetch tests (tests/cli/6x-fetch-*.sh) on images cfsctl build made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/internal.h"
#include "check.h"


static char messages[4096];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(messages + strlen(messages), sizeof(messages) - strlen(messages), "%s\n", msg);
}

static void put(const char *dir, const char *rel, size_t len)
{
	char p[600], *slash;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	slash = strrchr(p, '/');
	*slash = '\0';
	mkdir(p, 0755);
	*slash = '/';
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	for (size_t i = 0; i < len; i++)
		if (write(fd, "x", 1) != 1)
			exit(1);
	close(fd);
}

/* @list must split into the @n names of @want, appended to what @b held. */
static void split_ok(const char *list, size_t n, const char *const *want)
{
	struct cfs_basedirs b = { 0 };
	int ret;

	ret = cfs_basedirs_parse(&b, "first");
	CHECK(ret == 0 && b.n == 1, "'first': %d", ret);
	ret = cfs_basedirs_parse(&b, list);
	CHECK(ret == 0 && b.n == 1 + n, "'%s': %d, %zu names", list, ret, b.n);
	for (size_t i = 0; ret == 0 && i < n && 1 + i < b.n; i++)
		CHECK(strcmp(b.dirs[1 + i], want[i]) == 0, "'%s': name %zu is '%s', not '%s'", list,
		      i, b.dirs[1 + i], want[i]);
	cfs_basedirs_free(&b);
	CHECK(b.n == 0 && !b.dirs, "freed");
}

static void test_basedirs(void)
{
	static const char *const bad[] = { "", ":", "a:", ":a", "a::b", "a\\:b:" };

	split_ok("a", 1, (const char *const[]){ "a" });
	split_ok("/x/y:/z", 2, (const char *const[]){ "/x/y", "/z" });
	split_ok("a\\:b:c", 2, (const char *const[]){ "a:b", "c" });
	split_ok("a\\\\:b", 2, (const char *const[]){ "a\\", "b" });
	split_ok("a\\\\\\:b", 1, (const char *const[]){ "a\\:b" });
	split_ok("\\x\\", 1, (const char *const[]){ "x\\" }); /* a final '\' stays */
	split_ok("\\:", 1, (const char *const[]){ ":" });
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cfs_basedirs b = { 0 };
		int ret;

		messages[0] = '\0';
		CHECK(cfs_basedirs_parse(&b, "keep") == 0, "'keep'");
		ret = cfs_basedirs_parse(&b, bad[i]);
		CHECK(ret == -EINVAL, "'%s': %d, not -EINVAL", bad[i], ret);
		CHECK(b.n == 1 && strcmp(b.dirs[0], "keep") == 0, "'%s': the list changed", bad[i]);
		CHECK(strstr(messages, "empty directory name") != NULL, "'%s': message '%s'", bad[i],
		      messages);
		cfs_basedirs_free(&b);
	}
	{
		/* a name appended as it is, not read as a list */
		struct cfs_basedirs b = { 0 };

		CHECK(cfs_basedirs_parse(&b, "a\\:b") == 0 && cfs_basedirs_add(&b, "c:d\\") == 0 &&
			      b.n == 2 && strcmp(b.dirs[0], "a:b") == 0 && strcmp(b.dirs[1], "c:d\\") == 0,
		      "add after parse");
		CHECK(cfs_basedirs_add(&b, "") == -EINVAL && b.n == 2, "an empty name is added");
		cfs_basedirs_free(&b);
	}
}

int main(void)
{
	struct cfs_objects set;
	uint8_t d1[CFS_DIGEST_SIZE], d2[CFS_DIGEST_SIZE];
	char p1[CFS_OBJECT_PATH_SIZE], p2[CFS_OBJECT_PATH_SIZE], top[256], a[300], b[300];
	char withslash[CFS_OBJECT_PATH_SIZE + 1];
	struct cfs_basedirs dirs = { 0 };
	char cmd[700];
	int ret;

	cfs_set_message_handler(on_msg, NULL);
	test_basedirs();
	memset(d1, 0x11, sizeof(d1));
	memset(d2, 0x22, sizeof(d2));
	cfs_object_path(d1, p1);
	cfs_object_path(d2, p2);

	cfs_objects_init(&set);
	CHECK(cfs_objects_add(&set, p1, d1, 10, 0, "/a") == 0, "add");
	snprintf(withslash, sizeof(withslash), "/%s", p1);
	CHECK(cfs_objects_add(&set, withslash, d1, 10, 1, "/b") == 0, "add again");
	CHECK(cfs_objects_add(&set, p2, d2, 5, 0, "/c") == 0, "add second");
	CHECK(cfs_objects_add(&set, "odd/name", NULL, 3, 0, "/d") == 0, "add without digest");
	CHECK(set.n == 3, "unique by path: %zu", set.n);
	CHECK(set.objs[0].n_users == 2 && strcmp(set.objs[0].users[1].path, "/b") == 0 &&
	      set.objs[0].users[1].image == 1, "users of the first object");
	CHECK(set.objs[0].canonical && set.objs[0].has_digest, "canonical");
	CHECK(!set.objs[2].has_digest && !set.objs[2].canonical, "no digest");

	/* disagreement: same path, other size or digest */
	ret = cfs_objects_add(&set, p1, d1, 11, 0, "/e");
	CHECK(ret == -EINVAL && strstr(messages, "size"), "size conflict: %d '%s'", ret, messages);
	messages[0] = '\0';
	ret = cfs_objects_add(&set, p1, d2, 10, 0, "/f");
	CHECK(ret == -EINVAL && strstr(messages, "digest") && strstr(messages, "/a"),
	      "digest conflict: %d '%s'", ret, messages);
	ret = cfs_objects_add(&set, p2, d2, 5, 0, "/g");
	CHECK(ret == 0, "agreeing duplicate: %d", ret);

	/* many objects: the hash table grows and keeps them apart */
	for (int i = 0; i < 5000; i++) {
		char path[64];

		snprintf(path, sizeof(path), "many/%d", i);
		if (cfs_objects_add(&set, path, NULL, (uint64_t)i, 0, NULL) != 0) {
			CHECK(0, "adding %s", path);
			break;
		}
	}
	CHECK(set.n == 5003, "after growing: %zu", set.n);
	CHECK(cfs_objects_add(&set, "many/1234", NULL, 1234, 0, NULL) == 0 && set.n == 5003,
	      "lookup after growing");
	CHECK(cfs_objects_find(&set, "many/1234") == &set.objs[3 + 1234] &&
		      cfs_objects_find(&set, withslash) == &set.objs[0] &&
		      cfs_objects_find(&set, "many/99999") == NULL &&
		      cfs_objects_find(&set, "odd") == NULL,
	      "find");

	/* locate: first basedir with the path wins */
	snprintf(top, sizeof(top), "%s/cfs-objects-unit.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top))
		return 1;
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(b, sizeof(b), "%s/b", top);
	mkdir(a, 0755);
	mkdir(b, 0755);
	put(b, p1, 10); /* only in b */
	put(a, p2, 4); /* wrong size in a ... */
	put(b, p2, 5); /* ... right in b: a wins, it is wrong */
	mkdir(a, 0755);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/odd/name'", a); /* a directory, not a file */
	if (system(cmd) != 0)
		return 1;
	dirs.dirs = (char *[]){ a, b };
	dirs.n = 2;
	ret = cfs_objects_locate(&set, &dirs);
	CHECK(ret == 5002, "not present: %d", ret);
	CHECK(set.objs[0].state == CFS_OBJECT_PRESENT && set.objs[0].basedir == 1, "p1 in b: %d %d",
	      set.objs[0].state, set.objs[0].basedir);
	CHECK(set.objs[1].state == CFS_OBJECT_WRONG_SIZE && set.objs[1].basedir == 0 &&
	      set.objs[1].found_size == 4, "p2 wrong in a: %d", set.objs[1].state);
	CHECK(set.objs[2].state == CFS_OBJECT_NOT_FILE && set.objs[2].basedir == 0,
	      "directory: %d", set.objs[2].state);
	CHECK(set.objs[3].state == CFS_OBJECT_MISSING && set.objs[3].basedir == -1, "missing");
	dirs.dirs++;
	dirs.n = 1;
	ret = cfs_objects_locate(&set, &dirs);
	CHECK(ret == 5001 && set.objs[1].state == CFS_OBJECT_PRESENT, "b only: %d", ret);
	ret = cfs_objects_locate(&set, NULL);
	CHECK(ret == 5003, "no basedirs: %d", ret);
	dirs.dirs = (char *[]){ "/nonexistent/dir" };
	messages[0] = '\0';
	ret = cfs_objects_locate(&set, &dirs);
	CHECK(ret == -ENOENT && strstr(messages, "/nonexistent/dir"), "bad basedir: %d", ret);

	cfs_objects_free(&set);
	CHECK(set.n == 0 && set.objs == NULL, "free leaves an empty set");
	CHECK(cfs_objects_find(&set, p1) == NULL, "find in an empty set");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;

	return check_exit("objects");
}
