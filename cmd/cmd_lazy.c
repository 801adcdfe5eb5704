// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl lazy: a FUSE filesystem that looks like a digest store and fills a
 * local one. Mounted as a later basedir of a composefs mount, it sees the
 * lookups the local store could not answer; each lookup of xx/<62 hex> that
 * the store lacks fetches that object (lib/remote/fetch.c: mirrors, retries,
 * verified unnamed temporaries, fs-verity), links it into the store and only
 * then answers, so the module finds it in the store when it looks again.
 * Concurrent lookups of one object share one download; downloads of
 * different objects run in parallel, up to --jobs at once.
 */
#define FUSE_USE_VERSION 312

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/build.h"
#include "cfs/fetch.h"
#include "cfs/store.h"
#include "cfs/util.h"


/* --max-object-size's default: a mirror's endless body ends there */
#define LAZY_MAX_OBJECT_SIZE ((uint64_t)4 << 30)

/* One object being fetched, shared by every lookup that waits for it. */
struct pending {
	uint8_t digest[CFS_DIGEST_SIZE];
	char path[CFS_OBJECT_PATH_SIZE];
	struct timespec start;
	unsigned int waiters;
	bool done;
	int err; /* 0, or the errno the lookups answer */
	struct lazy *lz;
	struct pending *next;
};

struct lazy_stats {
	uint64_t lookups; /* lookups of object names */
	uint64_t local; /* ... that the store already answered */
	uint64_t fetched; /* objects downloaded and installed */
	uint64_t bytes;
	uint64_t present; /* installed by someone else meanwhile */
	uint64_t unavailable; /* no mirror has it: ENOENT */
	uint64_t failed; /* did not verify, or could not be fetched: EIO */
	uint64_t timeouts; /* lookups that gave up waiting */
	uint64_t coalesced; /* lookups that joined a fetch in flight */
	uint64_t retries, rejected;
	double *latency_ms; /* per fetched object: first lookup to answer */
	size_t n_latency, cap_latency;
};

struct lazy {
	const char *store;
	int storefd;
	struct cli_mirrors m; /* --url, --jobs, --retries, --timeout, --cacert */
	const char *stats_file;
	uint64_t max_object_size; /* --max-object-size */
	uint64_t reserve; /* --reserve */
	mode_t umask; /* read once, before any thread: umask(2) sets it too */
	bool json;

	pthread_mutex_t lock;
	pthread_cond_t cond; /* a pending object is done, or a job slot freed */
	struct pending *pending;
	unsigned int running; /* fetches holding a job slot */
	unsigned int threads; /* fetch threads alive */
	struct lazy_stats st;
};

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Are the @n bytes at @s lower-case hex digits, and the last of the string? */
static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[n] == '\0' || s[n] == '/';
}

enum kind { K_NONE, K_ROOT, K_DIR, K_OBJECT };

/* What @path names: "/", "/xx", "/xx/<62 hex>" (lower case), or nothing. */
static enum kind classify_path(const char *path, uint8_t digest[CFS_DIGEST_SIZE])
{
	char hex[CFS_DIGEST_HEX_SIZE];

	if (strcmp(path, "/") == 0)
		return K_ROOT;
	if (path[0] != '/')
		return K_NONE;
	if (strlen(path) == 3)
		return lower_hex(path + 1, 2) ? K_DIR : K_NONE;
	/* lower_hex() took the '/' after xx; names in xx/ have no '/' */
	if (strlen(path) != 3 + 1 + 62 || path[3] != '/' || !lower_hex(path + 4, 62))
		return K_NONE;
	memcpy(hex, path + 1, 2);
	memcpy(hex + 2, path + 4, 62);
	hex[64] = '\0';
	if (!lower_hex(path + 1, 2) || cfs_digest_from_hex(hex, digest) < 0)
		return K_NONE;
	return K_OBJECT;
}

/* The stats as JSON on @out; under lz->lock. @each: list every latency. */
/* @ms to the microsecond, as "%.3f" printed it */
static json_t *json_ms(double ms)
{
	return json_real((double)(long long)(ms * 1000 + 0.5) / 1000);
}

