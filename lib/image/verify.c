// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The thorough check behind cfsctl verify. The image's structure is checked
 * by its format's part, from the raw bytes rather than through the reader,
 * so that every problem is reported (format/v1/verify.c,
 * format/erofs/verify.c, both on verify-walk.c's directory walk, which
 * also holds the rest of what they share). This file is the front end:
 * it picks the format, and given basedirs, it finds each backing object (first match wins, as the kernel
 * does) and checks its size and fs-verity digest, hashing each object once,
 * in parallel. Problems go to a callback; nothing is printed and nothing is
 * written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/internal.h"
#include "format/format.h"
#include "format/reader.h"
#include "format/verify-walk.h"

/* ---- objects ---- */

enum obj_result {
	OBJ_UNCHECKED = 0, /* no digest recorded, or not found */
	OBJ_OK,
	OBJ_BAD_DIGEST,
	OBJ_NO_VERITY, /* verity off on the file; computed digest matches */
	OBJ_NO_VERITY_FS, /* the filesystem has none; computed digest matches */
	OBJ_ERROR, /* could not be read */
};

struct obj_check {
	enum obj_result result;
	bool measured;
	int err;
	uint8_t found[CFS_DIGEST_SIZE];
};

struct hasher {
	struct cfs_verifier *v;
	const int *dirfds;
	struct obj_check *checks;
	size_t *todo; /* indexes of objects to hash */
	size_t n_todo;
	pthread_mutex_t lock;
	size_t next;
	uint64_t done, done_bytes, total_bytes;
};

static void hash_one(struct hasher *h, size_t i)
{
	struct cfs_object *o = &h->v->objs.objs[i];
	struct obj_check *c = &h->checks[i];
	int fd, ret;

	fd = openat(h->dirfds[o->basedir], o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		c->result = OBJ_ERROR;
		c->err = errno;
		return;
	}
	ret = cfs_verity_measure_fd(fd, c->found);
	if (ret == 0) {
		c->measured = true;
	} else if (ret == -ENODATA || ret == -EOPNOTSUPP || ret == -EINVAL) {
		/* no fs-verity (or not sha256/4k): read the content instead */
		c->result = ret == -EOPNOTSUPP ? OBJ_NO_VERITY_FS : OBJ_NO_VERITY;
		ret = cfs_verity_digest_fd(fd, c->found);
		if (ret < 0) {
			c->result = OBJ_ERROR;
			c->err = -ret;
			close(fd);
			return;
		}
	} else {
		c->result = OBJ_ERROR;
		c->err = -ret;
		close(fd);
		return;
	}
	close(fd);
	if (memcmp(c->found, o->digest, CFS_DIGEST_SIZE) != 0)
		c->result = OBJ_BAD_DIGEST;
	else if (c->measured)
		c->result = OBJ_OK;
}

static void *hash_worker(void *arg)
{
	struct hasher *h = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&h->lock);
		if (h->next >= h->n_todo) {
			pthread_mutex_unlock(&h->lock);
			return NULL;
		}
		i = h->todo[h->next++];
		pthread_mutex_unlock(&h->lock);

		hash_one(h, i);

		pthread_mutex_lock(&h->lock);
		h->done++;
		h->done_bytes += h->v->objs.objs[i].size;
		if (h->v->o->progress)
			h->v->o->progress(h->v->o->progress_ctx, h->done, h->n_todo, h->done_bytes,
					  h->total_bytes);
		pthread_mutex_unlock(&h->lock);
	}
}

