// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What every HTTP client in libcfs shares (http.h): the options each
 * libcurl transfer sets, which failures are worth another try, and the
 * backoff between tries. The object fetcher (fetch.c), the registry client
 * (registry.c) and push use them.
 */
#include <curl/curl.h>
#include <stdbool.h>
#include <stdlib.h>

#include "http.h"

/* The longest wait between two tries of one transfer. */
#define MAX_BACKOFF_MS 10000

void cfs_http_setup(CURL *easy, const char *url, const char *cainfo, unsigned int timeout)
{
	curl_easy_setopt(easy, CURLOPT_URL, url);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	if (cainfo)
		curl_easy_setopt(easy, CURLOPT_CAINFO, cainfo);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, (long)timeout);
	curl_easy_setopt(easy, CURLOPT_USERAGENT, "cfsctl");
	curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 128L * 1024);
}

bool cfs_http_transient(CURLcode res, long code)
{
	if (code >= 500 || code == 408 || code == 429)
		return true;
	switch (res) {
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_SSL_CONNECT_ERROR:
		return true;
	default:
		return false;
	}
}

double cfs_http_backoff_ms(unsigned int first_ms, unsigned int attempt)
{
	unsigned int shift = attempt > 0 ? attempt - 1 : 0;
	double delay = (double)first_ms * (double)(1u << (shift < 16 ? shift : 16));

	if (delay > MAX_BACKOFF_MS)
		delay = MAX_BACKOFF_MS;
	return delay * (0.75 + 0.5 * ((double)rand() / RAND_MAX)); /* spread a herd */
}