static int write_stats(struct lazy *lz, FILE *out, bool each)
{
	const struct lazy_stats *s = &lz->st;
	json_t *doc = json_object(), *list;
	double sum = 0, max = 0;

	for (size_t i = 0; i < s->n_latency; i++) {
		sum += s->latency_ms[i];
		if (s->latency_ms[i] > max)
			max = s->latency_ms[i];
	}
	cli_json_set(doc, "lookups", json_integer((json_int_t)s->lookups));
	cli_json_set(doc, "local", json_integer((json_int_t)s->local));
	cli_json_set(doc, "fetched", json_integer((json_int_t)s->fetched));
	cli_json_set(doc, "bytes", json_integer((json_int_t)s->bytes));
	cli_json_set(doc, "present", json_integer((json_int_t)s->present));
	cli_json_set(doc, "unavailable", json_integer((json_int_t)s->unavailable));
	cli_json_set(doc, "failed", json_integer((json_int_t)s->failed));
	cli_json_set(doc, "timeouts", json_integer((json_int_t)s->timeouts));
	cli_json_set(doc, "coalesced", json_integer((json_int_t)s->coalesced));
	cli_json_set(doc, "retries", json_integer((json_int_t)s->retries));
	cli_json_set(doc, "rejected", json_integer((json_int_t)s->rejected));
	cli_json_set(doc, "in_flight", json_integer(lz->threads));
	cli_json_set(doc, "first_open_ms",
		     json_pack("{s:I, s:o, s:o}", "count", (json_int_t)s->n_latency, "mean",
			       json_ms(s->n_latency ? sum / (double)s->n_latency : 0.0), "max",
			       json_ms(max)));
	if (each) {
		list = json_array();
		for (size_t i = 0; i < s->n_latency; i++)
			cli_json_push(list, json_ms(s->latency_ms[i]));
		cli_json_set(doc, "first_open_ms_each", list);
	}
	return cli_json_fprint(out, doc, CLI_JSON_LINE);
}

/*
 * Replace --stats FILE with the current counts; under lz->lock. The
 * temporary beside it gets a name no one can guess and is created, never
 * opened: FILE's directory may be /tmp, where another user could plant a
 * symlink by a predictable name.
 */
