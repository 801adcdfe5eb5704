/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What every HTTP client in libcfs shares (http.c; used by fetch.c,
 * registry.c and push): the options each transfer sets, which failures are
 * worth another try, and the backoff between tries. Private to libcfs: the
 * public headers name no libcurl type.
 */
#ifndef CFS_HTTP_H
#define CFS_HTTP_H

#include <curl/curl.h>
#include <stdbool.h>

/**
 * cfs_http_setup() - the options every transfer of libcfs sets on @easy
 * @url: what to get
 * @cainfo: a PEM file of CA certificates to trust instead of the system's,
 *	    or NULL
 * @timeout: seconds a connection attempt may take
 *
 * Redirects are followed (at most 5, to http or https only), no signals
 * are used, and the user agent names cfsctl. Stall detection and what to
 * do with the body are the caller's.
 */
void cfs_http_setup(CURL *easy, const char *url, const char *cainfo, unsigned int timeout);

/**
 * cfs_http_transient() - whether a failed transfer is worth another try
 * @res: its libcurl result
 * @code: its HTTP status, 0 if none came
 *
 * Transient: a reset, timeout or short body, HTTP 5xx, 408 or 429.
 */
bool cfs_http_transient(CURLcode res, long code);

/**
 * cfs_http_backoff_ms() - how long to wait before retry number @attempt
 * (from 1): @first_ms doubled for each retry before it, capped at 10 s,
 * spread by +-25% so that many clients do not come back at once
 */
double cfs_http_backoff_ms(unsigned int first_ms, unsigned int attempt);

#endif /* CFS_HTTP_H */
