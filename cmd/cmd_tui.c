// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl tui: an ncurses browser for images. The left pane is the tree of
 * the image (directories are read when first expanded or searched, see
 * tui-tree.c), the right pane everything the image records about the
 * selected entry, the bottom line its path and position. Names are shown as
 * they are when they are printable UTF-8 (in a UTF-8 locale) and escaped as
 * in dumpfiles otherwise. The terminal is restored on every way out: quit,
 * error, exit() (atexit), and SIGINT/SIGTERM/SIGHUP, whose handler only sets
 * a flag that the input loop (which wakes up four times a second) checks.
 */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

#include "cfsctl.h"
#include "cfs/image.h"
#include "cfs/store.h"
#include "cfs/util.h"
#include "tui.h"

#define MAX_BASEDIRS 64

enum { PAIR_DIR = 1, PAIR_LINK, PAIR_ERR, PAIR_BAR, PAIR_OK };

static volatile sig_atomic_t got_signal;
static bool curses_on;
static bool utf8;

/* A growable wide string: what one screen line or pane line shows. */
struct wbuf {
	wchar_t *s;
	size_t n, cap;
};

/* One line of the details pane: a range of the pane's wbuf, and its look. */
struct dline {
	size_t off, len;
	attr_t attr;
	short pair;
};

struct ui {
	struct tree t;
	const char *image;
	int dirfds[MAX_BASEDIRS];
	char *dirnames[MAX_BASEDIRS];
	int n_dirs;
	bool color;
	size_t sel, top;
	size_t det_top;
	size_t show_kids; /* just expanded: bring this many rows below it into view */
	int tree_w;
	char msg[512]; /* one-shot message for the status line */
	bool msg_err;
	char query[1024]; /* the last search, as typed */
	struct wbuf det; /* details pane text */
	struct dline *dl;
	size_t n_dl, cap_dl;
	struct wbuf line; /* scratch */
};

/* ---- terminal state ---- */

static void on_signal(int sig)
{
	got_signal = sig;
}

static void restore_terminal(void)
{
	if (curses_on && !isendwin())
		endwin();
	curses_on = false;
}

static int install_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: a blocked read returns */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	return 0;
}

/* ---- text ---- */

static int wb_put(struct wbuf *b, wchar_t c)
{
	wchar_t *s = cfs_grow(b->s, &b->cap, b->n, sizeof(*s), 256);

	if (!s)
		return -ENOMEM;
	b->s = s;
	b->s[b->n++] = c;
	return 0;
}

static void wb_str(struct wbuf *b, const char *s)
{
	while (*s)
		wb_put(b, (unsigned char)*s++);
}