static int save_stats(struct lazy *lz, bool each)
{
	char tmp[4200];
	FILE *f;
	int fd, ret = 0;

	if (!lz->stats_file)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", lz->stats_file) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC); /* O_CREAT | O_EXCL: no symlink followed */
	if (fd < 0)
		return -errno;
	/* mkostemp() makes 0600; the stats are as readable as any new file */
	f = fchmod(fd, 0666 & ~lz->umask) == 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	ret = write_stats(lz, f, each);
	if (!ret && ferror(f))
		ret = -EIO;
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (!ret && rename(tmp, lz->stats_file) < 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static void record_latency(struct lazy *lz, double ms)
{
	struct lazy_stats *s = &lz->st;
	double *p = cfs_grow(s->latency_ms, &s->cap_latency, s->n_latency, sizeof(*p), 256);

	if (!p)
		return; /* the counts stay right; one latency is lost */
	s->latency_ms = p;
	s->latency_ms[s->n_latency++] = ms;
}

static void *fetch_thread(void *arg)
{
	struct pending *p = arg;
	struct lazy *lz = p->lz;
	struct cfs_fetch_object obj = { .size = CFS_FETCH_SIZE_UNKNOWN };
	struct cfs_fetch_options fo = {
		.basedir = lz->store,
		.urls = lz->m.urls,
		.n_urls = lz->m.n_urls,
		.jobs = 1,
		.retries = lz->m.retries,
		.timeout = lz->m.timeout,
		.cainfo = lz->m.cacert,
		.logins = lz->m.logins,
		.max_size = lz->max_object_size,
		.reserve = lz->reserve,
	};
	struct cfs_fetch_stats fst = { 0 };
	const char *why = NULL;
	int ret, err;

	pthread_mutex_lock(&lz->lock);
	while (lz->running >= lz->m.jobs)
		pthread_cond_wait(&lz->cond, &lz->lock);
	lz->running++;
	pthread_mutex_unlock(&lz->lock);

	memcpy(obj.digest, p->digest, CFS_DIGEST_SIZE);
	ret = cfs_fetch_objects(&obj, 1, &fo, &fst);

	pthread_mutex_lock(&lz->lock);
	lz->running--;
	lz->st.retries += fst.retries;
	lz->st.rejected += fst.rejected;
	if (ret < 0) {
		err = EIO;
		why = strerror(-ret);
		lz->st.failed++;
	} else if (obj.status == CFS_FETCH_FETCHED || obj.status == CFS_FETCH_PRESENT) {
		err = 0;
		if (obj.status == CFS_FETCH_FETCHED) {
			lz->st.fetched++;
			lz->st.bytes += fst.bytes_fetched;
		} else {
			lz->st.present++;
		}
		record_latency(lz, ms_since(&p->start));
	} else if (obj.status == CFS_FETCH_UNAVAILABLE) {
		err = ENOENT;
		lz->st.unavailable++;
	} else {
		err = EIO;
		lz->st.failed++;
	}
	if (err) {
		if (!why)
			why = obj.reason ? obj.reason : "cannot be fetched";
		cli_error("lazy: fetching '%s/%s': %s", lz->store, p->path, why);
	}
	p->err = err;
	p->done = true;
	lz->threads--;
	save_stats(lz, false);
	pthread_cond_broadcast(&lz->cond);
	if (p->waiters == 0) {
		struct pending **pp;

		for (pp = &lz->pending; *pp != p; pp = &(*pp)->next)
			;
		*pp = p->next;
		free(p);
	}
	pthread_mutex_unlock(&lz->lock);
	free(obj.reason);
	return NULL;
}

/*
 * Have the store hold the object @digest: fetch it, or wait for the fetch
 * of it already running, at most --timeout seconds. Returns 0 or -errno.
 */
static int ensure_object(struct lazy *lz, const uint8_t digest[CFS_DIGEST_SIZE],
			 const char *rel)
{
	struct pending *p;
	struct timespec deadline;
	pthread_attr_t attr;
	pthread_t tid;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += lz->m.timeout;

	pthread_mutex_lock(&lz->lock);
	for (p = lz->pending; p; p = p->next)
		if (memcmp(p->digest, digest, CFS_DIGEST_SIZE) == 0 && !p->done)
			break;
	if (p) {
		lz->st.coalesced++;
	} else {
		/* Someone may have finished it since our stat. */
		if (faccessat(lz->storefd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
			pthread_mutex_unlock(&lz->lock);
			return 0;
		}
		p = calloc(1, sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&lz->lock);
			return -ENOMEM;
		}
		memcpy(p->digest, digest, CFS_DIGEST_SIZE);
		memcpy(p->path, rel, CFS_OBJECT_PATH_SIZE);
		clock_gettime(CLOCK_MONOTONIC, &p->start);
		p->lz = lz;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&tid, &attr, fetch_thread, p) != 0) {
			pthread_attr_destroy(&attr);
			pthread_mutex_unlock(&lz->lock);
			free(p);
			return -EAGAIN;
		}
		pthread_attr_destroy(&attr);
		lz->threads++;
		p->next = lz->pending;
		lz->pending = p;
	}
	p->waiters++;
	while (!p->done) {
		if (pthread_cond_timedwait(&lz->cond, &lz->lock, &deadline) == ETIMEDOUT &&
		    !p->done) {
			lz->st.timeouts++;
			cli_error("lazy: fetching '%s/%s': no answer within %u s", lz->store,
				  p->path, lz->m.timeout);
			err = ETIMEDOUT;
			break;
		}
	}
	if (p->done)
		err = p->err;
	p->waiters--;
	if (p->done && p->waiters == 0) {
		struct pending **pp;

		for (pp = &lz->pending; *pp != p; pp = &(*pp)->next)
			;
		*pp = p->next;
		free(p);
	}
	pthread_mutex_unlock(&lz->lock);
	return -err;
}

static struct lazy *get_lazy(void)
{
	return fuse_get_context()->private_data;
}

/*
 * What the FUSE filesystem shows is its mounter's, as the store is: owned
 * by the user who runs the daemon, directories 0500 and objects 0400, and
 * the kernel checks every reader against that (default_permissions), so
 * no one reads through it what the store would not show them.
 */
static void dir_stat(struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFDIR | 0500;
	st->st_nlink = 2;
	st->st_uid = geteuid();
	st->st_gid = getegid();
}

/* The store's file @rel as a read-only regular file, or -errno. */
static int object_stat(struct lazy *lz, const char *rel, struct stat *st)
{
	if (fstatat(lz->storefd, rel, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st->st_mode))
		return -ENOENT; /* not an object; the module would refuse it too */
	st->st_mode = S_IFREG | 0400;
	st->st_nlink = 1;
	st->st_uid = geteuid();
	st->st_gid = getegid();
	return 0;
}

