// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_from_dump(): the composefs-dump(5) parser (docs/dumpfile.md).
 * One line per file: PATH SIZE MODE NLINK UID GID RDEV MTIME PAYLOAD CONTENT
 * DIGEST, then KEY=VALUE xattrs, space-separated, bytes escaped as \xXY,
 * \\, \n, \r, \t, "-" for an unset field. Parents come before children and
 * a hardlink ("@" before MODE, PAYLOAD the path of its target) after its
 * target. Every malformed line is rejected with "FILE:LINE: reason". Paths
 * are found through a hash table, so parsing is linear in the dump's size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/internal.h"
#include "base/tree.h"
#include "cfs-format.h"

#define N_FIELDS 11

struct path_entry {
	char *path;
	size_t len;
	uint64_t hash;
	struct cfs_node *node;
	bool skipped; /* left out (--skip-devices); @node is not in the tree */
};

struct parser {
	const char *name; /* for messages */
	unsigned long line;
	const struct cfs_build_options *opts;
	struct cfs_node *root;
	struct path_entry *table;
	size_t table_size, used;
	struct cfs_node **skipped; /* nodes left out, freed at the end */
	size_t n_skipped;
	uint64_t meta; /* bytes of xattrs and symlink targets read, for --max-entries */
};

static int __attribute__((format(printf, 2, 3))) bad(struct parser *p, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cfs_msg("%s:%lu: %s", p->name, p->line, buf);
	return -EINVAL;
}

/* Reading as mkcomposefs does without CFS_PARSE_STRICT. */
static bool lax(const struct parser *p)
{
	return p->opts && p->opts->lax_dump;
}

static struct path_entry *lookup(struct parser *p, const char *path, size_t len)
{
	uint64_t h;

	if (!p->table_size)
		return NULL;
	h = cfs_fnv1a(CFS_FNV1A_INIT, path, len);
	for (size_t j = (size_t)h & (p->table_size - 1); p->table[j].path;
	     j = (j + 1) & (p->table_size - 1)) {
		struct path_entry *e = &p->table[j];

		if (e->hash == h && e->len == len && memcmp(e->path, path, len) == 0)
			return e;
	}
	return NULL;
}

/*
 * What the tree holds stays in proportion to --max-entries: the entries
 * (every path recorded but the root's, and the one being read), and the
 * bytes of xattrs and symlink targets read.
 */
static int too_many(struct parser *p)
{
	return cfs_entries_check(p->opts ? p->opts->max_entries : 0, p->used, p->meta,
				 "%s:%lu", p->name, p->line);
}

/* Record @path (taking ownership of it) as naming @n. */
static int insert(struct parser *p, char *path, size_t len, struct cfs_node *n, bool skipped)
{
	uint64_t h = cfs_fnv1a(CFS_FNV1A_INIT, path, len);
	size_t j;

	if (2 * (p->used + 1) > p->table_size) {
		size_t size = p->table_size ? 2 * p->table_size : 1024;
		struct path_entry *t = calloc(size, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < p->table_size; i++) {
			if (!p->table[i].path)
				continue;
			for (j = (size_t)p->table[i].hash & (size - 1); t[j].path; j = (j + 1) & (size - 1))
				;
			t[j] = p->table[i];
		}
		free(p->table);
		p->table = t;
		p->table_size = size;
	}
	for (j = (size_t)h & (p->table_size - 1); p->table[j].path; j = (j + 1) & (p->table_size - 1))
		;
	p->table[j] = (struct path_entry){ path, len, h, n, skipped };
	p->used++;
	return 0;
}

/*
 * Leave @n, at @path, out of the tree: its path is known (as skipped, for
 * the hardlinks to it and the entries below it) and @p keeps @n, which it
 * frees at the end. @path and @n are @p's from then on; on failure, the
 * caller's still. Return: 0 or -errno.
 */
static int leave_out(struct parser *p, char *path, size_t len, struct cfs_node *n)
{
	int r = insert(p, path, len, n, true);

	if (r)
		return r;
	p->skipped[p->n_skipped++] = n;
	return 0;
}

/*
 * Undo the escapes of @len bytes at @s into a new buffer (NUL-terminated for
 * convenience; the result may hold NULs). Return: 0, -EINVAL (reported) or
 * -ENOMEM.
 */
static int unescape(struct parser *p, const char *field, const char *s, size_t len,
		    char **out, size_t *out_len)
{
	char *d = malloc(len + 1);
	size_t n = 0;

	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		size_t k;

		if (s[i] != '\\') {
			d[n++] = s[i];
			continue;
		}
		k = cfs_unescape_one(s + i, len - i, &d[n]);
		if (!k)
			goto bad_escape;
		n++;
		i += k - 1;
	}
	d[n] = '\0';
	*out = d;
	*out_len = n;
	return 0;
