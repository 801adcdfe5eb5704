// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The download options that cfsctl fetch and cfsctl lazy share: --url,
 * --jobs, --retries, --timeout and --cacert, parsed and checked the same
 * way for both, so that they take the same values and refuse the same ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/fetch.h"
#include "cfs/registry.h"

void cli_mirrors_init(struct cli_mirrors *m)
{
	memset(m, 0, sizeof(*m));
	m->jobs = CFS_FETCH_DEFAULT_JOBS;
	m->retries = CFS_FETCH_DEFAULT_RETRIES;
	m->timeout = CFS_FETCH_DEFAULT_TIMEOUT;
}

int cli_parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* Split a --url value at commas into @m->urls. */
static int add_urls(struct cli_mirrors *m, const char *arg)
{
	char *copy, *tok, *save = NULL;

	if (m->n_buf == CLI_MAX_MIRRORS)
		return -1;
	copy = strdup(arg);
	if (!copy)
		return -1;
	m->buf[m->n_buf++] = copy;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (m->n_urls == CLI_MAX_MIRRORS)
			return -1;
		m->urls[m->n_urls++] = tok;
	}
	return 0;
}

/*
 * Overwrite each URL's userinfo in the --url value @arg, a string of argv,
 * with '*': /proc/PID/cmdline, which ps shows every user, then holds no
 * password (as curl does with its -u).
 */
void cli_hide_userinfo(char *arg)
{
	for (char *u = arg; u && *u;) {
		char *next = strchr(u, ','), *host = strstr(u, "://"), *end, *at;

		if (host && (!next || host < next)) {
			host += 3;
			end = host + strcspn(host, "/?#,");
			at = memrchr(host, '@', (size_t)(end - host));
			if (at)
				memset(host, '*', (size_t)(at - host));
		}
		u = next ? next + 1 : NULL;
	}
}

int cli_mirrors_option(struct cli_mirrors *m, const char *verb, int opt, const char *arg)
{
	switch (opt) {
	case 'u':
		if (add_urls(m, arg) < 0)
			return cli_usage(verb, "too many URLs");
		cli_hide_userinfo((char *)arg); /* copied: argv's own text goes */
		return EXIT_OK;
	case 'A':
		if (!arg[0])
			return cli_usage(verb, "--authfile needs a file");
		m->authfile = arg;
		return EXIT_OK;
	case 'j':
		m->jobs = cli_parse_count(arg);
		if (m->jobs == 0 || m->jobs > CLI_MAX_JOBS)
			return cli_usage(verb, "--jobs wants a number from 1 to %d, not '%s'",
					 CLI_MAX_JOBS, arg);
		return EXIT_OK;
	case 'r':
		if (cli_parse_uint(arg, 100, &m->retries) < 0)
			return cli_usage(verb, "--retries wants a number from 0 to 100, not '%s'", arg);
		return EXIT_OK;
	case 't':
		if (cli_parse_uint(arg, 86400, &m->timeout) < 0 || m->timeout == 0)
			return cli_usage(verb, "--timeout wants seconds from 1 to 86400, not '%s'", arg);
		return EXIT_OK;
	case 'C':
		m->cacert = arg;
		return EXIT_OK;
	}
	return -1;
}

int cli_mirrors_check_urls(const struct cli_mirrors *m, const char *verb)
{
	if (m->n_urls == 0)
		return cli_usage(verb, "--url URL is required");
	for (size_t i = 0; i < m->n_urls; i++) {
		const char *u = m->urls[i];

		if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0 &&
		    strncmp(u, "file://", 7) != 0)
		{
			char url[4200];

			return cli_usage(verb, "'%s': URLs must be http://, https:// or file://",
					 cfs_url_redact(u, url, sizeof(url)));
		}
	}
	return EXIT_OK;
}

int cli_mirrors_logins(struct cli_mirrors *m, const char *verb)
{
	for (size_t i = 0; m->authfile && i < m->n_urls; i++) {
		const char *u = m->urls[i], *host, *end, *at;
		char hostbuf[512];
		char *user = NULL, *password = NULL;
		int r;

		if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0)
			continue;
		host = strstr(u, "://") + 3;
		end = host + strcspn(host, "/?#");
		at = memrchr(host, '@', (size_t)(end - host));
		if (at)
			host = at + 1;
		if ((size_t)(end - host) >= sizeof(hostbuf))
			continue;
		snprintf(hostbuf, sizeof(hostbuf), "%.*s", (int)(end - host), host);
		r = cfs_registry_auth_lookup(m->authfile, hostbuf, *end == '/' ? end + 1 : "",
					     &user, &password);
		if (r == -ENOENT && access(m->authfile, F_OK) == 0)
			continue; /* no entry for this mirror */
		if (r < 0) {
			cli_error("%s: auth file '%s': %s", verb, m->authfile, strerror(-r));
			return EXIT_FAIL;
		}
		m->logins[i].user = user;
		m->logins[i].password = password;
	}
	return EXIT_OK;
}

int cli_mirrors_check_cacert(const struct cli_mirrors *m, const char *verb)
{
	if (m->cacert && access(m->cacert, R_OK) < 0) {
		cli_error("%s: CA certificates: '%s': %s", verb, m->cacert, strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

void cli_mirrors_free(struct cli_mirrors *m)
{
	for (size_t i = 0; i < m->n_urls; i++) {
		free((char *)m->logins[i].user);
		if (m->logins[i].password)
			explicit_bzero((char *)m->logins[i].password, strlen(m->logins[i].password));
		free((char *)m->logins[i].password);
		m->logins[i].user = m->logins[i].password = NULL;
	}
	for (size_t i = 0; i < m->n_buf; i++)
		free(m->buf[i]);
	m->n_buf = 0;
	m->n_urls = 0;
}