static void report_object(struct cfs_verifier *v, const struct cfs_object *o,
			  enum cfs_verify_severity sev, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void report_object(struct cfs_verifier *v, const struct cfs_object *o,
			  enum cfs_verify_severity sev, const char *kind, const char *fmt, ...)
{
	struct cfs_verify_problem p = { .severity = sev, .kind = kind, .offset = CFS_NO_OFFSET,
					.object = o->path, .users = o->users,
					.n_users = o->n_users };
	va_list ap;

	p.path = o->n_users ? o->users[0].path : NULL;
	va_start(ap, fmt);
	cfs_vdeliver(v, &p, fmt, ap);
	va_end(ap);
}

static unsigned int cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

int cfs_verify_objects(struct cfs_verifier *v)
{
	const struct cfs_verify_options *o = v->o;
	struct hasher h = { .v = v };
	struct obj_check *checks = NULL;
	pthread_t *threads = NULL;
	unsigned int jobs, started = 0;
	uint64_t *no_verity_fs = NULL;
	size_t n_dirs = o->basedirs->n;
	int *dirfds = NULL, ret;

	/* opened once: looked up in, then read from */
	ret = cfs_basedirs_open(o->basedirs, &dirfds);
	if (ret < 0)
		return ret;
	cfs_objects_locate_at(&v->objs, dirfds, n_dirs);
	v->res->objects = v->objs.n;
	checks = calloc(v->objs.n ? v->objs.n : 1, sizeof(*checks));
	h.todo = calloc(v->objs.n ? v->objs.n : 1, sizeof(*h.todo));
	no_verity_fs = calloc(n_dirs ? n_dirs : 1, sizeof(*no_verity_fs));
	if (!checks || !h.todo || !no_verity_fs) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < v->objs.n; i++) {
		const struct cfs_object *ob = &v->objs.objs[i];

		if (ob->state == CFS_OBJECT_PRESENT && ob->has_digest) {
			h.todo[h.n_todo++] = i;
			h.total_bytes += ob->size;
		}
	}
	h.dirfds = dirfds;
	h.checks = checks;
	jobs = o->jobs ? o->jobs : cpu_count();
	if (jobs > h.n_todo)
		jobs = h.n_todo ? (unsigned int)h.n_todo : 1;
	pthread_mutex_init(&h.lock, NULL);
	threads = calloc(jobs, sizeof(*threads));
	if (!threads) {
		ret = -ENOMEM;
		goto out_lock;
	}
	for (started = 0; started < jobs; started++)
		if (pthread_create(&threads[started], NULL, hash_worker, &h) != 0)
			break;
	if (started == 0)
		hash_worker(&h);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);

	/* report in the stable order of the objects */
	for (size_t i = 0; i < v->objs.n; i++) {
		const struct cfs_object *ob = &v->objs.objs[i];
		const struct obj_check *c = &checks[i];
		const char *how = c->measured ? "measured" : "computed";
		char want[CFS_DIGEST_HEX_SIZE], got[CFS_DIGEST_HEX_SIZE];
		const char *dir = ob->basedir >= 0 ? o->basedirs->dirs[ob->basedir] : "";

		switch (ob->state) {
		case CFS_OBJECT_MISSING:
			report_object(v, ob, CFS_VERIFY_ERROR, "missing", "in none of the %zu basedirs",
				      n_dirs);
			continue;
		case CFS_OBJECT_NOT_FILE:
			report_object(v, ob, CFS_VERIFY_ERROR, "not-file",
				      "in basedir '%s' is not a regular file", dir);
			continue;
		case CFS_OBJECT_WRONG_SIZE:
			report_object(v, ob, CFS_VERIFY_ERROR, "size",
				      "in basedir '%s' is %llu bytes, the image records %llu", dir,
				      cfs_ull(ob->found_size), cfs_ull(ob->size));
			continue;
		default:
			break;
		}
		if (!ob->has_digest) {
			v->res->objects_ok++;
			continue;
		}
		if (c->result == OBJ_ERROR) {
			report_object(v, ob, CFS_VERIFY_ERROR, "unreadable", "in basedir '%s': %s", dir,
				      strerror(c->err));
			continue;
		}
		if (c->measured)
			v->res->objects_measured++;
		else
			v->res->objects_computed++;
		if (!c->measured)
			v->res->bytes_hashed += ob->size;
		cfs_digest_to_hex(ob->digest, want);
		cfs_digest_to_hex(c->found, got);
		if (c->result == OBJ_BAD_DIGEST) {
			report_object(v, ob, CFS_VERIFY_ERROR, "digest",
				      "in basedir '%s' has fs-verity digest %s (%s), the image records %s",
				      dir, got, how, want);
			continue;
		}
		if (c->result == OBJ_NO_VERITY_FS && !o->require_verity) {
			/* said once per basedir below, not once per object */
			no_verity_fs[ob->basedir]++;
		} else if (c->result == OBJ_NO_VERITY || c->result == OBJ_NO_VERITY_FS) {
			report_object(v, ob, o->require_verity ? CFS_VERIFY_ERROR : CFS_VERIFY_WARNING,
				      "no-verity",
				      "in basedir '%s' has no fs-verity (%s); its content has the recorded digest (computed)",
				      dir, c->result == OBJ_NO_VERITY_FS ? "the filesystem has none" :
									   "not enabled on the file");
			if (o->require_verity)
				continue;
		}
		v->res->objects_ok++;
	}
	for (size_t b = 0; b < n_dirs; b++)
		if (no_verity_fs[b]) {
			v->cur_path = NULL;
			CFS_VWARN(v, "no-verity", CFS_NO_OFFSET,
			     "basedir '%s' is on a filesystem without fs-verity: the digests of %llu objects there were computed, not measured",
			     o->basedirs->dirs[b], cfs_ull(no_verity_fs[b]));
		}
	ret = 0;