static int lazy_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct lazy *lz = get_lazy();
	uint8_t digest[CFS_DIGEST_SIZE];
	char rel[CFS_OBJECT_PATH_SIZE];
	int ret;

	(void)fi;
	switch (classify_path(path, digest)) {
	case K_ROOT:
	case K_DIR:
		dir_stat(st);
		return 0;
	case K_OBJECT:
		break;
	default:
		return -ENOENT;
	}
	cfs_object_path(digest, rel);
	pthread_mutex_lock(&lz->lock);
	lz->st.lookups++;
	pthread_mutex_unlock(&lz->lock);
	ret = object_stat(lz, rel, st);
	if (ret == 0) {
		pthread_mutex_lock(&lz->lock);
		lz->st.local++;
		pthread_mutex_unlock(&lz->lock);
		return 0;
	}
	if (ret != -ENOENT)
		return ret;
	ret = ensure_object(lz, digest, rel);
	if (ret < 0)
		return ret;
	return object_stat(lz, rel, st);
}

/* Data is read from the store's file: nothing is cached twice. */
static int lazy_open(const char *path, struct fuse_file_info *fi)
{
	struct lazy *lz = get_lazy();
	uint8_t digest[CFS_DIGEST_SIZE];
	char rel[CFS_OBJECT_PATH_SIZE];
	int fd;

	if (classify_path(path, digest) != K_OBJECT)
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	cfs_object_path(digest, rel);
	fd = openat(lz->storefd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int lazy_read(const char *path, char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	ssize_t n;

	(void)path;
	n = pread((int)fi->fh, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int lazy_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close((int)fi->fh);
	return 0;
}

/* The root lists every xx; an xx lists the objects the store holds. */
static int lazy_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct lazy *lz = get_lazy();
	uint8_t digest[CFS_DIGEST_SIZE];
	struct dirent *de;
	DIR *d;
	int fd;

	(void)off, (void)fi, (void)flags;
	switch (classify_path(path, digest)) {
	case K_ROOT:
		fill(buf, ".", NULL, 0, 0);
		fill(buf, "..", NULL, 0, 0);
		for (int i = 0; i < 256; i++) {
			char name[3];

			snprintf(name, sizeof(name), "%02x", i);
			fill(buf, name, NULL, 0, 0);
		}
		return 0;
	case K_DIR:
		break;
	default:
		return -ENOTDIR;
	}
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fd = openat(lz->storefd, path + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)))
		if (strlen(de->d_name) == 62 && lower_hex(de->d_name, 62))
			fill(buf, de->d_name, NULL, 0, 0);
	closedir(d);
	return 0;
}

static int lazy_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	return fstatvfs(get_lazy()->storefd, sv) < 0 ? -errno : 0;
}

static void *lazy_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* Answers are not cached: a failed lookup is asked again next time. */
	cfg->negative_timeout = 0;
	cfg->use_ino = 0;
	return get_lazy();
}

static const struct fuse_operations lazy_ops = {
	.init = lazy_init,
	.getattr = lazy_getattr,
	.open = lazy_open,
	.read = lazy_read,
	.release = lazy_release,
	.readdir = lazy_readdir,
	.statfs = lazy_statfs,
};

