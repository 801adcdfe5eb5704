// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of the download engine (lib/remote/fetch.c) with file:// mirrors built
 * here: the happy path, a rerun, mirror fallback, objects missing
 * everywhere, a corrupt object (right size, wrong bytes), a size that does
 * not match, named temporary files and the removal of stale ones. After each
 * case the store must hold exactly the objects that verify and nothing else.
 * The HTTP failure modes are covered by tests/cli/6x-fetch-*.sh.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/fetch.h"
#include "check.h"

#define N_OBJ 40


static char top[256];
static char reasons[64][200];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "msg: %s\n", msg);
}

static void path_in(char *buf, size_t size, const char *dir, const char *rel)
{
	snprintf(buf, size, "%s/%s/%s", top, dir, rel);
}

static void mkdir_in(const char *dir)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", top, dir);
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		perror(p);
		exit(1);
	}
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) < 0) {
		perror(path);
		exit(1);
	}
}

/* Make object @i's content, put it into store @dir, fill in @o. */
static void make_object(int i, const char *dir, struct cfs_fetch_object *o)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 65536 + 3, 1 << 20 };
	size_t len = sizes[i % 7] + (i >= 7 ? (size_t)i : 0);
	char *buf = malloc(len + 1), rel[CFS_OBJECT_PATH_SIZE], p[512], d[512];
	int fd;

	for (size_t k = 0; k < len; k++)
		buf[k] = (char)(k * 31 + (size_t)i * 7 + (k >> 12));
	snprintf(p, sizeof(p), "%s/tmp-object", top);
	write_file(p, buf, len);
	fd = open(p, O_RDONLY);
	if (fd < 0 || cfs_verity_digest_fd(fd, o->digest) < 0) {
		perror("digest");
		exit(1);
	}
	close(fd);
	unlink(p);
	o->size = len;
	cfs_object_path(o->digest, rel);
	snprintf(d, sizeof(d), "%s/%s/%.2s", top, dir, rel);
	mkdir(d, 0755);
	path_in(p, sizeof(p), dir, rel);
	write_file(p, buf, len);
	free(buf);
}

/* Count regular files under @dir recursively; every one must be a wanted object. */
static int count_files(const char *dir, const struct cfs_fetch_object *objs, size_t n,
		       bool *seen)
{
	char p[512];
	struct dirent *de;
	int count = 0;
	DIR *d;

	snprintf(p, sizeof(p), "%s/%s", top, dir);
	d = opendir(p);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char sub[1024];
		DIR *sd;
		struct dirent *se;

		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (strlen(de->d_name) != 2) {
			CHECK(0, "stray entry '%s' in %s", de->d_name, dir);
			count++;
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%s", p, de->d_name);
		sd = opendir(sub);
		CHECK(sd != NULL, "'%s' is not a directory", sub);
		if (!sd)
			continue;
		while ((se = readdir(sd))) {
			char rel[CFS_OBJECT_PATH_SIZE], name[600];
			bool known = false;

			if (se->d_name[0] == '.')
				continue;
			snprintf(name, sizeof(name), "%s/%s", de->d_name, se->d_name);
			for (size_t i = 0; i < n; i++) {
				cfs_object_path(objs[i].digest, rel);
				if (strcmp(rel, name) == 0) {
					known = true;
					if (seen)
						seen[i] = true;
				}
			}
			CHECK(known, "unexpected file '%s' in %s", name, dir);
			count++;
		}
		closedir(sd);
	}
	closedir(d);
	return count;
}

/* Every file in @dir must have the fs-verity digest its name says. */
static void check_store_verifies(const char *dir, const struct cfs_fetch_object *objs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char rel[CFS_OBJECT_PATH_SIZE], p[512];
		uint8_t d[CFS_DIGEST_SIZE];
		int fd;

		cfs_object_path(objs[i].digest, rel);
		path_in(p, sizeof(p), dir, rel);
		fd = open(p, O_RDONLY);
		if (fd < 0)
			continue;
		CHECK(cfs_verity_digest_fd(fd, d) == 0 && memcmp(d, objs[i].digest, CFS_DIGEST_SIZE) == 0,
		      "'%s' does not verify", p);
		close(fd);
	}
}

static void rm_rf(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s'", top, dir);
	if (system(cmd) != 0)
		exit(1);
}

