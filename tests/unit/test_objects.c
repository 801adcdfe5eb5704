// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of lib/objects.c: objects are unique by backing path and keep
 * every user, images that disagree about an object are an error, and
 * cfs_objects_locate() answers as the kernel looks up backing files: the
 * first basedir that has the path wins, a wrong size or a non-file there
 * is reported rather than skipped. The image walk is exercised by the
 * cfsctl fetch tests (tests/cli/6x-fetch-*.sh) on images cfsctl build made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libcfs.h"
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

int main(void)
{
	struct cfs_objects set;
	uint8_t d1[CFS_DIGEST_SIZE], d2[CFS_DIGEST_SIZE];
	char p1[CFS_OBJECT_PATH_SIZE], p2[CFS_OBJECT_PATH_SIZE], top[256], a[300], b[300];
	char withslash[CFS_OBJECT_PATH_SIZE + 1];
	const char *dirs[2];
	char cmd[700];
	int ret;

	cfs_set_message_handler(on_msg, NULL);
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
	dirs[0] = a;
	dirs[1] = b;
	ret = cfs_objects_locate(&set, dirs, 2);
	CHECK(ret == 5002, "not present: %d", ret);
	CHECK(set.objs[0].state == CFS_OBJECT_PRESENT && set.objs[0].basedir == 1, "p1 in b: %d %d",
	      set.objs[0].state, set.objs[0].basedir);
	CHECK(set.objs[1].state == CFS_OBJECT_WRONG_SIZE && set.objs[1].basedir == 0 &&
	      set.objs[1].found_size == 4, "p2 wrong in a: %d", set.objs[1].state);
	CHECK(set.objs[2].state == CFS_OBJECT_NOT_FILE && set.objs[2].basedir == 0,
	      "directory: %d", set.objs[2].state);
	CHECK(set.objs[3].state == CFS_OBJECT_MISSING && set.objs[3].basedir == -1, "missing");
	ret = cfs_objects_locate(&set, dirs + 1, 1);
	CHECK(ret == 5001 && set.objs[1].state == CFS_OBJECT_PRESENT, "b only: %d", ret);
	ret = cfs_objects_locate(&set, NULL, 0);
	CHECK(ret == 5003, "no basedirs: %d", ret);
	dirs[0] = "/nonexistent/dir";
	messages[0] = '\0';
	ret = cfs_objects_locate(&set, dirs, 1);
	CHECK(ret == -ENOENT && strstr(messages, "/nonexistent/dir"), "bad basedir: %d", ret);

	cfs_objects_free(&set);
	CHECK(set.n == 0 && set.objs == NULL, "free leaves an empty set");
	CHECK(cfs_objects_find(&set, p1) == NULL, "find in an empty set");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;

	return check_exit("objects");
}
