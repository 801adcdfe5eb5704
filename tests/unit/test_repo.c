// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of lib/store/repo.c: a repository is made and opened, an image is
 * stored under its fs-verity digest, names (with '/') are set, replaced,
 * resolved and removed with the symlinks the layout promises, bad names
 * are refused, listing finds names and images, and gc removes the images
 * and temporaries nothing keeps. The cfsctl verbs are tested by
 * tests/cli/1504, 1505 and 2001.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfs/repo.h"
#include "check.h"

static char messages[8192];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(messages + strlen(messages), sizeof(messages) - strlen(messages), "%s\n", msg);
}

static char root[256];

/* Store @len bytes of @c as an image; its digest in @digest. */
static void store(struct cfs_repo *repo, char c, size_t len, uint8_t digest[CFS_DIGEST_SIZE])
{
	char tmp[CFS_REPO_TMP_SIZE], *buf = malloc(len);
	uint8_t want[CFS_DIGEST_SIZE];
	int fd, r;

	memset(buf, c, len);
	fd = cfs_repo_image_create(repo, tmp);
	CHECK(fd >= 0, "image_create: %d", fd);
	CHECK(strncmp(tmp, ".tmp-", 5) == 0, "temporary '%s'", tmp);
	CHECK(write(fd, buf, len) == (ssize_t)len, "write");
	r = cfs_repo_image_commit(repo, fd, tmp, false, digest);
	CHECK(r == 0, "commit: %d %s", r, messages);
	cfs_verity_digest_mem(buf, len, want);
	CHECK(memcmp(want, digest, CFS_DIGEST_SIZE) == 0, "digest of the stored image");
	free(buf);
}

static void target_is(const char *name, const char *want)
{
	char p[1024], t[512];
	ssize_t n;

	snprintf(p, sizeof(p), "%s/r/images/refs/%s", root, name);
	n = readlink(p, t, sizeof(t) - 1);
	CHECK(n > 0, "readlink %s", p);
	t[n > 0 ? n : 0] = '\0';
	CHECK(strcmp(t, want) == 0, "%s -> '%s', want '%s'", name, t, want);
}

static bool exists(const char *rel)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/r/%s", root, rel);
	return lstat(p, &st) == 0;
}