static int fetch(struct cfs_fetch_object *objs, size_t n, const char *dest,
		 const char *const *mirrors, size_t n_urls, bool no_tmpfile,
		 struct cfs_fetch_stats *st)
{
	char base[512], *urls[4];
	struct cfs_fetch_options opts = { 0 };
	int ret;

	for (size_t i = 0; i < n_urls; i++) {
		urls[i] = malloc(600);
		snprintf(urls[i], 600, "file://%s/%s/", top, mirrors[i]);
	}
	snprintf(base, sizeof(base), "%s/%s", top, dest);
	opts.basedir = base;
	opts.urls = (const char *const *)urls;
	opts.n_urls = n_urls;
	opts.jobs = 5;
	opts.retries = 2;
	opts.timeout = 5;
	opts.retry_delay_ms = 1;
	opts.no_tmpfile = no_tmpfile;
	ret = cfs_fetch_objects(objs, n, &opts, st);
	for (size_t i = 0; i < n_urls; i++)
		free(urls[i]);
	/* keep the reasons as strings the checks can read; free the last ones */
	for (size_t i = 0; i < n; i++) {
		snprintf(reasons[i], sizeof(reasons[i]), "%s", objs[i].reason ? objs[i].reason : "");
		free(objs[i].reason);
		objs[i].reason = reasons[i];
	}
	return ret;
}