static void wb_printf(struct wbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void wb_printf(struct wbuf *b, const char *fmt, ...)
{
	char tmp[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	wb_str(b, tmp); /* only ever ASCII */
}

/* Characters that would move the cursor or reorder the text around them. */
static bool shown_raw(uint32_t cp)
{
	if ((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff || cp == 0x2028 || cp == 0x2029)
		return false;
	return iswprint((wint_t)cp) && wcwidth((wchar_t)cp) > 0;
}

/*
 * Bytes as shown: escaped by the library's one escaping (cfs_escape_buf()),
 * inner spaces and (in a UTF-8 locale) printable UTF-8 as is, the rest as
 * in dumpfiles; a character this terminal cannot show (shown_raw()) is
 * escaped too. Never a raw control byte.
 */
static void wb_bytes(struct wbuf *b, const void *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	int flags = CFS_ESCAPE_INNER_SPACE | (utf8 ? CFS_ESCAPE_UTF8 : 0);
	size_t n = cfs_escape_buf(NULL, 0, buf, len, flags), k;
	unsigned char *s = malloc(n + 1);
	uint32_t cp;

	if (!s) {
		wb_str(b, "?");
		return;
	}
	cfs_escape_buf((char *)s, n + 1, buf, len, flags);
	for (size_t i = 0; i < n; i += k) {
		k = cfs_utf8_decode(s + i, n - i, &cp);
		if (k == 1) {
			wb_put(b, s[i]);
		} else if (k > 1 && shown_raw(cp)) {
			wb_put(b, (wchar_t)cp);
		} else {
			for (size_t j = 0; j < (k ? k : 1); j++) {
				wb_put(b, '\\');
				wb_put(b, 'x');
				wb_put(b, hex[s[i + j] >> 4]);
				wb_put(b, hex[s[i + j] & 15]);
			}
			k = k ? k : 1;
		}
	}
	free(s);
}

/* Columns that @c takes on the screen. */
static int colw(wchar_t c)
{
	int w = wcwidth(c);

	return w < 0 ? 1 : w;
}

/*
 * Draw @n wide chars at (@y, @x) in at most @w columns, padding with spaces
 * to @w when @pad; a text that does not fit ends in '>'.
 */
static void put_clip(int y, int x, int w, const wchar_t *s, size_t n, bool pad)
{
	int used = 0;
	size_t i;

	if (w <= 0)
		return;
	move(y, x);
	for (i = 0; i < n; i++) {
		int cw = colw(s[i]);

		if (used + cw > w || (used + cw == w && i + 1 < n))
			break;
		addnwstr(&s[i], 1);
		used += cw;
	}
	if (i < n && used < w) {
		addch('>');
		used++;
	}
	if (pad)
		for (; used < w; used++)
			addch(' ');
}

static void put_ascii(int y, int x, int w, const char *s, bool pad)
{
	struct wbuf b = { 0 };

	wb_str(&b, s);
	put_clip(y, x, w, b.s, b.n, pad);
	free(b.s);
}

/* Bars are reverse video in monochrome, their own colors otherwise. */
static attr_t bar_attr(struct ui *u, attr_t a, short pair)
{
	return u->color && pair == PAIR_BAR ? a & ~A_REVERSE : a;
}

static void set_on(struct ui *u, attr_t a, short pair)
{
	a = bar_attr(u, a, pair);
	attron(a);
	if (u->color && pair)
		attron(COLOR_PAIR(pair));
}

static void set_off(struct ui *u, attr_t a, short pair)
{
	a = bar_attr(u, a, pair);
	attroff(a);
	if (u->color && pair)
		attroff(COLOR_PAIR(pair));
}

/* ---- what an inode is ---- */

static void human_size(uint64_t v, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double d = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, size, "%" PRIu64 " byte%s", v, v == 1 ? "" : "s");
		return;
	}
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	snprintf(buf, size, "%.1f %s (%" PRIu64 " bytes)", d, units[u], v);
}

/* The path of @n, shown escaped, into @b. */
static void wb_path(struct wbuf *b, const struct tnode *n)
{
	const struct tnode *chain[64];
	size_t depth = 0;

	if (!n->parent) {
		wb_put(b, '/');
		return;
	}
	/* A deep path keeps its last components, which say the most. */
	for (const struct tnode *p = n; p->parent; p = p->parent) {
		if (depth == 64) {
			wb_str(b, "/...");
			break;
		}
		chain[depth++] = p;
	}
	while (depth--) {
		wb_put(b, '/');
		if (chain[depth]->error)
			wb_str(b, "<error>");
		else
			wb_bytes(b, chain[depth]->name, chain[depth]->name_len);
	}
}

/* The backing object of @in under the base directories: an open fd, or -errno. */
static int open_object(struct ui *u, const struct cfs_inode *in, int *which)
{
	char rel[PATH_MAX + 1];
	const char *p = rel;
	struct stat st;

	if (in->payload_len > PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(rel, in->payload, in->payload_len);
	rel[in->payload_len] = '\0';
	while (*p == '/') /* backing paths are relative to a base directory */
		p++;
	if (!*p)
		return -ENOENT;
	for (int k = 0; k < u->n_dirs; k++) {
		int fd = openat(u->dirfds[k], p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			*which = k;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

/* ---- the details pane ---- */

static void det_line(struct ui *u, size_t off, size_t len, attr_t attr, short pair)
{
	struct dline *dl = cfs_grow(u->dl, &u->cap_dl, u->n_dl, sizeof(*dl), 64);

	if (!dl)
		return;
	u->dl = dl;
	u->dl[u->n_dl++] = (struct dline){ off, len, attr, pair };
}

#define LABEL_W 9

/*
 * Add "label    value" to the details, wrapping the value (held in
 * u->line) to @width columns with continuation lines indented.
 */
static void det_add(struct ui *u, const char *label, int width, attr_t attr, short pair)
{
	size_t i = 0, n = u->line.n;
	int cont = label ? LABEL_W : 4; /* indent of continuation lines */
	bool first = true;

	if (width < cont + 8)
		width = cont + 8;
	do {
		size_t start = u->det.n;
		int used = 0;

		if (first && label) {
			wb_str(&u->det, label);
			for (used = (int)strlen(label); used < LABEL_W; used++)
				wb_put(&u->det, ' ');
		} else {
			for (; used < (first ? 2 : cont); used++)
				wb_put(&u->det, ' ');
		}
		size_t line_start = i, brk = 0;

		while (i < n && used + colw(u->line.s[i]) <= width) {
			used += colw(u->line.s[i]);
			if (u->line.s[i] == ' ')
				brk = i + 1;
			wb_put(&u->det, u->line.s[i++]);
		}
		/* Break text at a space, when there is one in the second half. */
		if (i < n && brk > line_start && 2 * (brk - line_start) > i - line_start) {
			u->det.n -= i - brk;
			i = brk;
		}
		det_line(u, start, u->det.n - start, attr, pair);
		first = false;
	} while (i < n);
	u->line.n = 0;
}

struct xattr_ctx {
	struct ui *u;
	int width;
};

static int det_xattr(void *opaque, const struct cfs_xattr *x)
{
	struct xattr_ctx *c = opaque;
	struct wbuf *l = &c->u->line;

	wb_bytes(l, x->key, x->key_len);
	wb_put(l, '=');
	if (x->value_len == 0)
		wb_str(l, "(empty)");
	else
		wb_bytes(l, x->value, x->value_len);
	det_add(c->u, NULL, c->width, 0, 0);
	return 0;
}

static void build_details(struct ui *u, struct tnode *n, int width)
{
	struct wbuf *l = &u->line;
	struct cfs_inode in;
	char buf[160], mode[11];
	int ret;

	u->det.n = 0;
	u->n_dl = 0;
	l->n = 0;
	if (n->error) {
		wb_str(l, "reading ");
		wb_path(l, n->parent);
		wb_put(l, ':');
		det_add(u, "error", width, A_BOLD, PAIR_ERR);
		wb_bytes(l, n->error, strlen(n->error));
		det_add(u, "", width, 0, PAIR_ERR);
		return;
	}
	wb_path(l, n);
	det_add(u, "path", width, A_BOLD, 0);
	ret = cfs_image_inode(u->t.img, n->ino, &in);
	if (ret < 0) {
		const char *e = tree_error_text(ret);

		wb_bytes(l, e, strlen(e));
		det_add(u, "error", width, A_BOLD, PAIR_ERR);
		return;
	}
	wb_printf(l, "%" PRIu64, in.ino);
	det_add(u, "inode", width, 0, 0);
	wb_str(l, cfs_type_word(in.mode));
	det_add(u, "type", width, 0, 0);
	cli_mode_string(in.mode, mode);
	wb_printf(l, "%s (%04o)", mode, in.mode & 07777);
	det_add(u, "mode", width, 0, 0);
	wb_printf(l, "%" PRIu32 " / %" PRIu32, in.uid, in.gid);
	det_add(u, "uid/gid", width, 0, 0);
	human_size(in.size, buf, sizeof(buf));
	wb_str(l, buf);
	det_add(u, "size", width, 0, 0);
	{
		time_t t = (time_t)in.mtime_sec;
		struct tm tm;
		char when[64];

		if (gmtime_r(&t, &tm) && strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
			wb_printf(l, "%s.%09" PRIu32 " UTC", when, in.mtime_nsec);
		else
			wb_printf(l, "%" PRId64 ".%09" PRIu32, in.mtime_sec, in.mtime_nsec);
		det_add(u, "mtime", width, 0, 0);
	}
	wb_printf(l, "%" PRIu32, in.nlink);
	det_add(u, "nlink", width, 0, 0);
	if (S_ISCHR(in.mode) || S_ISBLK(in.mode)) {
		wb_printf(l, "%u, %u", major(in.rdev), minor(in.rdev));
		det_add(u, "rdev", width, 0, 0);
	}
	if (S_ISDIR(in.mode)) {
		if (n->loaded)
			wb_printf(l, "%zu", n->n_kids);
		else
			wb_str(l, "not read yet");
		det_add(u, "entries", width, 0, 0);
	}
	if (S_ISLNK(in.mode)) {
		wb_bytes(l, in.payload, in.payload_len);
		det_add(u, "target", width, 0, PAIR_LINK);
	}
	if (S_ISREG(in.mode)) {
		struct cfs_inode_desc d;

		cfs_inode_describe(u->t.img, &in, &d);
		if (in.payload_len)
			wb_bytes(l, in.payload, in.payload_len);
		else if (d.content_in_image)
			wb_str(l, "none (the content is in the image)");
		else
			wb_str(l, "none (no content)");
		det_add(u, "backing", width, 0, 0);
	}
	if (in.has_digest) {
		char hex[CFS_DIGEST_HEX_SIZE];

		cfs_digest_to_hex(in.digest, hex);
		wb_str(l, hex);
		det_add(u, "digest", width, 0, 0);
	}
	if (S_ISREG(in.mode) && in.payload_len && u->n_dirs) {
		int which, fd = open_object(u, &in, &which);
		short pair = PAIR_OK;

		if (fd >= 0) {
			close(fd);
			wb_str(l, "present in ");
			wb_bytes(l, u->dirnames[which], strlen(u->dirnames[which]));
		} else {
			wb_str(l, "MISSING from the base directories");
			pair = PAIR_ERR;
		}
		det_add(u, "object", width, fd >= 0 ? 0 : A_BOLD, pair);
		if (n->verify) {
			bool ok = strncmp(n->verify, "matches", 7) == 0;

			wb_bytes(l, n->verify, strlen(n->verify));
			det_add(u, "verity", width, ok ? 0 : A_BOLD, ok ? PAIR_OK : PAIR_ERR);
		} else if (fd >= 0) {
			wb_str(l, "press v to check the digest");
			det_add(u, "verity", width, A_DIM, 0);
		}
	}
	if (in.xattrs_len) {
		struct xattr_ctx c = { u, width };

		wb_str(l, "");
		det_add(u, "xattrs", width, A_BOLD, 0);
		ret = cfs_image_xattrs(u->t.img, &in, det_xattr, &c);
		if (ret < 0) {
			const char *e = tree_error_text(ret);

			wb_str(l, "<error: ");
			wb_bytes(l, e, strlen(e));
			wb_put(l, '>');
			det_add(u, NULL, width, A_BOLD, PAIR_ERR);
		}
	} else {
		wb_str(l, "none");
		det_add(u, "xattrs", width, 0, 0);
	}
}

/* ---- drawing ---- */

static int body_h(void)
{
	return LINES - 2;
}

static void tree_row(struct ui *u, int y, struct tnode *n, bool selected)
{
	struct wbuf *l = &u->line;
	int maxind = u->tree_w / 2, ind = 2 * (int)n->depth;
	attr_t a = selected ? A_REVERSE : 0;
	short pair = 0;

	l->n = 0;
	if (ind > maxind) /* deep rows keep room for their name */
		ind = maxind;
	for (int i = 0; i < ind; i++)
		wb_put(l, ' ');
	if (n->error) {
		wb_str(l, "  <error: ");
		wb_bytes(l, n->error, strlen(n->error));
		wb_put(l, '>');
		pair = PAIR_ERR;
		a |= A_BOLD;
	} else if (tree_is_dir(n)) {
		wb_str(l, n->expanded ? "- " : "+ ");
		if (n->parent) {
			wb_bytes(l, n->name, n->name_len);
			wb_put(l, '/');
		} else {
			wb_put(l, '/');
		}
		pair = PAIR_DIR;
		a |= A_BOLD;
	} else {
		wb_str(l, "  ");
		wb_bytes(l, n->name, n->name_len);
		if (n->d_type == DT_LNK) {
			struct cfs_inode in;

			pair = PAIR_LINK;
			if (cfs_image_inode(u->t.img, n->ino, &in) == 0 && S_ISLNK(in.mode)) {
				wb_str(l, " -> ");
				wb_bytes(l, in.payload, in.payload_len);
			}
		}
	}
	set_on(u, a, pair);
	put_clip(y, 0, u->tree_w, l->s, l->n, true);
	set_off(u, a, pair);
	l->n = 0;
}

/* The status line: a prompt, a message, or the path and position. Returns the cursor column. */
static int draw_status(struct ui *u, const char *prompt, const char *input)
{
	int col = 0;

	struct wbuf *l = &u->line;
	char pos[64];
	int w = COLS;

	l->n = 0;
	move(LINES - 1, 0);
	if (prompt) {
		wb_str(l, prompt);
		wb_bytes(l, input, strlen(input));
		for (size_t i = 0; i < l->n; i++)
			col += colw(l->s[i]);
		if (col > w - 1)
			col = w - 1;
		put_clip(LINES - 1, 0, w - 1, l->s, l->n, true);
	} else if (u->msg[0]) {
		wb_bytes(l, u->msg, strlen(u->msg));
		set_on(u, A_BOLD, u->msg_err ? PAIR_ERR : 0);
		put_clip(LINES - 1, 0, w, l->s, l->n, true);
		set_off(u, A_BOLD, u->msg_err ? PAIR_ERR : 0);
	} else {
		int pw;

		snprintf(pos, sizeof(pos), "  %zu/%zu", u->sel + 1, u->t.n_rows);
		pw = (int)strlen(pos);
		wb_path(l, u->t.rows[u->sel]);
		set_on(u, A_REVERSE, PAIR_BAR);
		put_clip(LINES - 1, 0, w - pw, l->s, l->n, true);
		put_ascii(LINES - 1, w - pw, pw, pos, true);
		set_off(u, A_REVERSE, PAIR_BAR);
	}
	l->n = 0;
	return col;
}

static void draw(struct ui *u, const char *prompt, const char *input)
{
	int h = body_h(), dx, dw, col;
	struct wbuf *l = &u->line;

	erase();
	if (COLS < 40 || LINES < 8) {
		put_ascii(0, 0, COLS, "terminal too small (40x8 at least); q quits", false);
		refresh();
		return;
	}
	u->tree_w = COLS * 2 / 5;
	dx = u->tree_w + 2;
	dw = COLS - dx - 1;

	/* title */
	l->n = 0;
	wb_str(l, " cfsctl tui: ");
	wb_bytes(l, u->image, strlen(u->image));
	set_on(u, A_REVERSE, PAIR_BAR);
	put_clip(0, 0, COLS - 16, l->s, l->n, true);
	put_ascii(0, COLS - 16, 16, "  ? help  q quit", true);
	set_off(u, A_REVERSE, PAIR_BAR);
	l->n = 0;

	/* tree: keep the selection in view, and a directory just expanded */
	if (u->show_kids) {
		size_t end = u->sel + u->show_kids;

		if (end >= u->top + (size_t)h)
			u->top = end - (size_t)h + 1 < u->sel ? end - (size_t)h + 1 : u->sel;
		u->show_kids = 0;
	}
	if (u->sel < u->top)
		u->top = u->sel;
	if (u->sel >= u->top + (size_t)h)
		u->top = u->sel - (size_t)h + 1;
	if (u->top + (size_t)h > u->t.n_rows)
		u->top = u->t.n_rows > (size_t)h ? u->t.n_rows - (size_t)h : 0;
	for (int y = 0; y < h && u->top + (size_t)y < u->t.n_rows; y++) {
		size_t r = u->top + (size_t)y;

		tree_row(u, 1 + y, u->t.rows[r], r == u->sel);
	}
	/* Line drawing by charset switching is not understood everywhere: ASCII outside UTF-8. */
	mvvline(1, u->tree_w, utf8 ? ACS_VLINE : (chtype)'|', h);

	/* details */
	build_details(u, u->t.rows[u->sel], dw);
	if (u->det_top + (size_t)h > u->n_dl)
		u->det_top = u->n_dl > (size_t)h ? u->n_dl - (size_t)h : 0;
	for (int y = 0; y < h && u->det_top + (size_t)y < u->n_dl; y++) {
		struct dline *d = &u->dl[u->det_top + (size_t)y];

		if (y == h - 1 && u->det_top + (size_t)h < u->n_dl) {
			put_ascii(1 + y, dx, dw, "... (J/K scroll)", false);
			break;
		}
		set_on(u, d->attr, d->pair);
		put_clip(1 + y, dx, dw, u->det.s + d->off, d->len, false);
		set_off(u, d->attr, d->pair);
	}

	col = draw_status(u, prompt, input);
	if (prompt) {
		move(LINES - 1, col);
		curs_set(1);
	} else {
		curs_set(0);
	}
	refresh();
}

static const char *const help_text[] = {
	"cfsctl tui: keys",
	"",
	"  Up, k / Down, j     previous / next row",
	"  Left, h             collapse, or go to the parent directory",
	"  Right, l            expand, or go to the first entry",
	"  Enter, Space        expand or collapse a directory",
	"  PgUp / PgDn         a page up / down",
	"  Home / End          first / last row",
	"  /                   search names as you type; Enter keeps, Esc cancels",
	"  n / N               next / previous match",
	"  g                   go to a path",
	"  v                   check the backing object's fs-verity digest",
	"                      (needs --basedir)",
	"  J / K               scroll the details down / up",
	"  Ctrl-L              redraw",
	"  ?                   this help",
	"  q                   quit",
	"",
	"Search goes through the whole image in the order of the rows (depth",
	"first), reading directories as it reaches them, and wraps around; it is",
	"case-insensitive unless the text holds an uppercase letter. In search and",
	"paths, \\xXY stands for a byte, \\\\ for a backslash.",
	"",
	"Press any key to go back.",
};

static void draw_help(struct ui *u)
{
	int n = (int)(sizeof(help_text) / sizeof(help_text[0]));

	erase();
	for (int i = 0; i < n && i < LINES; i++) {
		attr_t a = i == 0 ? A_BOLD : 0;

		set_on(u, a, 0);
		put_ascii(i, 0, COLS, help_text[i], false);
		set_off(u, a, 0);
	}
	curs_set(0);
	refresh();
}

/* ---- input ---- */

/* The next key; ERR on timeout or when a signal arrived. */
static int next_key(wint_t *key, bool *fkey)
{
	int r = get_wch(key);

	if (r == ERR)
		return ERR;
	*fkey = r == KEY_CODE_YES;
	return 0;
}

/*
 * Undo the escapes one may type, a dumpfile's (\xXY, \\, \n, \t, \r);
 * anything else stays as typed. Returns the length.
 */
static size_t unescape(const char *s, char *out)
{
	size_t n = 0, len = strlen(s), k;

	for (size_t i = 0; i < len; i += k ? k : 1) {
		k = cfs_unescape_one(s + i, len - i, &out[n]);
		if (!k)
			out[n] = s[i];
		n++;
	}
	out[n] = '\0';
	return n;
}

static void select_node(struct ui *u, struct tnode *n)
{
	long r;

	if (tree_reveal(&u->t, n) < 0) {
		snprintf(u->msg, sizeof(u->msg), "out of memory");
		u->msg_err = true;
		return;
	}
	r = tree_row_of(&u->t, n);
	if (r >= 0)
		u->sel = (size_t)r;
	u->det_top = 0;
}

struct prompt_state {
	struct tnode *origin; /* search: where it started */
	bool no_match;
};

static void search_changed(struct ui *u, struct prompt_state *ps, const char *text)
{
	char raw[sizeof(u->query)];
	size_t n = unescape(text, raw);
	struct tnode *m;

	ps->no_match = false;
	if (!n) {
		select_node(u, ps->origin);
		return;
	}
	m = tree_search(&u->t, ps->origin, raw, n, true);
	if (m)
		select_node(u, m);
	else
		ps->no_match = true;
}

/*
 * Read a line on the status line into @buf. For a search, each edit moves
 * to the first match after the origin. Return: true on Enter; false on Esc
 * or a signal.
 */
static bool prompt(struct ui *u, const char *label, char *buf, size_t cap, struct prompt_state *ps)
{
	size_t len = 0;

	buf[0] = '\0';
	for (;;) {
		wint_t k;
		bool fkey;

		draw(u, ps && ps->no_match ? "/ (no match) " : label, buf);
		if (got_signal)
			return false;
		if (next_key(&k, &fkey) == ERR)
			continue;
		if (fkey) {
			if (k == KEY_ENTER)
				return true;
			if (k != KEY_BACKSPACE)
				continue;
			k = 127;
		}
		if (k == 27)
			return false;
		if (k == '\n' || k == '\r')
			return true;
		if (k == 127 || k == 8) {
			if (!len)
				continue;
			while (len > 0 && ((unsigned char)buf[--len] & 0xc0) == 0x80)
				;
			buf[len] = '\0';
		} else if (k == 21) { /* Ctrl-U */
			len = 0;
			buf[0] = '\0';
		} else if (k >= 32) {
			char mb[MB_LEN_MAX];
			mbstate_t st;
			size_t m;

			memset(&st, 0, sizeof(st));
			m = wcrtomb(mb, (wchar_t)k, &st);
			if (m == (size_t)-1 || len + m >= cap)
				continue;
			memcpy(buf + len, mb, m);
			len += m;
			buf[len] = '\0';
		} else {
			continue;
		}
		if (ps)
			search_changed(u, ps, buf);
	}
}

static void do_search(struct ui *u)
{
	struct prompt_state ps = { u->t.rows[u->sel], false };
	char buf[sizeof(u->query)];

	if (prompt(u, "/", buf, sizeof(buf), &ps)) {
		if (buf[0])
			memcpy(u->query, buf, sizeof(buf));
		if (ps.no_match) {
			snprintf(u->msg, sizeof(u->msg), "no name contains '%.300s'", buf);
			u->msg_err = true;
		}
	} else {
		select_node(u, ps.origin);
	}
}

static void search_again(struct ui *u, bool forward)
{
	char raw[sizeof(u->query)];
	struct tnode *cur = u->t.rows[u->sel], *m;
	size_t n;

	if (!u->query[0]) {
		snprintf(u->msg, sizeof(u->msg), "no search yet: / starts one");
		return;
	}
	n = unescape(u->query, raw);
	m = tree_search(&u->t, cur, raw, n, forward);
	if (!m) {
		snprintf(u->msg, sizeof(u->msg), "no name contains '%.300s'", u->query);
		u->msg_err = true;
		return;
	}
	if (m == cur)
		snprintf(u->msg, sizeof(u->msg), "the only match for '%.300s'", u->query);
	select_node(u, m);
}

static void do_goto(struct ui *u)
{
	char buf[4 * PATH_MAX], raw[sizeof(buf)];
	struct tnode *n;
	size_t len;
	int ret;

	if (!prompt(u, "go to: ", buf, sizeof(buf), NULL) || !buf[0])
		return;
	len = unescape(buf, raw);
	ret = tree_find_path(&u->t, raw, len, &n);
	select_node(u, n);
	if (ret < 0) {
		snprintf(u->msg, sizeof(u->msg), "'%.300s': %s", buf, strerror(-ret));
		u->msg_err = true;
	}
}

static void do_verify(struct ui *u)
{
	struct tnode *n = u->t.rows[u->sel];
	uint8_t dg[CFS_DIGEST_SIZE];
	char hex[CFS_DIGEST_HEX_SIZE], text[256];
	const char *how = "measured by the kernel";
	struct cfs_inode in;
	int fd, which, ret;

	if (!u->n_dirs) {
		snprintf(u->msg, sizeof(u->msg), "v needs --basedir: where the backing objects are");
		u->msg_err = true;
		return;
	}
	if (n->error || cfs_image_inode(u->t.img, n->ino, &in) < 0 || !S_ISREG(in.mode) ||
	    !in.payload_len) {
		snprintf(u->msg, sizeof(u->msg), "only a regular file with a backing object can be checked");
		u->msg_err = true;
		return;
	}
	fd = open_object(u, &in, &which);
	if (fd < 0) {
		snprintf(text, sizeof(text), "object missing");
		goto out;
	}
	snprintf(u->msg, sizeof(u->msg), "checking the object's digest...");
	draw(u, NULL, NULL);
	u->msg[0] = '\0';
	ret = cfs_verity_measure_fd(fd, dg);
	if (ret == -ENODATA || ret == -EOPNOTSUPP || ret == -ENOTTY) {
		how = "computed";
		ret = cfs_verity_digest_fd(fd, dg);
	}
	close(fd);
	if (ret < 0) {
		snprintf(text, sizeof(text), "error: %s", tree_error_text(ret));
		goto out;
	}
	cfs_digest_to_hex(dg, hex);
	if (!in.has_digest)
		snprintf(text, sizeof(text), "no digest recorded; the object's is %s (%s)", hex, how);
	else if (memcmp(dg, in.digest, CFS_DIGEST_SIZE) == 0)
		snprintf(text, sizeof(text), "matches (%s)", how);
	else
		snprintf(text, sizeof(text), "MISMATCH: the object's is %s (%s)", hex, how);
out:
	free(n->verify);
	n->verify = strdup(text);
}

static void show_help(struct ui *u)
{
	for (;;) {
		wint_t k;
		bool fkey;

		draw_help(u);
		if (got_signal)
			return;
		if (next_key(&k, &fkey) == ERR)
			continue;
		if (fkey && k == KEY_RESIZE)
			continue;
		return;
	}
}

static void toggle(struct ui *u, struct tnode *n, bool expand)
{
	if (!tree_is_dir(n) || n->expanded == expand)
		return;
	if (expand && tree_load(&u->t, n) < 0) {
		snprintf(u->msg, sizeof(u->msg), "out of memory");
		u->msg_err = true;
		return;
	}
	n->expanded = expand;
	select_node(u, n);
	if (expand)
		u->show_kids = n->n_kids;
}

static void move_sel(struct ui *u, long delta)
{
	long s = (long)u->sel + delta;

	if (s >= (long)u->t.n_rows)
		s = (long)u->t.n_rows - 1;
	if (s < 0)
		s = 0;
	if ((size_t)s != u->sel)
		u->det_top = 0;
	u->sel = (size_t)s;
}

/* Handle one key of the browser; false to quit. */
static bool handle_key(struct ui *u, wint_t k, bool fkey)
{
	struct tnode *n = u->t.rows[u->sel];
	long page = body_h() > 1 ? body_h() - 1 : 1;

	u->msg[0] = '\0';
	u->msg_err = false;
	if (fkey) {
		switch (k) {
		case KEY_UP: move_sel(u, -1); break;
		case KEY_DOWN: move_sel(u, 1); break;
		case KEY_PPAGE: move_sel(u, -page); break;
		case KEY_NPAGE: move_sel(u, page); break;
		case KEY_HOME: move_sel(u, -(long)u->t.n_rows); break;
		case KEY_END: move_sel(u, (long)u->t.n_rows); break;
		case KEY_LEFT: goto left;
		case KEY_RIGHT: goto right;
		case KEY_ENTER: toggle(u, n, !n->expanded); break;
		}
		return true;
	}
	switch (k) {
	case 'q':
		return false;
	case 'k': move_sel(u, -1); break;
	case 'j': move_sel(u, 1); break;
	case 'h':
	left:
		if (tree_is_dir(n) && n->expanded)
			toggle(u, n, false);
		else if (n->parent)
			select_node(u, n->parent);
		break;
	case 'l':
	right:
		if (tree_is_dir(n) && !n->expanded)
			toggle(u, n, true);
		else if (tree_is_dir(n) && n->n_kids)
			move_sel(u, 1);
		break;
	case '\n': case '\r': case ' ':
		toggle(u, n, !n->expanded);
		break;
	case '/': do_search(u); break;
	case 'n': search_again(u, true); break;
	case 'N': search_again(u, false); break;
	case 'g': do_goto(u); break;
	case 'v': do_verify(u); break;
	case '?': show_help(u); break;
	case 'J': u->det_top += (size_t)page; break;
	case 'K': u->det_top = u->det_top > (size_t)page ? u->det_top - (size_t)page : 0; break;
	case 12: clearok(curscr, TRUE); break; /* Ctrl-L */
	}
	return true;
}

static void setup_colors(struct ui *u)
{
	const char *no = getenv("NO_COLOR");

	u->color = has_colors() && !(no && *no) && start_color() == OK;
	if (!u->color)
		return;
	use_default_colors();
	init_pair(PAIR_DIR, COLOR_BLUE, -1);
	init_pair(PAIR_LINK, COLOR_CYAN, -1);
	init_pair(PAIR_ERR, COLOR_RED, -1);
	init_pair(PAIR_BAR, COLOR_BLACK, COLOR_CYAN);
	init_pair(PAIR_OK, COLOR_GREEN, -1);
}

static int open_basedirs(struct ui *u, const struct cfs_basedirs *dirs)
{
	if (dirs->n > MAX_BASEDIRS)
		return cli_usage("tui", "more than %d base directories", MAX_BASEDIRS);
	for (size_t i = 0; i < dirs->n; i++) {
		u->dirfds[u->n_dirs] = open(dirs->dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (u->dirfds[u->n_dirs] < 0) {
			cli_error("tui: '%s': %s", dirs->dirs[i], strerror(errno));
			return EXIT_FAIL;
		}
		u->dirnames[u->n_dirs++] = dirs->dirs[i];
	}
	return -1;
}

/* cfsctl tui --help, and its man page (docs/mkman.py) */
const char cmd_tui_usage[] =
	  "Usage: cfsctl tui [--basedir DIR[:DIR...]] IMAGE\n"
	  "       cfsctl tui --repo DIR [--basedir DIR[:DIR...]] IMAGE\n"
	  "\n"
	  "Browse the composefs image IMAGE in the terminal: the tree of the image\n"
	  "on the left, everything the image records about the selected entry on\n"
	  "the right (type, mode, owner, size, mtime, nlink, device number, symlink\n"
	  "target, backing path, digest, xattrs), its path and position below.\n"
	  "Directories are read when first expanded, so a large image opens at once.\n"
	  "A part of the image that cannot be read is shown as an <error: ...> row\n"
	  "in its place. Names that are not printable UTF-8 are shown escaped as in\n"
	  "dumpfiles (\\xXY).\n"
	  "\n"
	  "Keys:\n"
	  "  Up/Down, k/j     previous/next row\n"
	  "  Left, h          collapse, or go to the parent directory\n"
	  "  Right, l         expand, or go to the first entry\n"
	  "  Enter, Space     expand or collapse\n"
	  "  PgUp/PgDn        a page up/down\n"
	  "  Home/End         first/last row\n"
	  "  /                search names as you type (Enter keeps, Esc cancels);\n"
	  "                   the whole image, depth first, reading directories as\n"
	  "                   it goes, wrapping around; case-insensitive unless the\n"
	  "                   text holds an uppercase letter\n"
	  "  n/N              next/previous match\n"
	  "  g                go to a path\n"
	  "  v                check the fs-verity digest of the backing object\n"
	  "  J/K              scroll the details\n"
	  "  ?                help\n"
	  "  q                quit\n"
	  "\n"
	  "Options:\n"
	  "  --basedir=DIRS   colon-separated directories that hold the backing\n"
	  "                   objects: show whether each is present, and let v\n"
	  "                   check its digest ('\\:' for a colon in a name,\n"
	  "                   '\\\\' for a backslash)\n"
	  "  --repo=DIR       IMAGE is a name or an image digest in the repository\n"
	  "                   DIR (see cfsctl images); the objects are DIR/objects\n"
	  "                   unless --basedir is given\n"
	  "  --help           show this help\n"
	  "\n"
	  "Standard input and output must be a terminal. Colors are used where the\n"
	  "terminal has them, unless NO_COLOR is set. Exit status: 0 after q, 1 on\n"
	  "failure, 2 usage error; interrupted by a signal, it restores the terminal\n"
	  "and dies of that signal.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl tui --basedir objects rootfs.cfs\n"
	  "  cfsctl tui --repo /var/lib/cfs os/1\n";

int cmd_tui(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTION_BASEDIR,
		CLI_OPTION_REPO,
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	struct cfs_image *img = NULL;
	const char *basedir = NULL, *repo = NULL, *image_file;
	char *repo_image = NULL, *repo_basedir = NULL;
	const struct cli_var vars[] = { { CLI_OPT_BASEDIR, .str = &basedir }, { 0 } };
	const struct cli_parse p = {
		.verb = "tui", .shortopts = "", .longopts = longopts,
		.help = cmd_tui_usage, .vars = vars,
		.repo = &repo,
	};
	struct cfs_basedirs dirs = { 0 };
	SCREEN *scr = NULL;
	struct ui u;
	int ret, rc = EXIT_FAIL;

	memset(&u, 0, sizeof(u));
	ret = cli_parse(&p, argc, argv);
	if (ret >= 0)
		return ret;
	if (argc - optind < 1)
		return cli_usage("tui", "missing IMAGE");
	if (argc - optind > 1)
		return cli_usage("tui", "unexpected argument '%s'", argv[optind + 1]);
	u.image = image_file = argv[optind];
	if (repo) {
		/* A name or digest: its image, and the repository's objects */
		rc = cli_repo_image("tui", repo, u.image, &repo_image,
				    basedir ? NULL : &repo_basedir, NULL);
		if (rc != EXIT_OK)
			return rc;
		image_file = repo_image;
		if (!basedir)
			basedir = repo_basedir;
		rc = EXIT_FAIL;
	}
	if (!isatty(STDOUT_FILENO)) {
		cli_error("tui: standard output is not a terminal (for text output, see 'cfsctl inspect')");
		goto out;
	}
	if (!isatty(STDIN_FILENO)) {
		cli_error("tui: standard input is not a terminal");
		goto out;
	}
	setlocale(LC_ALL, "");
	utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	tree_catch_messages();

	if (basedir) {
		rc = cli_basedirs("tui", &dirs, basedir);
		if (rc != EXIT_OK)
			goto out;
		rc = EXIT_FAIL;
		ret = open_basedirs(&u, &dirs);
		if (ret >= 0) {
			rc = ret;
			goto out;
		}
	}
	ret = cfs_image_open(image_file, &img);
	if (ret < 0) {
		cli_error("tui: '%s': %s", u.image, tree_error_text(ret));
		goto out;
	}
	ret = tree_open(&u.t, img);
	if (ret < 0) {
		cli_error("tui: '%s': %s", u.image, strerror(-ret));
		goto out;
	}
	ret = install_signals();
	if (ret < 0) {
		cli_error("tui: signal handlers: %s", strerror(-ret));
		goto out;
	}
	atexit(restore_terminal);
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		const char *term = getenv("TERM");

		cli_error("tui: cannot use the terminal '%s'", term ? term : "");
		goto out;
	}
	curses_on = true;
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	timeout(250); /* wake up to notice signals */
	set_escdelay(50);
	curs_set(0);
	setup_colors(&u);

	for (bool dirty = true; !got_signal;) {
		wint_t k;
		bool fkey;

		if (dirty)
			draw(&u, NULL, NULL);
		if (next_key(&k, &fkey) == ERR) {
			dirty = false;
			continue;
		}
		dirty = true;
		if (!handle_key(&u, k, fkey))
			break;
	}
	rc = got_signal ? EXIT_FAIL : EXIT_OK;
out:
	restore_terminal();
	if (scr)
		delscreen(scr);
	tree_free(&u.t);
	if (img)
		cfs_image_close(img);
	for (int i = 0; i < u.n_dirs; i++)
		close(u.dirfds[i]);
	cfs_basedirs_free(&dirs);
	free(repo_image);
	free(repo_basedir);
	free(u.det.s);
	free(u.line.s);
	free(u.dl);
	if (got_signal) {
		/* Die of the signal, as the shell expects of an interrupted command. */
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	return rc;
}
