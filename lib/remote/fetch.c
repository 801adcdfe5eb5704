// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The download engine of cfsctl fetch. One thread drives a libcurl multi
 * handle with up to opts->jobs transfers in flight (connections are reused,
 * HTTP/2 streams multiplexed where the server offers it); each transfer
 * streams into its own temporary file in the store directory. A finished
 * transfer goes to a small pool of worker threads that compute its fs-verity
 * digest with one sequential read of the still page-cache-hot file, compare
 * digest and size, fsync, link it under its final name and enable fs-verity;
 * so hashing and fsync never stall the network loop. We hash after the
 * transfer rather than through a pipe while it streams because
 * libfsverity_compute_digest() pulls its input through a read callback: a
 * pipe would need a thread per transfer in flight, while the second read
 * costs one memory copy per byte.
 *
 * Failures are sorted into "transient" (connection reset, timeout, HTTP
 * 5xx/408/429, a short body: retried with exponential backoff on the same
 * mirror), "not found" (HTTP 404/410, missing file:// file: next mirror),
 * "bad content" (too long, wrong digest: next mirror, never retried on the
 * same one) and "permanent" (other HTTP errors: next mirror).
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "store/index.h"
#include "cfs/fetch.h"
#include "http.h"
#include "cfs-format.h"
#include "base/internal.h"

#define TMP_PREFIX CFS_FETCH_TMP_PREFIX
/* Mostly waiting in fsync: more threads than CPUs let the journal batch. */
#define MAX_FINISHERS 8

enum outcome {
	OUT_OK, /* verified and installed */
	OUT_PRESENT, /* the final name existed already */
	OUT_TRANSIENT, /* retry on this mirror */
	OUT_NOTFOUND, /* next mirror; unavailable if all say so */
	OUT_BAD, /* bad content or permanent error: next mirror */
	OUT_DOWN, /* cannot connect at all: next mirror, skip this one from now on */
	OUT_LOCAL, /* a local error (disk full, ...): give up on the object */
};

struct xfer {
	struct fetch *f;
	size_t obj; /* index into objs */
	uint64_t size; /* what the object must have */
	unsigned int mirror;
	unsigned int attempt; /* attempts so far on this mirror */
	unsigned int notfound; /* mirrors that said "not found" */
	int fd; /* the temporary file, -1 before the first attempt */
	char tmpname[64]; /* named temporary file, "" for O_TMPFILE */
	uint64_t written;
	bool too_long;
	bool stalled;
	bool no_room; /* writing on would eat into opts->reserve */
	int write_err;
	double last_data; /* now_ms() when data last came in */
	CURL *easy;
	char url[4200];
	char errbuf[CURL_ERROR_SIZE];
	struct timespec due; /* when a retry may start */
	enum outcome outcome; /* set by a finisher */
	bool rejected; /* the content was wrong: too long, or another digest */
	char why[160]; /* detail of the outcome */
	struct xfer *next;
};

struct fetch {
	struct cfs_fetch_object *objs;
	size_t n;
	const struct cfs_fetch_options *opts;
	struct cfs_fetch_stats st;
	int dirfd;
	int lock_fd; /* the store lock, shared */
	bool use_tmpfile;
	bool *mirror_down;
	unsigned int jobs, retries, timeout, delay_ms;
	CURLM *multi;
	unsigned long tmpcount;
	bool dir_touched[256]; /* xx/ written; fsync it at the end */
	bool no_verity; /* the store's filesystem cannot do fs-verity */
	/* opts->reserve: bytes the transfers may still write before the next look */
	int64_t space_left;
	uint64_t free_seen, reserve_seen; /* at the last look, for the message */

	struct xfer *waiting; /* retries, unsorted */
	unsigned int active; /* transfers in curl */
	unsigned int inproc; /* objects started and not finished */
	uint64_t inflight; /* bytes received by transfers in curl */
	unsigned int finishing; /* transfers with the finishers */

	/* shared with the finisher threads, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct xfer *todo, **todo_tail;
	struct xfer *finished;
	bool stop;
	pthread_t threads[MAX_FINISHERS];
	unsigned int n_threads;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void object_path(const struct cfs_fetch_object *o, char path[CFS_OBJECT_PATH_SIZE])
{
	cfs_object_path(o->digest, path);
}

/* ---- temporary files ---- */

static int open_tmpfile(struct fetch *f, struct xfer *x)
{
	int fd;

	if (f->use_tmpfile) {
		fd = openat(f->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, CFS_OBJECT_MODE);
		if (fd >= 0)
			goto out;
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -errno;
		f->use_tmpfile = false; /* the filesystem cannot: named files */
	}
	snprintf(x->tmpname, sizeof(x->tmpname), TMP_PREFIX "%ld.%lu", (long)getpid(),
		 ++f->tmpcount);
	fd = openat(f->dirfd, x->tmpname, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC,
		    CFS_OBJECT_MODE);
	if (fd < 0) {
		x->tmpname[0] = '\0';
		return -errno;
	}
out:
	/* whatever the umask, an object is its owner's to read alone (0400) */
	fchmod(fd, CFS_OBJECT_MODE);
	x->fd = fd;
	return 0;
}

static void drop_tmpfile(struct fetch *f, struct xfer *x)
{
	cfs_tmpfile_drop(f->dirfd, &x->fd, x->tmpname);
}

/* ---- the finisher threads: verify, fsync, install ---- */

static enum outcome set_why(struct xfer *x, enum outcome o, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum outcome set_why(struct xfer *x, enum outcome o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->why, sizeof(x->why), fmt, ap);
	va_end(ap);
	return o;
}

/* Link the verified temporary file @x->fd as @name in @dirfd; -EEXIST if taken. */
static int link_into_place(struct fetch *f, struct xfer *x, int dirfd, const char *name)
{
	char proc[64];

	if (x->tmpname[0]) {
		if (linkat(f->dirfd, x->tmpname, dirfd, name, 0) < 0)
			return -errno;
		unlinkat(f->dirfd, x->tmpname, 0);
		x->tmpname[0] = '\0';
		return 0;
	}
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; /proc works for everyone */
	if (linkat(x->fd, "", dirfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno == EEXIST)
		return -EEXIST;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", x->fd);
	if (linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	return 0;
}

static enum outcome finish_one(struct fetch *f, struct xfer *x)
{
	struct cfs_fetch_object *o = &f->objs[x->obj];
	uint8_t digest[CFS_DIGEST_SIZE];
	char path[CFS_OBJECT_PATH_SIZE];
	char want[CFS_DIGEST_HEX_SIZE], got[CFS_DIGEST_HEX_SIZE];
	bool no_verity;
	struct stat st;
	int ret, rfd, d, dirfd;

	if (fstat(x->fd, &st) < 0)
		return set_why(x, OUT_LOCAL, "temporary file: %s", strerror(errno));
	if (o->size != CFS_FETCH_SIZE_UNKNOWN && (uint64_t)st.st_size != o->size)
		return set_why(x, OUT_TRANSIENT, "got %llu of %llu bytes",
			       (unsigned long long)st.st_size, (unsigned long long)o->size);
	ret = cfs_verity_digest_fd(x->fd, digest);
	if (ret < 0)
		return set_why(x, OUT_LOCAL, "computing digest: %s", strerror(-ret));
	if (memcmp(digest, o->digest, CFS_DIGEST_SIZE) != 0) {
		cfs_digest_to_hex(o->digest, want);
		cfs_digest_to_hex(digest, got);
		x->rejected = true;
		return set_why(x, OUT_BAD, "content has fs-verity digest %.16s..., not %.16s...",
			       got, want);
	}
	if (fsync(x->fd) < 0)
		return set_why(x, OUT_LOCAL, "fsync: %s", strerror(errno));

	object_path(o, path);
	d = (cfs_xdigit_value(path[0]) << 4) | cfs_xdigit_value(path[1]);
	for (int tries = 0;; tries++) {
		dirfd = cfs_object_dir_open(f->dirfd, path);
		if (dirfd == -ENOTDIR)
			return set_why(x, OUT_LOCAL,
				       "'%.2s' is a symlink or not a directory: refusing to write through it",
				       path);
		if (dirfd < 0)
			return set_why(x, OUT_LOCAL, "opening '%.2s': %s", path, strerror(-dirfd));
		ret = link_into_place(f, x, dirfd, path + 3);
		if (ret != -ENOENT || tries > 0)
			break;
		close(dirfd); /* someone removed xx/ under us */
	}
	if (ret == -EEXIST) {
		close(dirfd);
		return OUT_PRESENT;
	}
	if (ret < 0) {
		close(dirfd);
		return set_why(x, OUT_LOCAL, "installing '%s': %s", path, strerror(-ret));
	}
	pthread_mutex_lock(&f->lock);
	f->dir_touched[d] = true;
	no_verity = f->no_verity;
	pthread_mutex_unlock(&f->lock);

	/* fs-verity wants a read-only file with no writer left */
	close(x->fd);
	x->fd = -1;
	rfd = no_verity ? -1 : openat(dirfd, path + 3, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	close(dirfd);
	if (rfd >= 0) {
		ret = cfs_verity_enable_fd(rfd);
		pthread_mutex_lock(&f->lock);
		if (ret == 0 || ret == -EEXIST)
			f->st.verity_enabled++;
		else if (ret == -EOPNOTSUPP)
			f->no_verity = true; /* do not ask again for every object */
		pthread_mutex_unlock(&f->lock);
		close(rfd);
	}
	return OUT_OK;
}

static void *finisher(void *arg)
{
	struct fetch *f = arg;
	struct xfer *x;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->todo && !f->stop)
			pthread_cond_wait(&f->cond, &f->lock);
		if (!f->todo)
			break;
		x = f->todo;
		f->todo = x->next;
		if (!f->todo)
			f->todo_tail = &f->todo;
		pthread_mutex_unlock(&f->lock);

		x->why[0] = '\0';
		x->outcome = finish_one(f, x);

		pthread_mutex_lock(&f->lock);
		x->next = f->finished;
		f->finished = x;
		curl_multi_wakeup(f->multi);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

/* ---- the transfers ---- */

/*
 * Room for @len more bytes in the store, keeping opts->reserve free. The
 * filesystem is asked once the room seen at the last look is spent (or
 * every 16 MiB); only the network thread writes, so no lock.
 */
#define SPACE_LOOK_EVERY ((int64_t)16 << 20)

static bool take_space(struct fetch *f, int fd, size_t len)
{
	uint64_t reserve = f->opts->reserve, avail, total;
	struct statvfs sv;

	if (reserve == 0)
		return true;
	if (f->space_left < (int64_t)len) {
		if (fstatvfs(fd, &sv) < 0)
			return true; /* the write says what is wrong, if anything */
		avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		total = (uint64_t)sv.f_blocks * sv.f_frsize;

		if (reserve == CFS_RESERVE_AUTO)
			reserve = total / 20 < CFS_RESERVE_AUTO_MAX ? total / 20 : CFS_RESERVE_AUTO_MAX;
		f->free_seen = avail;
		f->reserve_seen = reserve;
		f->space_left = avail > reserve ? (int64_t)(avail - reserve) : 0;
		if (f->space_left > SPACE_LOOK_EVERY)
			f->space_left = SPACE_LOOK_EVERY;
		if (f->space_left < (int64_t)len) {
			f->space_left = 0;
			return false;
		}
	}
	f->space_left -= (int64_t)len;
	return true;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct xfer *x = arg;
	size_t len = size * nmemb, left = len;
	uint64_t max = x->f->opts->max_size;

	if (x->too_long || x->write_err)
		return 0;
	/* the object's size is known: more is wrong, and saves a long download */
	if (x->size != CFS_FETCH_SIZE_UNKNOWN && len > x->size - x->written) {
		x->too_long = true;
		return 0;
	}
	/* unknown: a hostile mirror's endless body ends at the cap */
	if (x->size == CFS_FETCH_SIZE_UNKNOWN && max && len > max - x->written) {
		x->too_long = true;
		return 0;
	}
	if (!take_space(x->f, x->fd, len)) {
		x->no_room = true;
		x->write_err = ENOSPC;
		return 0;
	}
	while (left > 0) {
		ssize_t w = write(x->fd, data, left);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			x->write_err = errno;
			return 0;
		}
		data += w;
		left -= (size_t)w;
	}
	x->written += len;
	x->f->inflight += len;
	x->last_data = now_ms();
	return len;
}

/* Called by libcurl at least once a second: end a transfer that stalled. */
static int progress_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct xfer *x = arg;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (now_ms() - x->last_data > 1000.0 * x->f->timeout) {
		x->stalled = true;
		return 1;
	}
	return 0;
}

static int start_transfer(struct fetch *f, struct xfer *x)
{
	const struct cfs_fetch_object *o = &f->objs[x->obj];
	const char *base = f->opts->urls[x->mirror];
	size_t blen = strlen(base);
	char path[CFS_OBJECT_PATH_SIZE];
	int ret;

	while (blen > 0 && base[blen - 1] == '/')
		blen--;
	object_path(o, path);
	if (blen + 1 + strlen(path) + 1 > sizeof(x->url))
		return -ENAMETOOLONG;
	memcpy(x->url, base, blen);
	x->url[blen] = '/';
	strcpy(x->url + blen + 1, path);

	if (x->fd < 0) {
		ret = open_tmpfile(f, x);
		if (ret < 0)
			return ret;
	} else if (ftruncate(x->fd, 0) < 0 || lseek(x->fd, 0, SEEK_SET) < 0) {
		return -errno;
	}
	x->written = 0;
	x->too_long = false;
	x->no_room = false;
	x->stalled = false;
	x->last_data = now_ms();
	x->write_err = 0;
	x->errbuf[0] = '\0';

	if (!x->easy) {
		x->easy = curl_easy_init();
		if (!x->easy)
			return -ENOMEM;
	} else {
		curl_easy_reset(x->easy);
	}
	cfs_http_setup(x->easy, x->url, f->opts->cainfo, f->timeout);
	curl_easy_setopt(x->easy, CURLOPT_PROTOCOLS_STR, "http,https,file");
	curl_easy_setopt(x->easy, CURLOPT_PRIVATE, x);
	curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(x->easy, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(x->easy, CURLOPT_FAILONERROR, 1L);
	/*
	 * Over TLS the protocol (HTTP/2 or not) is settled in the handshake:
	 * wait for it and multiplex rather than open a connection per
	 * transfer. Plain http:// never upgrades, so waiting would only
	 * serialise transfers behind a slow one.
	 */
	if (strncmp(x->url, "https://", 8) == 0)
		curl_easy_setopt(x->easy, CURLOPT_PIPEWAIT, 1L);
	/* a transfer that receives nothing for 'timeout' seconds has stalled */
	curl_easy_setopt(x->easy, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(x->easy, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(x->easy, CURLOPT_NOPROGRESS, 0L);
	if (o->size != CFS_FETCH_SIZE_UNKNOWN)
		curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->size);
	else if (f->opts->max_size)
		curl_easy_setopt(x->easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)f->opts->max_size);
	if (f->opts->logins && f->opts->logins[x->mirror].user) {
		/* not in the URL, where messages would show it; no other host gets it */
		curl_easy_setopt(x->easy, CURLOPT_USERNAME, f->opts->logins[x->mirror].user);
		curl_easy_setopt(x->easy, CURLOPT_PASSWORD, f->opts->logins[x->mirror].password ?
								    f->opts->logins[x->mirror].password : "");
		curl_easy_setopt(x->easy, CURLOPT_UNRESTRICTED_AUTH, 0L);
	}
	if (curl_multi_add_handle(f->multi, x->easy) != CURLM_OK)
		return -ENOMEM;
	f->active++;
	return 0;
}

/* Sort a finished transfer's result; says what the object goes on with. */
static enum outcome classify(struct fetch *f, struct xfer *x, CURLcode res)
{
	const struct cfs_fetch_object *o = &f->objs[x->obj];
	long code = 0;

	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (x->no_room)
		return set_why(x, OUT_LOCAL,
			       "the store's filesystem has %llu bytes free, and %llu are kept free (--reserve)",
			       (unsigned long long)f->free_seen, (unsigned long long)f->reserve_seen);
	if (x->write_err)
		return set_why(x, OUT_LOCAL, "writing temporary file: %s", strerror(x->write_err));
	/* an error status first: its body may be longer than the object */
	if (code >= 400)
		res = CURLE_HTTP_RETURNED_ERROR;
	if (x->too_long || res == CURLE_FILESIZE_EXCEEDED) {
		x->rejected = true;
		if (o->size == CFS_FETCH_SIZE_UNKNOWN)
			return set_why(x, OUT_BAD,
				       "server sent more than %llu bytes, the most an object may have",
				       (unsigned long long)f->opts->max_size);
		return set_why(x, OUT_BAD, "server sent more than %llu bytes",
			       (unsigned long long)o->size);
	}
	if (x->stalled)
		return set_why(x, OUT_TRANSIENT, "no data received for %u s", f->timeout);
	switch (res) {
	case CURLE_OK:
		if (o->size != CFS_FETCH_SIZE_UNKNOWN && x->written < o->size)
			return set_why(x, OUT_TRANSIENT, "body ended after %llu of %llu bytes",
				       (unsigned long long)x->written,
				       (unsigned long long)o->size);
		return OUT_OK; /* to the finishers */
	case CURLE_HTTP_RETURNED_ERROR:
		if (code == 404 || code == 410)
			return set_why(x, OUT_NOTFOUND, "HTTP %ld (not found)", code);
		if (cfs_http_transient(res, code))
			return set_why(x, OUT_TRANSIENT, "HTTP %ld", code);
		return set_why(x, OUT_BAD, "HTTP %ld", code);
	case CURLE_FILE_COULDNT_READ_FILE:
		return set_why(x, OUT_NOTFOUND, "%s", x->errbuf[0] ? x->errbuf : "not found");
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return set_why(x, OUT_DOWN, "%s", x->errbuf[0] ? x->errbuf : curl_easy_strerror(res));
	default:
		return set_why(x, cfs_http_transient(res, 0) ? OUT_TRANSIENT : OUT_BAD, "%s",
			       x->errbuf[0] ? x->errbuf : curl_easy_strerror(res));
	}
}

static void finish_object(struct fetch *f, struct xfer *x, enum cfs_fetch_status status,
			  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Record @x's object as done with @status and, for a failure, why. */
static void finish_object(struct fetch *f, struct xfer *x, enum cfs_fetch_status status,
			  const char *fmt, ...)
{
	struct cfs_fetch_object *o = &f->objs[x->obj];
	va_list ap;

	o->status = status;
	if (fmt) {
		va_start(ap, fmt);
		if (vasprintf(&o->reason, fmt, ap) < 0)
			o->reason = NULL;
		va_end(ap);
	}
	switch (status) {
	case CFS_FETCH_FETCHED:
		f->st.fetched++;
		f->st.bytes_fetched += o->size == CFS_FETCH_SIZE_UNKNOWN ? x->written : o->size;
		break;
	case CFS_FETCH_PRESENT:
		f->st.present++;
		break;
	case CFS_FETCH_UNAVAILABLE:
		f->st.unavailable++;
		break;
	default:
		f->st.failed++;
		break;
	}
	f->st.bytes_done += o->size == CFS_FETCH_SIZE_UNKNOWN ? x->written : o->size;
	f->st.done++;
	f->inproc--;
	drop_tmpfile(f, x);
	if (x->easy)
		curl_easy_cleanup(x->easy);
	free(x);
}

/* The first mirror from @from on that is not known to be down, or n_urls. */
static unsigned int next_mirror(struct fetch *f, unsigned int from)
{
	while (from < f->opts->n_urls && f->mirror_down[from])
		from++;
	return from;
}

/* Act on @out, the outcome of @x's current attempt. */
static void advance(struct fetch *f, struct xfer *x, enum outcome out)
{
	unsigned int m;

	if (out == OUT_OK) {
		finish_object(f, x, CFS_FETCH_FETCHED, NULL);
		return;
	}
	if (out == OUT_PRESENT) {
		finish_object(f, x, CFS_FETCH_PRESENT, NULL);
		return;
	}
	if (out == OUT_LOCAL) {
		finish_object(f, x, CFS_FETCH_FAILED, "%s", x->why);
		return;
	}
	if (x->rejected)
		f->st.rejected++;
	x->rejected = false;
	if ((out == OUT_TRANSIENT || out == OUT_DOWN) && x->attempt <= f->retries) {
		double due = now_ms() + cfs_http_backoff_ms(f->delay_ms, x->attempt);

		x->due.tv_sec = (time_t)(due / 1e3);
		x->due.tv_nsec = (long)((due - (double)x->due.tv_sec * 1e3) * 1e6);
		f->st.retries++;
		x->next = f->waiting;
		f->waiting = x;
		return;
	}
	if (out == OUT_DOWN)
		f->mirror_down[x->mirror] = true;
	if (out == OUT_NOTFOUND)
		x->notfound++;
	m = next_mirror(f, x->mirror + 1);
	if (m < f->opts->n_urls) {
		x->mirror = m;
		x->attempt = 0;
		x->due.tv_sec = 0;
		x->due.tv_nsec = 0;
		x->next = f->waiting;
		f->waiting = x;
		return;
	}
	if (x->notfound == f->opts->n_urls)
		finish_object(f, x, CFS_FETCH_UNAVAILABLE, "not found on any mirror");
	else if (f->opts->n_urls > 1)
		finish_object(f, x, CFS_FETCH_FAILED, "no mirror served it; last: %s", x->why);
	else
		finish_object(f, x, CFS_FETCH_FAILED, "%s", x->why);
}

static double due_ms(const struct xfer *x)
{
	return (double)x->due.tv_sec * 1e3 + (double)x->due.tv_nsec / 1e6;
}

/* Start @x's next attempt, or give up on it when its mirror went down. */
static void launch(struct fetch *f, struct xfer *x)
{
	int ret;

	if (f->mirror_down[x->mirror]) {
		x->attempt = f->retries + 1;
		char url[sizeof(x->url)];

		snprintf(x->why, sizeof(x->why), "mirror '%s' is down",
			 cfs_url_redact(f->opts->urls[x->mirror], url, sizeof(url)));
		advance(f, x, OUT_DOWN);
		return;
	}
	x->attempt++;
	ret = start_transfer(f, x);
	if (ret < 0) {
		set_why(x, OUT_LOCAL, "starting transfer: %s", strerror(-ret));
		advance(f, x, OUT_LOCAL);
	}
}

/* Start transfers: due retries first, then new objects. */
static void fill(struct fetch *f, size_t *next_obj)
{
	double now = now_ms();
	struct xfer **pp = &f->waiting, *x;

	while (*pp && f->active < f->jobs) {
		x = *pp;
		if (due_ms(x) <= now) {
			*pp = x->next;
			launch(f, x);
		} else {
			pp = &x->next;
		}
	}
	/* keep the number of open temporary files bounded */
	while (*next_obj < f->n && f->active < f->jobs &&
	       f->inproc < 2 * f->jobs + 2 * MAX_FINISHERS) {
		x = calloc(1, sizeof(*x));
		if (!x) {
			f->objs[*next_obj].reason = strdup("out of memory");
			f->objs[*next_obj].status = CFS_FETCH_FAILED;
			f->st.failed++;
			f->st.done++;
			(*next_obj)++;
			continue;
		}
		x->f = f;
		x->obj = (*next_obj)++;
		x->size = f->objs[x->obj].size;
		x->fd = -1;
		f->inproc++;
		x->mirror = next_mirror(f, 0);
		if (x->mirror == f->opts->n_urls) {
			x->mirror = 0; /* every mirror is down: launch() gives up */
		}
		launch(f, x);
	}
}

static void collect_curl(struct fetch *f)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(f->multi, &left))) {
		struct xfer *x = NULL;
		enum outcome out;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		out = classify(f, x, msg->data.result);
		f->inflight -= x->written;
		curl_multi_remove_handle(f->multi, x->easy);
		f->active--;
		if (out != OUT_OK) {
			advance(f, x, out);
			continue;
		}
		pthread_mutex_lock(&f->lock);
		x->next = NULL;
		*f->todo_tail = x;
		f->todo_tail = &x->next;
		f->finishing++;
		pthread_cond_signal(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
}

static void collect_finished(struct fetch *f)
{
	struct xfer *list, *x;

	pthread_mutex_lock(&f->lock);
	list = f->finished;
	f->finished = NULL;
	pthread_mutex_unlock(&f->lock);
	while ((x = list)) {
		list = x->next;
		f->finishing--;
		advance(f, x, x->outcome);
	}
}

static void report(struct fetch *f, double *last, bool force)
{
	double now = now_ms();
	struct cfs_fetch_stats st;

	if (!f->opts->progress || (!force && now - *last < 500))
		return;
	*last = now;
	pthread_mutex_lock(&f->lock);
	st = f->st;
	pthread_mutex_unlock(&f->lock);
	st.bytes_done += f->inflight;
	f->opts->progress(f->opts->progress_ctx, &st);
}

static void sync_dirs(struct fetch *f)
{
	for (int i = 0; i < 256; i++) {
		char dir[3];
		int fd;

		if (!f->dir_touched[i])
			continue;
		snprintf(dir, sizeof(dir), "%02x", i);
		fd = openat(f->dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd);
			close(fd);
		}
	}
	fsync(f->dirfd);
}

static int check_options(const struct cfs_fetch_options *opts)
{
	if (!opts->basedir || !opts->urls || opts->n_urls == 0) {
		cfs_msg("fetch: need a store directory and at least one URL");
		return -EINVAL;
	}
	for (size_t i = 0; i < opts->n_urls; i++) {
		const char *u = opts->urls[i];

		if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0 &&
		    strncmp(u, "file://", 7) != 0) {
			char url[4200];

			cfs_msg("fetch: '%s': only http://, https:// and file:// URLs are supported",
				cfs_url_redact(u, url, sizeof(url)));
			return -EINVAL;
		}
	}
	return 0;
}

int cfs_fetch_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -EIO;
}

void cfs_fetch_exit(void)
{
	curl_global_cleanup();
}

int cfs_fetch_objects(struct cfs_fetch_object *objs, size_t n,
		      const struct cfs_fetch_options *opts, struct cfs_fetch_stats *stats)
{
	struct fetch f = { 0 };
	size_t next_obj = 0;
	double last_report = 0;
	unsigned int nthreads;
	struct cfs_index *index;
	int ret;

	ret = check_options(opts);
	if (ret < 0)
		return ret;
	f.objs = objs;
	f.n = n;
	f.opts = opts;
	f.jobs = opts->jobs ? opts->jobs : CFS_FETCH_DEFAULT_JOBS;
	f.retries = opts->retries;
	f.timeout = opts->timeout ? opts->timeout : CFS_FETCH_DEFAULT_TIMEOUT;
	f.delay_ms = opts->retry_delay_ms ? opts->retry_delay_ms : 250;
	f.use_tmpfile = !opts->no_tmpfile;
	f.todo_tail = &f.todo;
	for (size_t i = 0; i < n; i++) {
		objs[i].status = CFS_FETCH_PENDING;
		objs[i].reason = NULL;
		f.st.total++;
		if (objs[i].size != CFS_FETCH_SIZE_UNKNOWN)
			f.st.bytes_total += objs[i].size;
	}

	f.dirfd = open(opts->basedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f.dirfd < 0) {
		ret = -errno;
		cfs_msg("fetch: opening store '%s': %s", opts->basedir, strerror(errno));
		return ret;
	}
	/* Shared, until the objects are in place and synced: gc waits for us. */
	f.lock_fd = cfs_store_lock(f.dirfd, false, true);
	if (f.lock_fd < 0) {
		ret = f.lock_fd;
		cfs_msg("fetch: locking store '%s': %s", opts->basedir, strerror(-ret));
		goto out_dir;
	}
	cfs_remove_dead_tmpfiles(f.dirfd, TMP_PREFIX, CFS_FETCH_TMP_SEP);
	f.mirror_down = calloc(opts->n_urls, sizeof(bool));
	if (!f.mirror_down) {
		ret = -ENOMEM;
		goto out_dir;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cfs_msg("fetch: cannot initialise libcurl");
		ret = -EIO;
		goto out_mirrors;
	}
	f.multi = curl_multi_init();
	if (!f.multi) {
		ret = -ENOMEM;
		goto out_global;
	}
	curl_multi_setopt(f.multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	curl_multi_setopt(f.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)f.jobs);
	curl_multi_setopt(f.multi, CURLMOPT_MAXCONNECTS, (long)f.jobs);

	pthread_mutex_init(&f.lock, NULL);
	pthread_cond_init(&f.cond, NULL);
	nthreads = f.jobs < MAX_FINISHERS ? f.jobs : MAX_FINISHERS;
	for (f.n_threads = 0; f.n_threads < nthreads; f.n_threads++) {
		if (pthread_create(&f.threads[f.n_threads], NULL, finisher, &f) != 0)
			break;
	}
	if (f.n_threads == 0) {
		cfs_msg("fetch: cannot start a worker thread");
		ret = -EAGAIN;
		goto out_threads;
	}

	while (next_obj < n || f.inproc) {
		int running, timeout_ms = 500;

		fill(&f, &next_obj);
		curl_multi_perform(f.multi, &running);
		collect_curl(&f);
		collect_finished(&f);
		report(&f, &last_report, false);
		if (!(next_obj < n || f.inproc))
			break;
		if (f.waiting && f.active < f.jobs) {
			double now = now_ms(), soonest = 1e300;

			for (struct xfer *x = f.waiting; x; x = x->next)
				if (due_ms(x) < soonest)
					soonest = due_ms(x);
			if (soonest - now < timeout_ms)
				timeout_ms = soonest <= now ? 0 : (int)(soonest - now) + 1;
		}
		curl_multi_poll(f.multi, NULL, 0, timeout_ms, NULL);
	}
	sync_dirs(&f);
	report(&f, &last_report, true);
	ret = (int)(f.st.failed + f.st.unavailable);
	/* A repository's sha256 index learns the objects fetched (index.c). */
	if (cfs_index_open(f.dirfd, &index) == 0) {
		for (size_t i = 0; i < n; i++)
			if (objs[i].status == CFS_FETCH_FETCHED)
				cfs_index_learn(index, f.dirfd, objs[i].digest);
		cfs_index_close(index);
	}

out_threads:
	pthread_mutex_lock(&f.lock);
	f.stop = true;
	pthread_cond_broadcast(&f.cond);
	pthread_mutex_unlock(&f.lock);
	for (unsigned int i = 0; i < f.n_threads; i++)
		pthread_join(f.threads[i], NULL);
	pthread_cond_destroy(&f.cond);
	pthread_mutex_destroy(&f.lock);
	curl_multi_cleanup(f.multi);
out_global:
	curl_global_cleanup();
out_mirrors:
	free(f.mirror_down);
out_dir:
	cfs_store_unlock(f.lock_fd);
	close(f.dirfd);
	if (stats)
		*stats = f.st;
	return ret;
}