int main(void)
{
	static const char *const bad[] = {
		"", "/a", "a/", "a//b", ".hidden", "a/.b", "..", "a/../b", "-x", "a b", "a\\b",
		"caf\xc3\xa9", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	};
	struct cfs_repo *repo = NULL;
	struct cfs_repo_list l;
	struct cfs_repo_gc_stats st;
	uint8_t d1[CFS_DIGEST_SIZE], d2[CFS_DIGEST_SIZE], got[CFS_DIGEST_SIZE];
	char h1[CFS_DIGEST_HEX_SIZE], h2[CFS_DIGEST_HEX_SIZE], want[1024], p[300], *path;
	pid_t pid;
	int r, fd;

	cfs_set_message_handler(on_msg, NULL);
	snprintf(root, sizeof(root), "%s/cfs-repo-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(p, sizeof(p), "%s/r", root);

	r = cfs_repo_open(p, false, &repo);
	CHECK(r == -ENOENT && !repo, "opening a missing repository: %d", r);
	r = cfs_repo_open(p, true, &repo);
	CHECK(r == 0, "creating: %d %s", r, messages);
	if (r)
		return check_exit("repo");
	CHECK(exists("objects") && exists("images/refs"), "the layout's directories");
	snprintf(want, sizeof(want), "%s/objects", p);
	CHECK(strcmp(cfs_repo_objects(repo), want) == 0, "objects path %s", cfs_repo_objects(repo));

	store(repo, 'a', 10000, d1);
	store(repo, 'b', 5000, d2);
	cfs_digest_to_hex(d1, h1);
	cfs_digest_to_hex(d2, h2);
	snprintf(want, sizeof(want), "images/%s", h1);
	CHECK(exists(want), "image under its digest");
	/* The same image again: stays one file, no temporary left. */
	store(repo, 'a', 10000, got);
	CHECK(memcmp(got, d1, CFS_DIGEST_SIZE) == 0, "same digest twice");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		messages[0] = '\0';
		r = cfs_repo_set_name(repo, bad[i], d1);
		CHECK(r == -EINVAL && strstr(messages, "not a valid name"), "bad name '%s': %d %s",
		      bad[i], r, messages);
	}
	CHECK(cfs_repo_name_check("os/debian-12.4_x86:stable+1@2=a,b~") == 0, "a good name");

	CHECK(cfs_repo_set_name(repo, "top", d1) == 0, "top: %s", messages);
	CHECK(cfs_repo_set_name(repo, "os/debian/12", d1) == 0, "nested: %s", messages);
	snprintf(want, sizeof(want), "../%s", h1);
	target_is("top", want);
	snprintf(want, sizeof(want), "../../../%s", h1);
	target_is("os/debian/12", want);

	/* Replaced: the other image, no temporary left in the directory. */
	CHECK(cfs_repo_set_name(repo, "os/debian/12", d2) == 0, "replace: %s", messages);
	snprintf(want, sizeof(want), "../../../%s", h2);
	target_is("os/debian/12", want);

	messages[0] = '\0';
	r = cfs_repo_set_name(repo, "os/debian", d1);
	CHECK(r == -EISDIR && strstr(messages, "directory of names"), "name over a directory: %d %s",
	      r, messages);
	messages[0] = '\0';
	r = cfs_repo_set_name(repo, "top/sub", d1);
	CHECK(r == -ENOTDIR && strstr(messages, "not a directory of names"),
	      "name below a name: %d %s", r, messages);
	/* cfs_repo_name_usable() tells the same before any work. */
	messages[0] = '\0';
	r = cfs_repo_name_usable(repo, "os/debian");
	CHECK(r == -EISDIR && strstr(messages, "directory of names"), "usable: a directory: %d %s",
	      r, messages);
	messages[0] = '\0';
	r = cfs_repo_name_usable(repo, "top/sub");
	CHECK(r == -ENOTDIR && strstr(messages, "not a directory of names"),
	      "usable: below a name: %d %s", r, messages);
	CHECK(cfs_repo_name_usable(repo, "os/debian/12") == 0, "usable: a name to replace");
	CHECK(cfs_repo_name_usable(repo, "new/dir/name") == 0, "usable: a new name");
	CHECK(cfs_repo_name_usable(repo, "a//b") == -EINVAL, "usable: a bad name");
	memset(got, 0x55, sizeof(got));
	messages[0] = '\0';
	r = cfs_repo_set_name(repo, "nothing", got);
	CHECK(r == -ENOENT && !exists("images/refs/nothing"), "name of a missing image: %d", r);

	r = cfs_repo_resolve(repo, "os/debian/12", got, &path);
	snprintf(want, sizeof(want), "%s/images/%s", p, h2);
	CHECK(r == 0 && memcmp(got, d2, CFS_DIGEST_SIZE) == 0 && path && strcmp(path, want) == 0,
	      "resolve name: %d %s", r, path ? path : "");
	free(path);
	r = cfs_repo_resolve(repo, h1, got, NULL);
	CHECK(r == 0 && memcmp(got, d1, CFS_DIGEST_SIZE) == 0, "resolve digest: %d", r);
	messages[0] = '\0';
	r = cfs_repo_resolve(repo, "os/nothing", got, NULL);
	CHECK(r == -ENOENT && strstr(messages, "no name 'os/nothing'"), "missing name: %d %s", r,
	      messages);
	r = cfs_repo_resolve(repo, "os", got, NULL);
	CHECK(r == -EISDIR, "a directory of names is not a name: %d", r);
	r = cfs_repo_resolve(repo, "../x", got, NULL);
	CHECK(r == -EINVAL, "a path is not a name: %d", r);
	r = cfs_repo_resolve(repo, "0000000000000000000000000000000000000000000000000000000000000000",
			     got, NULL);
	CHECK(r == -ENOENT, "missing digest: %d", r);
	/* A name made by hand with a wrong target */
	snprintf(want, sizeof(want), "%s/images/refs/hand", p);
	CHECK(symlink(h1, want) == 0, "symlink");
	r = cfs_repo_resolve(repo, "hand", got, NULL);
	CHECK(r == -EINVAL, "a symlink of the wrong form: %d", r);

	r = cfs_repo_list(repo, &l);
	CHECK(r == 0 && l.n_images == 2 && l.n_names == 3, "list: %d %zu images %zu names", r,
	      l.n_images, l.n_names);
	if (r == 0 && l.n_names == 3) {
		CHECK(strcmp(l.names[0].name, "hand") == 0 && !l.names[0].ok, "hand");
		CHECK(strcmp(l.names[1].name, "os/debian/12") == 0 && l.names[1].ok &&
			      memcmp(l.names[1].digest, d2, CFS_DIGEST_SIZE) == 0,
		      "os/debian/12");
		CHECK(strcmp(l.names[2].name, "top") == 0 && l.names[2].ok, "top");
		CHECK(cfs_repo_list_find(&l, d1)->size == 10000 &&
			      cfs_repo_list_find(&l, d1)->n_names == 1 &&
			      cfs_repo_list_find(&l, d2)->n_names == 1,
		      "sizes and name counts");
	}
	cfs_repo_list_free(&l);

	CHECK(cfs_repo_remove_name(repo, "os/debian/12") == 0, "remove: %s", messages);
	CHECK(!exists("images/refs/os"), "empty directories of names go with the name");
	r = cfs_repo_remove_name(repo, "os/debian/12");
	CHECK(r == -ENOENT, "remove twice: %d", r);

	/* A dead run's temporaries, in images/ and in a directory of names. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	snprintf(want, sizeof(want), "%s/images/.tmp-%d-0", p, (int)pid);
	fd = open(want, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "xyz", 3) == 3, "dead temporary");
	close(fd);
	CHECK(cfs_repo_set_name(repo, "x/y", d1) == 0, "x/y");
	snprintf(want, sizeof(want), "%s/images/refs/x/.tmp-%d-1", p, (int)pid);
	CHECK(symlink("../../nothing", want) == 0, "dead symlink temporary");

	uint8_t keep[1][CFS_DIGEST_SIZE];

	memcpy(keep[0], d1, CFS_DIGEST_SIZE);
	r = cfs_repo_gc(repo, keep, 1, true, NULL, NULL, &st);
	CHECK(r == 0 && st.images == 1 && st.images_bytes == 5000 && st.temporaries == 2,
	      "dry run: %d %llu %llu", r, (unsigned long long)st.images,
	      (unsigned long long)st.temporaries);
	snprintf(want, sizeof(want), "images/%s", h2);
	CHECK(exists(want), "a dry run removes nothing");
	r = cfs_repo_gc(repo, keep, 1, false, NULL, NULL, &st);
	CHECK(r == 0 && st.images == 1 && st.temporaries == 2, "gc: %d", r);
	CHECK(!exists(want), "the image nothing keeps is gone");
	snprintf(want, sizeof(want), "images/%s", h1);
	CHECK(exists(want) && exists("images/refs/x/y"), "the kept image and names stay");
	snprintf(want, sizeof(want), "images/.tmp-%d-0", (int)pid);
	CHECK(!exists(want), "dead temporary gone");

	/* Several images to keep, in any order. */
	uint8_t d3[CFS_DIGEST_SIZE], keep2[2][CFS_DIGEST_SIZE];

	store(repo, 'c', 300, d3);
	store(repo, 'd', 400, got);
	memcpy(keep2[0], d3, CFS_DIGEST_SIZE);
	memcpy(keep2[1], d1, CFS_DIGEST_SIZE);
	if (memcmp(d3, d1, CFS_DIGEST_SIZE) < 0) {
		memcpy(keep2[0], d1, CFS_DIGEST_SIZE);
		memcpy(keep2[1], d3, CFS_DIGEST_SIZE);
	}
	r = cfs_repo_gc(repo, keep2, 2, false, NULL, NULL, &st);
	CHECK(r == 0 && st.images == 1 && st.images_bytes == 400, "gc keeping two: %d %llu", r,
	      (unsigned long long)st.images);
	CHECK(cfs_repo_resolve(repo, h1, NULL, NULL) == 0, "the first kept image stays");
	cfs_digest_to_hex(d3, want);
	CHECK(cfs_repo_resolve(repo, want, NULL, NULL) == 0, "the second kept image stays");

	cfs_repo_close(repo);
	/* An extra directory (another part of the repository) is no trouble. */
	snprintf(want, sizeof(want), "%s/index", p);
	mkdir(want, 0755);
	r = cfs_repo_open(p, false, &repo);
	CHECK(r == 0, "reopen: %d", r);
	cfs_repo_close(repo);
	snprintf(want, sizeof(want), "rm -rf '%s'", root);
	if (system(want) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return check_exit("repo");
}