bad_escape:
	free(d);
	return bad(p, "bad escape sequence in %s", field);
}

static int parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out, int base)
{
	uint64_t v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int d = cfs_xdigit_value(s[i]);

		if (d < 0 || d >= base || v > (max - (uint64_t)d) / (uint64_t)base)
			return -EINVAL;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

struct field {
	const char *s;
	size_t len;
};

static bool is_unset(const struct field *f)
{
	return f->len == 1 && f->s[0] == '-';
}

/* The target a hardlink's or a symlink's PAYLOAD names; @missing when it names none. */
static int link_target(struct parser *p, const struct field *payload, const char *missing,
		       char **target, size_t *len)
{
	if (is_unset(payload))
		return bad(p, "%s", missing);
	return unescape(p, "PAYLOAD", payload->s, payload->len, target, len);
}

static int number(struct parser *p, const struct field *f, const char *what, uint64_t max,
		  int base, uint64_t *out)
{
	if (parse_u64(f->s, f->len, max, out, base))
		return bad(p, "bad %s '%.*s'", what, (int)(f->len > 40 ? 40 : f->len), f->s);
	return 0;
}

/* MTIME is SEC.NSEC: two integers, not a decimal fraction ("1.5" is 5 ns). */
static int parse_mtime(struct parser *p, const struct field *f, int64_t *sec, uint32_t *nsec)
{
	const char *dot = memchr(f->s, '.', f->len);
	const char *s = f->s;
	size_t slen;
	bool neg = false;
	uint64_t v, ns;

	if (!dot)
		goto err;
	slen = (size_t)(dot - s);
	if (slen > 0 && s[0] == '-') {
		neg = true;
		s++;
		slen--;
	}
	if (parse_u64(s, slen, neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX, &v, 10) ||
	    parse_u64(dot + 1, f->len - (size_t)(dot + 1 - f->s), 999999999, &ns, 10))
		goto err;
	*sec = neg ? (int64_t)(0 - v) : (int64_t)v;
	*nsec = (uint32_t)ns;
	return 0;
err:
	return bad(p, "bad MTIME '%.*s' (expected SECONDS.NANOSECONDS)",
		   (int)(f->len > 40 ? 40 : f->len), f->s);
}

/* Check an unescaped PATH; on success *@parent_len is the length of its parent. */
static int check_path(struct parser *p, const char *path, size_t len, size_t *parent_len)
{
	size_t start, i;

	if (len == 0 || path[0] != '/')
		return bad(p, "PATH must start with '/'");
	if (memchr(path, '\0', len))
		return bad(p, "PATH contains a NUL byte");
	if (len == 1) {
		*parent_len = 0;
		return 0;
	}
	for (start = 1, i = 1; i <= len; i++) {
		size_t clen;

		if (i < len && path[i] != '/')
			continue;
		clen = i - start;
		if (clen == 0)
			return bad(p, "empty name in PATH");
		if ((clen == 1 && path[start] == '.') ||
		    (clen == 2 && path[start] == '.' && path[start + 1] == '.'))
			return bad(p, "'.' or '..' in PATH");
		if (clen > CFS_MAX_NAME_LEN)
			return bad(p, "name in PATH longer than %d bytes", CFS_MAX_NAME_LEN);
		start = i + 1;
	}
	/* The parent of "/a" is "/" */
	for (i = len; i > 0 && path[i - 1] != '/'; i--)
		;
	*parent_len = i > 1 ? i - 1 : 1;
	return 0;
}

static int parse_xattr(struct parser *p, struct cfs_node *n, const struct field *f)
{
	const char *eq = memchr(f->s, '=', f->len);
	char *key = NULL, *value = NULL;
	size_t key_len, value_len = 0;
	int r;

	if (!eq)
		return bad(p, "xattr '%.*s' has no '='", (int)(f->len > 40 ? 40 : f->len), f->s);
	r = unescape(p, "xattr key", f->s, (size_t)(eq - f->s), &key, &key_len);
	if (r)
		return r;
	if (key_len == 0) {
		r = bad(p, "empty xattr key");
		goto out;
	}
	if (key_len > CFS_MAX_NAME_LEN) {
		r = bad(p, "xattr key longer than %d bytes", CFS_MAX_NAME_LEN);
		goto out;
	}
	if (memchr(key, '\0', key_len)) {
		r = bad(p, "xattr key contains a NUL byte");
		goto out;
	}
	{
		struct field v = { eq + 1, f->len - (size_t)(eq + 1 - f->s) };

		if (!is_unset(&v)) {
			r = unescape(p, "xattr value", v.s, v.len, &value, &value_len);
			if (r)
				goto out;
		}
	}
	if (value_len > CFS_MAX_XATTRS_SIZE) {
		r = bad(p, "xattr value longer than %d bytes", CFS_MAX_XATTRS_SIZE);
		goto out;
	}
	if (p->opts && p->opts->skip_xattrs)
		goto out;
	r = cfs_node_add_xattr(n, key, key_len, value, value_len);
	if (r == -EEXIST)
		r = bad(p, "duplicate xattr '%s'", key);
out:
	free(key);
	free(value);
	return r;
}

/* Fill the regular file @n from PAYLOAD, CONTENT and DIGEST. */
static int regular_content(struct parser *p, struct cfs_node *n, const struct field *fl)
{
	const struct field *payload = &fl[8], *content = &fl[9], *digest = &fl[10];
	char objpath[CFS_OBJECT_PATH_SIZE];
	uint8_t from_payload[CFS_DIGEST_SIZE];
	char *buf = NULL;
	size_t len;
	int r;

	if (!is_unset(digest)) {
		char hex[CFS_DIGEST_HEX_SIZE];

		if (digest->len != 2 * CFS_DIGEST_SIZE)
			return bad(p, "DIGEST must be 64 hex digits");
		memcpy(hex, digest->s, digest->len);
		hex[digest->len] = '\0';
		if (cfs_digest_from_hex(hex, n->digest))
			return bad(p, "DIGEST must be 64 hex digits");
		n->has_digest = true;
	}
	if (!is_unset(content)) {
		r = unescape(p, "CONTENT", content->s, content->len, &buf, &len);
		if (r)
			return r;
		if (len != n->size) {
			free(buf);
			return bad(p, "CONTENT is %zu bytes, SIZE says %llu", len,
				   (unsigned long long)n->size);
		}
		if (!is_unset(payload)) {
			free(buf);
			return bad(p, "CONTENT and PAYLOAD both given");
		}
		if (n->size && !(p->opts && p->opts->digest_store) && !cfs_format_holds_content(p->opts)) {
			free(buf);
			return bad(p, "inline CONTENT needs a digest store (--digest-store)");
		}
		n->content = (uint8_t *)buf;
		n->check_digest = n->has_digest;
		n->has_digest = false;
		return 0;
	}
	if (!is_unset(payload)) {
		r = unescape(p, "PAYLOAD", payload->s, payload->len, &buf, &len);
		if (r)
			return r;
		if (len >= CFS_MAX_PAYLOAD_PATH || memchr(buf, '\0', len)) {
			free(buf);
			return bad(p, "backing path in PAYLOAD is longer than %d bytes or has a NUL",
				   CFS_MAX_PAYLOAD_PATH - 1);
		}
		n->payload = buf;
		n->payload_len = len;
		/*
		 * A by-digest path ("xx/<62 hex>", with or without an extension
		 * such as ".file") names its digest, as DIGEST_FROM_PAYLOAD
		 * defines; a DIGEST that says otherwise is a contradiction.
		 */
		if (cfs_digest_from_payload(buf, (u32)len, from_payload) == 0) {
			if (n->has_digest && memcmp(from_payload, n->digest, CFS_DIGEST_SIZE))
				return bad(p, "DIGEST differs from the digest PAYLOAD names");
			if (!n->has_digest)
				n->digest_derived = true;
			memcpy(n->digest, from_payload, CFS_DIGEST_SIZE);
			n->has_digest = true;
			/* The object path itself: spelled from the digest when written. */
			cfs_object_path(n->digest, objpath);
			if (len == CFS_OBJECT_PATH_SIZE - 1 && memcmp(buf, objpath, len) == 0)
				cfs_node_set_object_payload(n);
		}
		return 0;
	}
	if (n->has_digest) {
		n->payload_derived = true;
		cfs_node_set_object_payload(n);
		return 0;
	}
	/* A composefs 1.0 image may leave the backing file to the mount. */
	if (n->size > cfs_format_max_file_size(p->opts))
		return bad(p, "SIZE %llu is more than a composefs 1.0 image can hold",
			   (unsigned long long)n->size);
	if (n->size && !cfs_format_holds_content(p->opts))
		return bad(p, "regular file of SIZE %llu has no PAYLOAD, CONTENT or DIGEST",
			   (unsigned long long)n->size);
	return 0;
}

static int parse_line(struct parser *p, char *line, size_t len)
{
	struct field f[N_FIELDS];
	size_t nf = 0, i = 0, parent_len = 0;
	struct path_entry *pe;
	struct cfs_node *n = NULL, *parent = NULL;
	char *path = NULL;
	size_t path_len;
	uint64_t v;
	bool hardlink = false;
	int r;

	if (memchr(line, '\0', len))
		return bad(p, "NUL byte in line");

	/* The first N_FIELDS space-separated fields; xattrs are parsed later. */
	while (nf < N_FIELDS) {
		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		f[nf].s = line + i;
		while (i < len && line[i] != ' ')
			i++;
		f[nf].len = (size_t)(line + i - f[nf].s);
		nf++;
	}
	if (nf < N_FIELDS && lax(p) && nf > 0) {
		/* As mkcomposefs reads a line when not told to be strict. */
		for (; nf < N_FIELDS; nf++)
			f[nf] = (struct field){ "-", 1 };
	}
	if (nf < N_FIELDS)
		return bad(p, "expected at least %d fields, found %zu", N_FIELDS, nf);

	r = unescape(p, "PATH", f[0].s, f[0].len, &path, &path_len);
	if (r)
		return r;
	r = check_path(p, path, path_len, &parent_len);
	if (r)
		goto out;
	if (lookup(p, path, path_len)) {
		r = bad(p, "duplicate PATH '%s'", path);
		goto out;
	}
	if (path_len > 1) {
		pe = lookup(p, path, parent_len);
		if (!pe) {
			r = bad(p, "parent directory of '%s' not found (parents must come first)",
				path);
			goto out;
		}
		parent = pe->node;
		if (pe->skipped || !cfs_node_is_dir(parent)) {
			r = bad(p, "parent of '%s' is not a directory", path);
			goto out;
		}
	} else if (p->root) {
		r = bad(p, "duplicate PATH '/'");
		goto out;
	}
	r = too_many(p);
	if (r)
		goto out;

	{
		const char *name = path_len > 1 ? path + parent_len + (parent_len > 1) : "";

		n = cfs_node_new(name, path_len > 1 ? strlen(name) : 0);
		if (!n) {
			r = -ENOMEM;
			goto out;
		}
		n->line = p->line;
	}

	if (f[2].len > 0 && f[2].s[0] == '@') {
		char *target;
		size_t target_len;

		hardlink = true;
		f[2].s++;
		f[2].len--;
		if (!parent) {
			r = bad(p, "the root cannot be a hardlink");
			goto out;
		}
		r = link_target(p, &f[8], "hardlink without a target PATH in PAYLOAD", &target,
				&target_len);
		if (r)
			goto out;
		pe = lookup(p, target, target_len);
		if (!pe) {
			r = bad(p, "hardlink target '%s' not found (targets must come first)", target);
			free(target);
			goto out;
		}
		free(target);
		if (!pe->skipped && cfs_node_is_dir(pe->node)) {
			r = bad(p, "hardlink to a directory");
			goto out;
		}
		if (pe->skipped) {
			/* Its target was left out, so is the hardlink. */
			r = leave_out(p, path, path_len, n);
			if (r)
				goto out;
			return 0;
		}
		n->link_target = cfs_node_inode(pe->node);
	}

	r = number(p, &f[1], "SIZE", UINT64_MAX, 10, &n->size);
	if (!r)
		r = number(p, &f[2], "MODE", lax(p) ? UINT32_MAX : 0177777, 8, &v);
	if (r)
		goto out;
	n->mode = (uint32_t)v & 0177777; /* lax: only what an inode's mode holds */
	if (!cfs_mode_valid(n->mode)) {
		r = bad(p, "MODE %o has no valid file type", n->mode);
		goto out;
	}
	n->from_dump = true;
	if (!(r = number(p, &f[3], "NLINK", UINT32_MAX, 10, &v)))
		n->dump_nlink = (uint32_t)v;
	if (!r && !(r = number(p, &f[4], "UID", UINT32_MAX, 10, &v)))
		n->uid = (uint32_t)v;
	if (!r && !(r = number(p, &f[5], "GID", UINT32_MAX, 10, &v)))
		n->gid = (uint32_t)v;
	if (!r && !(r = number(p, &f[6], "RDEV", UINT32_MAX, 10, &v)))
		n->rdev = (uint32_t)v;
	if (!r)
		r = parse_mtime(p, &f[7], &n->mtime_sec, &n->mtime_nsec);
	if (r)
		goto out;
	if (p->opts && p->opts->use_epoch) {
		n->mtime_sec = 0;
		n->mtime_nsec = 0;
	}

	if (hardlink) {
		/* A hardlink's own fields are checked but not used. */
		n->mode = n->link_target->mode;
		goto add;
	}
	if (!parent && !S_ISDIR(n->mode)) {
		r = bad(p, "'/' must be a directory");
		goto out;
	}
	if (!S_ISCHR(n->mode) && !S_ISBLK(n->mode))
		n->rdev = 0;
	if (!S_ISREG(n->mode))
		n->size = 0;
	if (!S_ISREG(n->mode) && (!is_unset(&f[9]) || !is_unset(&f[10]))) {
		r = bad(p, "CONTENT and DIGEST are for regular files only");
		goto out;
	}
	if (!S_ISREG(n->mode) && !S_ISLNK(n->mode) && !is_unset(&f[8])) {
		r = bad(p, "PAYLOAD is for regular files and symlinks only");
		goto out;
	}
	if (S_ISREG(n->mode)) {
		r = regular_content(p, n, f);
		if (r)
			goto out;
	} else if (S_ISLNK(n->mode)) {
		char *target;
		size_t target_len;

		r = link_target(p, &f[8], "symlink without a target in PAYLOAD", &target, &target_len);
		if (r)
			goto out;
		n->payload = target;
		n->payload_len = target_len;
		if (target_len >= CFS_MAX_PAYLOAD_PATH) {
			r = bad(p, "symlink target longer than %d bytes", CFS_MAX_PAYLOAD_PATH - 1);
			goto out;
		}
		if (memchr(target, '\0', target_len)) {
			r = bad(p, "symlink target contains a NUL byte");
			goto out;
		}
	}

	/* Then the xattrs, KEY=VALUE each. */
	while (i < len) {
		struct field x;

		while (i < len && line[i] == ' ')
			i++;
		if (i >= len)
			break;
		x.s = line + i;
		while (i < len && line[i] != ' ')
			i++;
		x.len = (size_t)(line + i - x.s);
		r = parse_xattr(p, n, &x);
		if (r)
			goto out;
	}
	p->meta += cfs_node_meta(n);
	r = too_many(p);
	if (r)
		goto out;

	if ((S_ISCHR(n->mode) || S_ISBLK(n->mode)) && p->opts && p->opts->skip_devices) {
		r = leave_out(p, path, path_len, n);
		if (r)
			goto out;
		return 0;
	}
add:
	if (parent) {
		r = cfs_node_add_child(parent, n);
		if (r)
			goto out;
	} else {
		p->root = n;
	}
	r = insert(p, path, path_len, n, false);
	path = NULL; /* the node is in the tree: freed with it even on error */
	n = NULL;
out:
	free(path);
	if (n)
		cfs_tree_free(n);
	return r;
}

int cfs_tree_from_dump(FILE *in, const char *name, const struct cfs_build_options *opts,
		       struct cfs_node **rootp)
{
	struct parser p = { .name = strcmp(name, "-") == 0 ? "stdin" : name, .opts = opts };
	char *line = NULL;
	size_t alloc = 0, skipped_alloc = 0;
	struct cfs_node **s;
	ssize_t len;
	int r = 0;

	if (opts && !cfs_reserved_ok(opts->reserved, sizeof(opts->reserved), "build options"))
		return -EINVAL;
	while ((len = getline(&line, &alloc, in)) >= 0) {
		p.line++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len == 0)
			continue; /* blank lines are allowed */
		s = cfs_grow(p.skipped, &skipped_alloc, p.n_skipped, sizeof(*s), 16);
		if (!s) {
			r = -ENOMEM;
			break;
		}
		p.skipped = s;
		r = parse_line(&p, line, (size_t)len);
		if (r)
			break;
	}
	if (!r && ferror(in)) {
		r = -EIO;
		cfs_msg("%s: read error", p.name);
	}
	if (!r && !p.root) {
		p.line++;
		r = bad(&p, "no root directory '/' in the dump");
	}
	free(line);
	for (size_t i = 0; i < p.table_size; i++)
		free(p.table[i].path);
	free(p.table);
	for (size_t i = 0; i < p.n_skipped; i++) {
		p.skipped[i]->parent = NULL;
		cfs_tree_free(p.skipped[i]);
	}
	free(p.skipped);
	if (r) {
		cfs_tree_free(p.root);
		return r;
	}
	*rootp = p.root;
	return 0;
}