static int serve(struct lazy *lz, const char *mountpoint)
{
	char *fargv[] = { "cfsctl-lazy", "-o",
			  "ro,default_permissions,fsname=cfs-lazy,subtype=cfs-lazy", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_loop_config *cfg;
	struct fuse *fuse;
	int rc = EXIT_FAIL, ret;

	fuse = fuse_new(&args, &lazy_ops, sizeof(lazy_ops), lz);
	fuse_opt_free_args(&args); /* what parsing them allocated */
	if (!fuse) {
		cli_error("lazy: cannot start FUSE");
		return EXIT_FAIL;
	}
	if (fuse_mount(fuse, mountpoint) != 0) {
		cli_error("lazy: mounting FUSE on '%s' failed (is /dev/fuse there, and fuse.ko loaded?)",
			  mountpoint);
		goto out_destroy;
	}
	if (fuse_set_signal_handlers(fuse_get_session(fuse)) != 0) {
		cli_error("lazy: cannot install signal handlers");
		goto out_unmount;
	}
	cfg = fuse_loop_cfg_create();
	if (!cfg) {
		cli_error("lazy: %s", strerror(ENOMEM));
		goto out_signals;
	}
	/* Every waiting lookup holds a thread: room for all jobs and their waiters. */
	fuse_loop_cfg_set_max_threads(cfg, lz->m.jobs * 4 < 64 ? 64 : lz->m.jobs * 4);
	ret = fuse_loop_mt(fuse, cfg);
	fuse_loop_cfg_destroy(cfg);
	/* a signal ends the loop with 0 (or the signal's number): a clean stop */
	rc = ret < 0 ? EXIT_FAIL : EXIT_OK;
	if (ret < 0)
		cli_error("lazy: serving '%s': %s", mountpoint, strerror(-ret));
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
	return rc;
}

/* cfsctl lazy --help, and its man page (docs/mkman.py) */
const char cmd_lazy_usage[] =
	  "Usage: cfsctl lazy [OPTIONS] --store DIR --url URL[,URL...] MOUNTPOINT\n"
	  "\n"
	  "Mount on MOUNTPOINT a FUSE filesystem that looks like a digest store\n"
	  "(xx/<62 hex digits>) and fills the local store DIR. Looking up an object\n"
	  "that DIR lacks downloads it from the mirrors, verifies its fs-verity\n"
	  "digest against its name, links it into DIR (fs-verity enabled where the\n"
	  "filesystem supports it) and only then answers. Used as a later basedir\n"
	  "of a composefs mount (basedir=DIR:MOUNTPOINT), it makes an image usable\n"
	  "at once over an empty store: the module opens each object from DIR once\n"
	  "it is there. Lookups of one object share one download; different objects\n"
	  "download in parallel. A lookup fails with ENOENT when no mirror has the\n"
	  "object, EIO when what a mirror sent does not verify, ETIMEDOUT when the\n"
	  "fetch takes longer than --timeout; the reason goes to stderr and nothing\n"
	  "partial is left in DIR. Directories list only what DIR holds. Reading a\n"
	  "file of MOUNTPOINT reads DIR's file.\n"
	  "\n"
	  "It runs in the foreground until MOUNTPOINT is unmounted or it receives\n"
	  "SIGINT, SIGTERM or SIGHUP, then unmounts MOUNTPOINT and exits.\n"
	  "\n"
	  "Options:\n"
	  "  --store DIR        the local digest store to fill (created if missing)\n"
	  "  --url URL[,URL...] mirrors serving a digest store (http://, https://,\n"
	  "                     file://), tried in order; may be repeated. A URL's\n"
	  "                     USER:PASSWORD@ is never printed, and is hidden from\n"
	  "                     ps once read; give credentials with --authfile\n"
	  "                     instead\n"
	  "  --authfile FILE    the mirrors' credentials (HTTP Basic) in FILE, in\n"
	  "                     containers-auth.json(5) format, as for cfsctl fetch\n"
	  "  -j, --jobs N       downloads in flight at once (default 16, at most 256)\n"
	  "  --retries N        retries per mirror after a transient error (default 3),\n"
	  "                     with exponential backoff; then the next mirror\n"
	  "  --timeout SECONDS  the longest a lookup waits for its object, and the\n"
	  "                     longest a connection attempt or a stalled transfer\n"
	  "                     may take (default 30)\n"
	  "  --cacert FILE      trust the CA certificates in FILE (PEM) for https\n"
	  "                     mirrors instead of the system CA store\n"
	  "  --max-object-size SIZE\n"
	  "                     refuse an object once a mirror has sent more than\n"
	  "                     SIZE bytes of it (K, M, G, T: powers of 1024;\n"
	  "                     0: no limit; default 4G)\n"
	  "  --reserve SIZE     never fill the store's filesystem beyond SIZE bytes\n"
	  "                     free: an object that would is refused, and nothing\n"
	  "                     of it is left (default: 5% of it, at most 1G)\n"
	  "  --stats FILE       keep FILE up to date with the counts as JSON (replaced\n"
	  "                     after each fetch, with every latency at exit)\n"
	  "  --json             print the counts as JSON on stdout at exit: lookups,\n"
	  "                     local (answered by DIR), fetched, bytes, present,\n"
	  "                     unavailable, failed, timeouts, coalesced (lookups\n"
	  "                     that joined a download in flight), retries, rejected,\n"
	  "                     in_flight, first_open_ms {count, mean, max} and\n"
	  "                     first_open_ms_each (first lookup to answer, per\n"
	  "                     fetched object)\n"
	  "  -h, --help         show this help\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl lazy --store objects --url https://mirror.example/objects /run/cfs-lazy &\n"
	  "  cfsctl mount --basedir objects --lazy-url https://mirror.example/objects rootfs.cfs /mnt\n"
	  "\n"
	  "Exit status: 0 after a clean unmount, 1 failure, 2 usage error.\n";

int cmd_lazy(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "store", required_argument, NULL, 's' },
		CLI_MIRRORS_LONG_OPTIONS,
		{ "stats", required_argument, NULL, 'S' },
		{ "max-object-size", required_argument, NULL, 'M' },
		{ "reserve", required_argument, NULL, 'R' },
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	struct lazy lz = {
		.storefd = -1, .max_object_size = LAZY_MAX_OBJECT_SIZE, .reserve = CFS_RESERVE_AUTO,
	};
	const char *max_arg = NULL, *reserve_arg = NULL;
	const struct cli_var vars[] = {
		{ 's', .str = &lz.store },
		{ 'S', .str = &lz.stats_file },
		{ 'M', .str = &max_arg },
		{ 'R', .str = &reserve_arg },
		{ CLI_OPT_JSON, .flag = &lz.json },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "lazy", .shortopts = "s:u:j:h", .longopts = longopts,
		.help = cmd_lazy_usage, .vars = vars, .mirrors = &lz.m,
	};
	const char *mountpoint;
	struct stat st;
	int rc, ret;

	cli_mirrors_init(&lz.m);
	rc = cli_parse(&p, argc, argv);
	if (rc >= 0)
		goto out;
	if (!lz.store) {
		rc = cli_usage("lazy", "--store DIR is required");
		goto out;
	}
	if (max_arg && cli_parse_size(max_arg, &lz.max_object_size) < 0) {
		rc = cli_usage("lazy", "--max-object-size wants a size (K, M, G, T), not '%s'", max_arg);
		goto out;
	}
	if (reserve_arg && cli_parse_size(reserve_arg, &lz.reserve) < 0) {
		rc = cli_usage("lazy", "--reserve wants a size (K, M, G, T), not '%s'", reserve_arg);
		goto out;
	}
	rc = cli_mirrors_check_urls(&lz.m, "lazy");
	if (rc != EXIT_OK)
		goto out;
	rc = cli_mirrors_logins(&lz.m, "lazy");
	if (rc != EXIT_OK)
		goto out;
	if (optind + 1 != argc) {
		rc = cli_usage("lazy", optind >= argc ? "no MOUNTPOINT given" : "too many arguments");
		goto out;
	}
	mountpoint = argv[optind];
	rc = EXIT_FAIL;
	lz.umask = umask(0);
	umask(lz.umask);
	if (cli_mirrors_check_cacert(&lz.m, "lazy") != EXIT_OK)
		goto out;
	lz.storefd = cfs_store_dir_open(lz.store); /* made private when new */
	if (lz.storefd < 0)
		goto out; /* said, naming the store */
	if (stat(mountpoint, &st) < 0) {
		cli_error("lazy: mount point: '%s': %s", mountpoint, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		cli_error("lazy: mount point: '%s': %s", mountpoint, strerror(ENOTDIR));
		goto out;
	}
	/* One libcurl initialisation for all fetch threads. */
	if (cfs_fetch_init() < 0) {
		cli_error("lazy: cannot initialise libcurl");
		goto out;
	}
	pthread_mutex_init(&lz.lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&lz.cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	rc = serve(&lz, mountpoint);

	pthread_mutex_lock(&lz.lock);
	/* Let fetches still running end (each is bounded by the curl timeouts). */
	{
		struct timespec deadline;

		clock_gettime(CLOCK_MONOTONIC, &deadline);
		deadline.tv_sec += lz.m.timeout;
		while (lz.threads > 0 &&
		       pthread_cond_timedwait(&lz.cond, &lz.lock, &deadline) != ETIMEDOUT)
			;
	}
	ret = save_stats(&lz, true);
	if (ret < 0) {
		cli_error("lazy: writing stats: '%s': %s", lz.stats_file, strerror(-ret));
		rc = EXIT_FAIL;
	}
	if (lz.json && (ret = write_stats(&lz, stdout, true)) < 0) {
		cli_error("lazy: the JSON counts: %s", strerror(-ret));
		rc = EXIT_FAIL;
	}
	pthread_mutex_unlock(&lz.lock);
	if (lz.json && cli_close_stdout() != EXIT_OK)
		rc = EXIT_FAIL;
	/*
	 * A fetch still running now is abandoned with the process: its
	 * temporary has no name (or is removed by the next fetch into the
	 * store), so nothing partial is left.
	 */
	if (lz.threads == 0) {
		free(lz.st.latency_ms);
		cfs_fetch_exit();
	}
out:
	if (lz.storefd >= 0)
		close(lz.storefd);
	cli_mirrors_free(&lz.m);
	return rc;
}
