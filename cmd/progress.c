// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The progress line cfsctl draws on stderr during long work (build, verify,
 * fetch): items and bytes done of the total, rate and time left. It is drawn
 * only when stderr is a terminal, so logs and pipes stay clean.
 */
#include <stdio.h>
#include <unistd.h>

#include "cfsctl.h"

volatile sig_atomic_t cli_progress_open;

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void human_bytes(double v, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

void cli_progress_start(struct cli_progress *p, const char *label, uint64_t total,
			uint64_t total_bytes)
{
	p->enabled = isatty(STDERR_FILENO);
	p->label = label;
	p->total = total;
	p->total_bytes = total_bytes;
	clock_gettime(CLOCK_MONOTONIC, &p->start);
	p->last.tv_sec = 0;
	p->last.tv_nsec = 0;
}

void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t done_bytes)
{
	struct timespec now;
	double elapsed, frac = 0;
	char line[160], a[32], b[32];
	int n;

	if (!p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&p->last, &now) < 0.1 && done != p->total)
		return;
	p->last = now;
	elapsed = seconds_between(&p->start, &now);

	n = snprintf(line, sizeof(line), "%s: %llu", p->label, (unsigned long long)done);
	if (p->total) {
		frac = (double)done / (double)p->total;
		n += snprintf(line + n, sizeof(line) - (size_t)n, "/%llu (%3.0f%%)",
			      (unsigned long long)p->total, 100 * frac);
	}
	if (p->total_bytes) {
		human_bytes((double)done_bytes, a, sizeof(a));
		human_bytes((double)p->total_bytes, b, sizeof(b));
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %s of %s", a, b);
		frac = (double)done_bytes / (double)p->total_bytes;
		if (elapsed > 0.5) {
			human_bytes((double)done_bytes / elapsed, a, sizeof(a));
			n += snprintf(line + n, sizeof(line) - (size_t)n, ", %s/s", a);
		}
	}
	if (frac > 0.01 && frac < 1 && elapsed > 1)
		snprintf(line + n, sizeof(line) - (size_t)n, ", %.0f s left",
			 elapsed / frac - elapsed);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	cli_progress_open = 1;
}

void cli_progress_end(struct cli_progress *p)
{
	if (!p->enabled)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	cli_progress_open = 0;
}