out_lock:
	pthread_mutex_destroy(&h.lock);
out:
	cfs_basedirs_close(dirfds, n_dirs);
	free(threads);
	free(checks);
	free(h.todo);
	free(no_verity_fs);
	return ret;
}

/* ---- the image's own digest ---- */

static int check_image_digest(struct cfs_verifier *v, int fd)
{
	char want[CFS_DIGEST_HEX_SIZE], got[CFS_DIGEST_HEX_SIZE];
	int ret;

	ret = cfs_verity_measure_fd(fd, v->res->image_digest);
	if (ret == 0) {
		v->res->image_digest_measured = true;
	} else {
		ret = cfs_verity_digest_fd(fd, v->res->image_digest);
		if (ret < 0) {
			cfs_msg("computing the fs-verity digest: %s", strerror(-ret));
			return ret;
		}
	}
	if (memcmp(v->res->image_digest, v->o->image_digest, CFS_DIGEST_SIZE) != 0) {
		cfs_digest_to_hex(v->o->image_digest, want);
		cfs_digest_to_hex(v->res->image_digest, got);
		v->cur_path = NULL;
		CFS_VERR(v, "image-digest", CFS_NO_OFFSET, "the image has fs-verity digest %s (%s), expected %s",
		    got, v->res->image_digest_measured ? "measured" : "computed", want);
	}
	return 0;
}

int cfs_verify_image(const char *path, const struct cfs_verify_options *opts, cfs_verify_fn fn,
		     void *ctx, struct cfs_verify_result *res)
{
	struct cfs_verifier v = { .o = opts, .fn = fn, .fn_ctx = ctx, .res = res };
	const struct cfs_format *f;
	size_t size;
	void *map;
	int fd, ret;

	memset(res, 0, sizeof(*res));
	if (opts && !cfs_reserved_ok(opts->reserved, sizeof(opts->reserved), "verify options"))
		return -EINVAL;
	cfs_objects_init(&v.objs);
	fd = cfs_image_map(path, &map, &size);
	if (fd < 0)
		return fd;
	v.size = size;
	v.data = map;
	if (opts && opts->image_digest) {
		ret = check_image_digest(&v, fd);
		if (ret < 0)
			goto out;
	}
	/* The image's structure, by its format's checks, picked as the reader picks it. */
	f = cfs_format_probe(v.data, v.data ? v.size : 0);
	ret = f->verify(f, &v);
	if (ret < 0)
		goto out;
	if (ret > 0 && opts && opts->basedirs && opts->basedirs->n) {
		ret = cfs_verify_objects(&v);
		if (ret < 0)
			goto out;
	}
	ret = 0;
out:
	if (map)
		munmap(map, size);
	close(fd);
	cfs_vmap_free(&v.map);
	free(v.path);
	cfs_objects_free(&v.objs);
	return ret;
}
