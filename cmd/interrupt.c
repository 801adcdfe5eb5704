// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What SIGINT, SIGTERM and SIGHUP do to a build, pull or fetch: remove
 * every temporary this process made (the named ones in the digest stores,
 * and the image being written), end a progress line left open, then die
 * of the same signal with its default action, as coreutils and git do: a
 * parent sees the death by signal (WIFSIGNALED), so a shell loop stops on
 * Ctrl-C, and a shell reports 128 + the signal's number (130, 143, 129).
 * The handler only makes async-signal-safe calls. A signal that was ignored when the
 * command started (nohup) stays ignored. SIGKILL cannot be caught: what it
 * leaves, the next build or fetch, or cfsctl gc, removes.
 */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/store.h"

#define MAX_DIRS 8

static const char *dirs[MAX_DIRS];
static volatile sig_atomic_t n_dirs;
static char tmp_file[PATH_MAX];
static volatile sig_atomic_t have_tmp_file;
static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
	sigset_t set;

	for (sig_atomic_t i = 0; i < n_dirs; i++) {
		int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd >= 0) {
			cfs_store_remove_own_tmpfiles(fd);
			close(fd);
		}
	}
	if (have_tmp_file)
		unlink(tmp_file);
	if (cli_progress_open)
		(void)!write(STDERR_FILENO, "\n", 1);
	/* Die of it: the default action, the signal unblocked (we are in its handler). */
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig); /* not reached */
}

void cli_interrupt_start(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigfillset(&sa.sa_mask); /* one handler at a time */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

void cli_interrupt_dir(const char *dir)
{
	if (n_dirs < MAX_DIRS) {
		dirs[n_dirs] = dir;
		n_dirs = n_dirs + 1; /* once the entry is there */
	}
}

void cli_interrupt_block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void cli_interrupt_unblock(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

int cli_interrupt_file(const char *path)
{
	have_tmp_file = 0;
	if (!path)
		return 0;
	if (strlen(path) >= sizeof(tmp_file))
		return -1;
	strcpy(tmp_file, path);
	have_tmp_file = 1;
	return 0;
}