int main(void)
{
	struct cfs_fetch_object objs[N_OBJ], extra[2];
	struct cfs_fetch_stats st;
	const char *good[] = { "good" }, *empty_then_good[] = { "empty", "good" };
	const char *empty[] = { "empty", "empty2" }, *bad[] = { "bad" };
	const char *bad_then_good[] = { "bad", "good" };
	char rel[CFS_OBJECT_PATH_SIZE], p[512];
	bool seen[N_OBJ] = { 0 };
	int ret;

	cfs_set_message_handler(on_msg, NULL);
	snprintf(top, sizeof(top), "%s/cfs-fetch-unit.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 1;
	}
	mkdir_in("good");
	mkdir_in("empty");
	mkdir_in("empty2");
	for (int i = 0; i < N_OBJ; i++)
		make_object(i, "good", &objs[i]);

	/* happy path, then a rerun that finds everything in place */
	mkdir_in("s1");
	ret = fetch(objs, N_OBJ, "s1", good, 1, false, &st);
	CHECK(ret == 0, "happy path returned %d", ret);
	CHECK(st.fetched == N_OBJ, "fetched %llu", (unsigned long long)st.fetched);
	for (int i = 0; i < N_OBJ; i++)
		CHECK(objs[i].status == CFS_FETCH_FETCHED, "object %d status %d (%s)", i,
		      objs[i].status, objs[i].reason);
	CHECK(count_files("s1", objs, N_OBJ, seen) == N_OBJ, "s1 holds the wrong number of files");
	for (int i = 0; i < N_OBJ; i++)
		CHECK(seen[i], "object %d missing from the store", i);
	check_store_verifies("s1", objs, N_OBJ);
	CHECK(st.bytes_fetched == st.bytes_total && st.bytes_done == st.bytes_total,
	      "bytes %llu/%llu", (unsigned long long)st.bytes_fetched,
	      (unsigned long long)st.bytes_total);

	ret = fetch(objs, N_OBJ, "s1", good, 1, false, &st);
	CHECK(ret == 0 && st.present == N_OBJ && st.fetched == 0, "rerun: %d, present %llu", ret,
	      (unsigned long long)st.present);

	/* the first mirror lacks everything: the second one serves */
	mkdir_in("s2");
	ret = fetch(objs, N_OBJ, "s2", empty_then_good, 2, false, &st);
	CHECK(ret == 0 && st.fetched == N_OBJ, "fallback: %d, fetched %llu", ret,
	      (unsigned long long)st.fetched);
	CHECK(count_files("s2", objs, N_OBJ, NULL) == N_OBJ, "s2 holds the wrong number of files");

	/* missing everywhere: unavailable, nothing in the store */
	mkdir_in("s3");
	ret = fetch(objs, 3, "s3", empty, 2, false, &st);
	CHECK(ret == 3 && st.unavailable == 3, "unavailable: %d, %llu", ret,
	      (unsigned long long)st.unavailable);
	CHECK(objs[0].status == CFS_FETCH_UNAVAILABLE && strstr(objs[0].reason, "not found"),
	      "status %d reason '%s'", objs[0].status, objs[0].reason);
	CHECK(count_files("s3", objs, N_OBJ, NULL) == 0, "s3 is not empty");

	/* a mirror with right-sized wrong content: rejected; behind it a good one */
	rm_rf("bad");
	mkdir_in("bad");
	for (int i = 0; i < 6; i++) {
		struct cfs_fetch_object tmp;
		char *buf = calloc(1, objs[i].size + 1), d[512];

		make_object(i, "bad", &tmp); /* same content, then corrupt it */
		memset(buf, 'x', objs[i].size);
		cfs_object_path(objs[i].digest, rel);
		snprintf(d, sizeof(d), "%s/bad/%.2s", top, rel);
		mkdir(d, 0755);
		path_in(p, sizeof(p), "bad", rel);
		write_file(p, buf, objs[i].size);
		free(buf);
	}
	mkdir_in("s4");
	ret = fetch(objs + 1, 5, "s4", bad, 1, false, &st); /* object 0 is empty: cannot differ */
	CHECK(ret == 5 && st.failed == 5 && st.rejected == 5, "bad mirror: %d, failed %llu rejected %llu",
	      ret, (unsigned long long)st.failed, (unsigned long long)st.rejected);
	CHECK(strstr(objs[1].reason, "digest") != NULL, "reason '%s'", objs[1].reason);
	CHECK(count_files("s4", objs, N_OBJ, NULL) == 0, "s4 is not empty after bad content");
	ret = fetch(objs + 1, 5, "s4", bad_then_good, 2, false, &st);
	CHECK(ret == 0 && st.fetched == 5 && st.rejected == 5, "bad then good: %d", ret);
	CHECK(count_files("s4", objs, N_OBJ, NULL) == 5, "s4 should hold 5 objects");
	check_store_verifies("s4", objs, N_OBJ);

	/* the image says a different size than the mirror has: too long / too short */
	extra[0] = objs[9];
	extra[0].size -= 1;
	extra[1] = objs[10];
	extra[1].size += 1;
	mkdir_in("s5");
	ret = fetch(extra, 2, "s5", good, 1, false, &st);
	CHECK(ret == 2 && st.failed == 2, "size mismatch: %d", ret);
	CHECK(strstr(extra[0].reason, "more than"), "too long: '%s'", extra[0].reason);
	CHECK(strstr(extra[1].reason, "bytes"), "too short: '%s'", extra[1].reason);
	CHECK(st.retries == 2, "a short body is retried (%llu)", (unsigned long long)st.retries);
	CHECK(count_files("s5", objs, N_OBJ, NULL) == 0, "s5 is not empty");

	/* named temporary files; a stale one of a dead process is removed */
	mkdir_in("s6");
	path_in(p, sizeof(p), "s6", ".cfs-fetch.999999999.1");
	write_file(p, "partial", 7);
	path_in(p, sizeof(p), "s6", ".cfs-fetch.1.1"); /* pid 1 lives: not ours to remove */
	write_file(p, "partial", 7);
	ret = fetch(objs, N_OBJ, "s6", bad_then_good, 2, true, &st);
	CHECK(ret == 0 && st.fetched == N_OBJ, "named temp files: %d", ret);
	path_in(p, sizeof(p), "s6", ".cfs-fetch.999999999.1");
	CHECK(access(p, F_OK) < 0, "stale temporary file was not removed");
	path_in(p, sizeof(p), "s6", ".cfs-fetch.1.1");
	CHECK(access(p, F_OK) == 0, "live process's temporary file was removed");
	unlink(p);
	CHECK(count_files("s6", objs, N_OBJ, NULL) == N_OBJ, "s6 holds the wrong files");
	check_store_verifies("s6", objs, N_OBJ);

	/* bad options */
	{
		const char *ftp[] = { "ftp://example.org/" };
		struct cfs_fetch_options o = { .basedir = top, .urls = ftp, .n_urls = 1 };

		CHECK(cfs_fetch_objects(objs, 1, &o, NULL) == -EINVAL, "ftp:// accepted");
		o.n_urls = 0;
		CHECK(cfs_fetch_objects(objs, 1, &o, NULL) == -EINVAL, "no URL accepted");
	}

	rm_rf("");
	return check_exit("fetch");
}
