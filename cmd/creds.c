// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The credentials of the verbs that talk to a registry (pull, push):
 * --creds USER[:PASSWORD], the password asked for on the terminal or read
 * from stdin when it is not given, or an auth file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/registry.h"

/* One line of @in without its newline into *@line (malloc()ed); 0 or -errno. */
static int read_secret_line(FILE *in, char **line)
{
	size_t cap = 0;
	ssize_t n;

	*line = NULL;
	n = getline(line, &cap, in);
	if (n < 0) {
		free(*line);
		*line = NULL;
		return ferror(in) ? -EIO : -ENODATA;
	}
	while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
		(*line)[--n] = '\0';
	return 0;
}

/* The password for @user at @host: asked on the terminal, else one line of stdin. */
static int read_password(const char *user, const char *host, char **password)
{
	struct termios old, quiet;
	FILE *tty, *out;
	bool echo_off;
	int r;

	if (!isatty(STDIN_FILENO)) {
		r = read_secret_line(stdin, password);
		if (r)
			cli_error("--creds %s: no password on standard input", user);
		return r;
	}
	tty = fopen("/dev/tty", "r+e");
	out = tty ? tty : stderr;
	if (!tty)
		tty = stdin;
	/* echo goes off before the prompt shows, so nothing typed is echoed */
	echo_off = tcgetattr(fileno(tty), &old) == 0;
	if (echo_off) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(fileno(tty), TCSAFLUSH, &quiet);
	}
	fprintf(out, "Password for %s at %s: ", user, host);
	fflush(out);
	r = read_secret_line(tty, password);
	if (echo_off)
		tcsetattr(fileno(tty), TCSAFLUSH, &old);
	fputc('\n', out);
	if (tty != stdin)
		fclose(tty);
	if (r)
		cli_error("--creds %s: no password given", user);
	return r;
}

/*
 * The credentials for @ref: --creds, else --authfile, else the first of
 * $REGISTRY_AUTH_FILE, or $XDG_RUNTIME_DIR/containers/auth.json then
 * ~/.docker/config.json, that has an entry for the registry. 0 (*@user
 * NULL for none), or -errno after a message.
 */
int cli_find_creds(const char *creds, const char *authfile,
		   const struct cfs_registry_ref *ref, char **user, char **password)
{
	const char *env, *colon;
	char *defaults[2] = { NULL, NULL };
	int r = -ENOENT;

	*user = *password = NULL;
	if (creds) {
		colon = strchr(creds, ':');
		*user = colon ? strndup(creds, (size_t)(colon - creds)) : strdup(creds);
		if (colon)
			*password = strdup(colon + 1);
		if (!*user || (colon && !*password)) {
			cli_error("--creds: %s", strerror(ENOMEM));
			return -ENOMEM;
		}
		if (colon)
			return 0;
		return read_password(*user, ref->host, password);
	}
	if (authfile) {
		r = cfs_registry_auth_lookup(authfile, ref->host, ref->repo, user, password);
		if (r == -ENOENT && access(authfile, F_OK) == 0)
			return 0; /* no entry for this registry */
		/* the library said why, but not when the file would not open */
		if (r && r != -EINVAL)
			cli_error("auth file '%s': %s", authfile, strerror(-r));
		return r;
	}
	env = getenv("REGISTRY_AUTH_FILE");
	if (env && env[0]) {
		defaults[0] = strdup(env);
	} else {
		env = getenv("XDG_RUNTIME_DIR");
		if (env && env[0] && asprintf(&defaults[0], "%s/containers/auth.json", env) < 0)
			defaults[0] = NULL;
		env = getenv("HOME");
		if (env && env[0] && asprintf(&defaults[1], "%s/.docker/config.json", env) < 0)
			defaults[1] = NULL;
	}
	for (int i = 0; i < 2 && r == -ENOENT; i++)
		if (defaults[i])
			r = cfs_registry_auth_lookup(defaults[i], ref->host, ref->repo, user,
						     password);
	free(defaults[0]);
	free(defaults[1]);
	/* a file that cannot be read at all is as good as none */
	if (r == -ENOENT || r == -EACCES || r == -ENOTDIR || r == -EISDIR)
		return 0;
	if (r && r != -EINVAL)
		cli_error("auth file: %s", strerror(-r));
	return r;
}

void cli_forget(char *secret)
{
	if (secret) {
		explicit_bzero(secret, strlen(secret));
		free(secret);
	}
}
