/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The object download engine behind cfsctl fetch: brings a list of objects,
 * each named by its fs-verity digest and of a known size, from one or more
 * HTTP(S) or file:// mirrors that serve a digest store's layout
 * (URL/xx/<62 hex>) into a local store directory. Nothing the server sends is
 * trusted: an object is accepted only when its size and fs-verity digest
 * match, and it appears under its final name only complete, verified and
 * fsynced. Like the rest of libcfs it never prints; it reports through
 * cfs_msg(), the per-object results and a progress callback.
 */
#ifndef CFS_FETCH_H
#define CFS_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfs/store.h"
#include "cfs/util.h"

#define CFS_FETCH_DEFAULT_JOBS 16
#define CFS_FETCH_DEFAULT_RETRIES 3
#define CFS_FETCH_DEFAULT_TIMEOUT 30
/* struct cfs_fetch_object's size when only the digest names the object */
#define CFS_FETCH_SIZE_UNKNOWN UINT64_MAX

/**
 * enum cfs_fetch_status - what became of one object
 * @CFS_FETCH_PENDING: not finished (only seen while the fetch runs)
 * @CFS_FETCH_FETCHED: downloaded, verified and installed by this run
 * @CFS_FETCH_PRESENT: someone else installed it while this run was busy
 * @CFS_FETCH_UNAVAILABLE: every mirror answered "not found"
 * @CFS_FETCH_FAILED: anything else; the object's reason says what
 */
enum cfs_fetch_status {
	CFS_FETCH_PENDING = 0,
	CFS_FETCH_FETCHED,
	CFS_FETCH_PRESENT,
	CFS_FETCH_UNAVAILABLE,
	CFS_FETCH_FAILED,
};

/**
 * struct cfs_fetch_object - one object to bring, and what became of it
 * @digest: its fs-verity sha256 digest: names it and must match its content
 * @size: its size in bytes; the server must send exactly this much. Or
 *	  CFS_FETCH_SIZE_UNKNOWN: any size is taken, and the fs-verity digest
 *	  alone verifies the content (it covers the size)
 * @status: out
 * @reason: out: for UNAVAILABLE and FAILED, why (the last mirror's answer),
 *	    in memory from malloc() that the caller frees; otherwise NULL.
 *	    NULL also when there was no memory to say why.
 */
struct cfs_fetch_object {
	uint8_t digest[CFS_DIGEST_SIZE];
	uint64_t size;
	enum cfs_fetch_status status;
	char *reason;
};

/**
 * struct cfs_fetch_stats - counts of a fetch, as it runs and at the end
 *
 * @bytes_done counts the bytes of finished objects plus those received so far
 * for objects in flight, so it can go back when a transfer restarts.
 */
struct cfs_fetch_stats {
	uint64_t total; /* objects asked for */
	uint64_t bytes_total; /* their sizes summed */
	uint64_t done; /* objects finished, whatever the outcome */
	uint64_t bytes_done;
	uint64_t fetched; /* CFS_FETCH_FETCHED */
	uint64_t bytes_fetched;
	uint64_t present; /* CFS_FETCH_PRESENT */
	uint64_t unavailable;
	uint64_t failed;
	uint64_t retries; /* transfers restarted after a transient error */
	uint64_t rejected; /* transfers whose content did not verify */
	uint64_t verity_enabled; /* objects fs-verity was enabled on */
};

/** struct cfs_fetch_login - a mirror's credentials */
struct cfs_fetch_login {
	const char *user;
	const char *password;
};

/**
 * struct cfs_fetch_options - where from, where to, and how hard to try
 * @basedir: the store directory objects are installed in (as xx/<62 hex>)
 * @urls: mirror base URLs, tried in order; http, https and file
 * @n_urls: at least 1
 * @jobs: transfers in flight at once; 0: CFS_FETCH_DEFAULT_JOBS
 * @retries: restarts per mirror after a transient error (reset, timeout,
 *	     HTTP 5xx/408/429, short body) before the next mirror is tried
 * @timeout: seconds a connection attempt or a stalled transfer may take;
 *	     0: CFS_FETCH_DEFAULT_TIMEOUT
 * @retry_delay_ms: first backoff delay, doubled on each retry (capped at
 *	     10 s, with jitter); 0: 250
 * @cainfo: a PEM file of CA certificates to trust for https instead of the
 *	     system CA store (a private mirror), or NULL
 * @logins: NULL, or @n_urls entries: the user name and password of each
 *	     mirror (HTTP Basic auth, never sent to another host on a
 *	     redirect), a NULL user for none
 * @max_size: the most bytes an object of unknown size may have (a mirror
 *	     that sends more has it refused); 0: no limit
 * @reserve: bytes to keep free on @basedir's filesystem: an object that
 *	     would take them is refused, and its temporary removed; CFS_RESERVE_AUTO (cfs/build.h): 5% of it, at most 1 GiB;
 *	     0: none
 * @no_tmpfile: never use O_TMPFILE, always a named temporary file (tests)
 * @progress: called from the calling thread about twice a second while the
 *	     fetch runs, and once at the end; may be NULL
 */
struct cfs_fetch_options {
	const char *basedir;
	const char *const *urls;
	size_t n_urls;
	unsigned int jobs;
	unsigned int retries;
	unsigned int timeout;
	unsigned int retry_delay_ms;
	const char *cainfo;
	const struct cfs_fetch_login *logins;
	uint64_t max_size;
	uint64_t reserve;
	bool no_tmpfile;
	void (*progress)(void *ctx, const struct cfs_fetch_stats *stats);
	void *progress_ctx;
};

/**
 * cfs_fetch_objects() - download @objs into @opts->basedir
 * @objs: the objects, each listed once; their status and reason are set
 * @n: how many
 * @opts: see struct cfs_fetch_options
 * @stats: out, may be NULL: the final counts
 *
 * Each object is fetched from the first mirror that serves it, into a
 * temporary file in @opts->basedir (an unnamed O_TMPFILE where the
 * filesystem has it, so a killed run leaves nothing behind; otherwise a
 * ".cfs-fetch.PID.N" file, which the next run removes once PID is gone).
 * When the transfer ends, the fs-verity digest is computed by one sequential
 * read of that file (its pages are still in the page cache) on one of a few
 * worker threads, so hashing and fsync overlap with the transfers. Only a
 * file of the right size and digest is fsynced and linked to its final
 * name; fs-verity is then enabled on it where the filesystem supports it.
 * An object that is already installed under its name when it would be
 * linked counts as PRESENT; objects are not checked for presence
 * beforehand, that is the caller's job (see cfs_objects_locate()).
 *
 * Return: the number of objects that ended UNAVAILABLE or FAILED (0: all
 * are installed), or -errno when the fetch could not run at all (bad
 * options, @opts->basedir cannot be opened, libcurl cannot start).
 */
int cfs_fetch_objects(struct cfs_fetch_object *objs, size_t n,
		      const struct cfs_fetch_options *opts, struct cfs_fetch_stats *stats);

/**
 * cfs_fetch_init() - initialise libcurl once for a long-running program
 *
 * cfs_fetch_objects() initialises and cleans up libcurl itself; a program
 * that calls it from several threads over its life calls this first, so
 * those calls only count references. Return: 0 or -EIO.
 */
int cfs_fetch_init(void);

/** cfs_fetch_exit() - undo cfs_fetch_init(), once no fetch runs */
void cfs_fetch_exit(void);

#endif /* CFS_FETCH_H */
