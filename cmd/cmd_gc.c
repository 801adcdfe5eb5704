// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl gc: remove from a digest store every object none of the given
 * images references, and the temporaries of dead builds and fetches. Every
 * image is read in full (lib/base/objects.c) before the store is touched; then
 * the store's lock is taken exclusively, waiting for running builds and
 * fetches to publish, and lib/store/gc.c sweeps. This file parses options, lists
 * the images and prints what was removed, as text or one JSON document.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/image.h"
#include "cfs/repo.h"
#include "cfs/store.h"
#include "cfs/util.h"

struct opts {
	const char *basedir;
	const char *repo;
	const char *images_from;
	bool dry_run;
	bool json;
};

/* What --json lists: copies of the entries the sweep reported. */
struct entry {
	int kind; /* enum cfs_gc_kind, or KIND_IMAGE */
	char *path;
	uint64_t size;
	char *why;
};

struct report {
	const struct opts *o;
	struct entry *e;
	size_t n, cap;
	bool oom;
	bool exposed; /* the store or repository is open to other users */
};

struct list {
	char **v;
	size_t n, cap;
};

static int list_add(struct list *l, const char *s, size_t len)
{
	char **v = cfs_grow(l->v, &l->cap, l->n, sizeof(*v), 16), *copy;

	if (!v)
		return -ENOMEM;
	l->v = v;
	copy = strndup(s, len);
	if (!copy)
		return -ENOMEM;
	l->v[l->n++] = copy;
	return 0;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* One image path per line of @file ('-': stdin); empty lines are skipped. */
static int read_list(const char *file, struct list *l)
{
	FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0;

	if (!in)
		return -errno;
	while ((len = getline(&line, &cap, in)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			len--;
		if (len == 0)
			continue;
		r = list_add(l, line, (size_t)len);
		if (r)
			break;
	}
	if (!r && ferror(in))
		r = -EIO;
	free(line);
	if (in != stdin)
		fclose(in);
	return r;
}

/* A repository's image no name reaches (the others are enum cfs_gc_kind). */
#define KIND_IMAGE (-1)

static const char *kind_name(int k)
{
	return k == KIND_IMAGE ? "image" : k == CFS_GC_OBJECT ? "object" :
	       k == CFS_GC_TEMPORARY ? "temporary" : "other";
}

static void add_entry(struct report *rp, int kind, const char *path, uint64_t size,
		      const char *why)
{
	struct entry *v, *x;

	if (rp->oom)
		return;
	v = cfs_grow(rp->e, &rp->cap, rp->n, sizeof(*v), 256);
	if (!v) {
		rp->oom = true;
		return;
	}
	rp->e = v;
	x = &rp->e[rp->n];
	x->kind = kind;
	x->size = size;
	x->path = strdup(path);
	x->why = why ? strdup(why) : NULL;
	if (!x->path || (why && !x->why)) {
		free(x->path);
		free(x->why);
		rp->oom = true;
		return;
	}
	rp->n++;
}

static void print_removed(const struct opts *o, int kind, const char *path, uint64_t size)
{
	printf("%s %s ", o->dry_run ? "would remove" : "removed", kind_name(kind));
	cfs_escape(stdout, path, strlen(path), 0);
	printf(" (%llu bytes)\n", (unsigned long long)size);
}

/* An image or temporary of the repository that cfs_repo_gc() removed. */
static void on_repo_entry(void *ctx, const char *path, uint64_t size, bool temporary)
{
	struct report *rp = ctx;
	int kind = temporary ? CFS_GC_TEMPORARY : KIND_IMAGE;

	if (!rp->o->json)
		print_removed(rp->o, kind, path, size);
	else
		add_entry(rp, kind, path, size, NULL);
}

static void on_entry(void *ctx, const struct cfs_gc_entry *e)
{
	struct report *rp = ctx;

	if (!rp->o->json) {
		if (e->kind == CFS_GC_OTHER) {
			fprintf(stderr, "cfsctl: gc: not an object, left alone: '%s/",
				rp->o->basedir);
			cfs_escape(stderr, e->path, strlen(e->path), 0);
			fprintf(stderr, "': %s\n", e->why);
			return;
		}
		print_removed(rp->o, (int)e->kind, e->path, e->size);
		return;
	}
	add_entry(rp, (int)e->kind, e->path, e->size, e->why);
}

static int print_json(const struct opts *o, const struct report *rp, size_t n_images,
		      size_t referenced, const struct cfs_gc_stats *st,
		      const struct cfs_repo_gc_stats *rst)
{
	json_t *doc = json_object(), *removed = json_array(), *others = json_array();
	int r;

	if (o->repo) {
		cli_json_set(doc, "repository", cli_json_text(o->repo));
		cli_json_set(doc, "removed_images", json_integer((json_int_t)rst->images));
		cli_json_set(doc, "removed_images_bytes", json_integer((json_int_t)rst->images_bytes));
	}
	cli_json_set(doc, "store", cli_json_text(o->basedir));
	cli_json_set(doc, "open_to_others", json_boolean(rp->exposed));
	cli_json_set(doc, "dry_run", json_boolean(o->dry_run));
	cli_json_set(doc, "images", json_integer((json_int_t)n_images));
	cli_json_set(doc, "referenced", json_integer((json_int_t)referenced));
	cli_json_set(doc, "kept", json_integer((json_int_t)st->kept));
	cli_json_set(doc, "kept_bytes", json_integer((json_int_t)st->kept_bytes));
	cli_json_set(doc, "missing", json_integer((json_int_t)(referenced - st->kept)));
	cli_json_set(doc, "removed_objects", json_integer((json_int_t)st->objects));
	cli_json_set(doc, "removed_temporaries",
		     json_integer((json_int_t)(st->temporaries + rst->temporaries)));
	cli_json_set(doc, "bytes_freed",
		     json_integer((json_int_t)(st->objects_bytes + st->temporaries_bytes +
					       rst->images_bytes + rst->temporaries_bytes)));
	cli_json_set(doc, "left_alone", json_integer((json_int_t)st->others));
	cli_json_set(doc, "failed", json_integer((json_int_t)(st->failed + rst->failed)));
	for (size_t i = 0; i < rp->n; i++) {
		if (rp->e[i].kind == CFS_GC_OTHER)
			cli_json_push(others, json_pack("{s:o, s:o}", "path",
							cli_json_text(rp->e[i].path), "reason",
							cli_json_text(rp->e[i].why)));
		else
			cli_json_push(removed, json_pack("{s:o, s:s, s:I}", "path",
							 cli_json_text(rp->e[i].path), "kind",
							 kind_name(rp->e[i].kind), "bytes",
							 (json_int_t)rp->e[i].size));
	}
	cli_json_set(doc, "removed", removed);
	cli_json_set(doc, "not_objects", others);
	r = cli_json_print(doc, CLI_JSON_LINE);
	if (r < 0)
		cli_error("gc: the JSON summary: %s", strerror(-r));
	return r;
}

static void print_summary(const struct opts *o, const struct report *rp, size_t n_images,
			  size_t referenced, const struct cfs_gc_stats *st,
			  const struct cfs_repo_gc_stats *rst)
{
	unsigned long long temporaries = st->temporaries + rst->temporaries;
	const char *dir = o->repo ? o->repo : o->basedir;

	if (o->repo)
		printf("images: %zu kept, %llu %s, %llu bytes\n", n_images,
		       (unsigned long long)rst->images, o->dry_run ? "would be removed" : "removed",
		       (unsigned long long)rst->images_bytes);
	printf("kept: %llu %s, %llu bytes\n", (unsigned long long)st->kept,
	       st->kept == 1 ? "object" : "objects", (unsigned long long)st->kept_bytes);
	printf("%s: %llu %s, %llu %s, %llu bytes %s\n",
	       o->dry_run ? "would remove" : "removed", (unsigned long long)st->objects,
	       st->objects == 1 ? "object" : "objects", temporaries,
	       temporaries == 1 ? "temporary" : "temporaries",
	       (unsigned long long)(st->objects_bytes + st->temporaries_bytes +
				    rst->temporaries_bytes),
	       o->dry_run ? "would be freed" : "freed");
	printf("left alone: %llu %s\n", (unsigned long long)st->others,
	       st->others == 1 ? "entry that is not an object" : "entries that are not objects");
	printf("missing: %llu %s\n", (unsigned long long)(referenced - st->kept),
	       referenced - st->kept == 1 ? "object an image references is not in the store" :
					    "objects the images reference are not in the store");
	if (rp->exposed) {
		printf("open: the %s '", o->repo ? "repository" : "store");
		cfs_escape(stdout, dir, strlen(dir), 0);
		printf("' is open to other users, who can read what it holds; make it private: chmod 0700 '");
		cfs_escape(stdout, dir, strlen(dir), 0);
		printf("'\n");
	}
}

static void free_report(struct report *rp)
{
	for (size_t i = 0; i < rp->n; i++) {
		free(rp->e[i].path);
		free(rp->e[i].why);
	}
	free(rp->e);
}

/*
 * Open the store @basedir into *@dirfd and take its lock, exclusively,
 * saying so when it must wait (for the @what @name: the store, or the
 * repository it is in). Return: the lock, or -1 or -errno (said).
 */
static int open_locked(const char *basedir, const char *what, const char *name, int *dirfd)
{
	int lockfd;

	*dirfd = open(basedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		cli_error("gc: opening store: '%s': %s", basedir, strerror(errno));
		return -1;
	}
	lockfd = cfs_store_lock(*dirfd, true, false);
	if (lockfd == -EWOULDBLOCK) {
		cli_error("gc: waiting for the %s '%s': a build, pull, fetch or gc is using it",
			  what, name);
		lockfd = cfs_store_lock(*dirfd, true, true);
	}
	if (lockfd < 0)
		cli_error("gc: locking %s: '%s': %s", what, name, strerror(-lockfd));
	return lockfd;
}

/*
 * Is @basedir an ostree repository's objects directory (its parent has
 * ostree's config and refs/heads)? Its "<62 hex>.file" objects would look
 * like a store's to the sweep, and a bare repository's images point there.
 */
static bool ostree_objects(const char *basedir)
{
	char *config = NULL, *heads = NULL;
	struct stat st;
	bool r;

	if (asprintf(&config, "%s/../config", basedir) < 0)
		config = NULL;
	if (asprintf(&heads, "%s/../refs/heads", basedir) < 0)
		heads = NULL;
	r = config && heads && stat(config, &st) == 0 && S_ISREG(st.st_mode) &&
	    stat(heads, &st) == 0 && S_ISDIR(st.st_mode);
	free(config);
	free(heads);
	return r;
}

static int run(const struct opts *o, char **images, size_t n_images)
{
	struct report rp = { .o = o };
	struct cfs_gc_stats st;
	struct cfs_objects set;
	int dirfd = -1, lockfd = -1, r, rc = EXIT_FAIL;

	/* Every image is read in full before the store is even opened. */
	cfs_objects_init(&set);
	for (size_t i = 0; i < n_images; i++) {
		struct cfs_image *img;

		r = cfs_image_open(images[i], &img);
		if (r < 0) {
			cli_error("gc: opening image: '%s': %s; nothing removed", images[i],
				  strerror(-r));
			goto out;
		}
		r = cfs_objects_add_image(&set, img);
		cfs_image_close(img);
		if (r < 0) {
			cli_error("gc: reading image: '%s': %s; nothing removed", images[i],
				  strerror(-r));
			goto out;
		}
	}

	if (ostree_objects(o->basedir)) {
		cli_error("gc: '%s' is the objects of an ostree repository, which ostree prunes: gc removes nothing there",
			  o->basedir);
		goto out;
	}
	lockfd = open_locked(o->basedir, "store", o->basedir, &dirfd);
	if (lockfd < 0)
		goto out;
	rp.exposed = cfs_store_check_private(dirfd, "digest store", o->basedir) > 0;

	r = cfs_store_gc(dirfd, o->basedir, &set, o->dry_run, on_entry, &rp, &st);
	if (rp.oom) {
		cli_error("gc: %s", strerror(ENOMEM));
		goto out;
	}
	if (o->json) {
		if (print_json(o, &rp, n_images, set.n, &st, &(struct cfs_repo_gc_stats){ 0 }))
			r = -ENOMEM;
	} else {
		print_summary(o, &rp, n_images, set.n, &st, &(struct cfs_repo_gc_stats){ 0 });
	}
	rc = r ? EXIT_FAIL : EXIT_OK;
out:
	cfs_store_unlock(lockfd);
	if (dirfd >= 0)
		close(dirfd);
	free_report(&rp);
	cfs_objects_free(&set);
	if (cli_close_stdout() != EXIT_OK)
		rc = EXIT_FAIL;
	return rc;
}

static int cmp_digest(const void *a, const void *b)
{
	return memcmp(a, b, CFS_DIGEST_SIZE);
}

/*
 * The sealed form of the image @n points at, which pull --repo stored
 * beside it and recorded as the name's seal: into @digest, 1 when it is
 * in the repository, else 0.
 */
static int sealed_form(struct cfs_repo *repo, const char *dir, const struct cfs_repo_name *n,
		       uint8_t digest[CFS_DIGEST_SIZE])
{
	json_t *rec = NULL;
	char *text = NULL, *path = NULL;
	const char *seal;
	int found = 0;

	if (cfs_repo_get_origin(repo, n->name, n->digest, &text) == 0)
		rec = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	free(text);
	seal = json_string_value(json_object_get(rec, "seal"));
	if (seal && cfs_digest_from_hex(seal, digest) == 0 &&
	    asprintf(&path, "%s/images/%s", dir, seal) >= 0) {
		found = access(path, F_OK) == 0;
		free(path);
	}
	json_decref(rec);
	return found;
}

/*
 * gc of a repository. The lock comes first: a build or pull holds it
 * shared until its name is set, so the names read after it are all there
 * are. Every image a name reaches (and each one @args names, and the
 * sealed form a pull recorded for a name) is read in full; then the other
 * images, the dead temporaries and the objects no kept image references
 * are removed.
 */
static int run_repo(struct opts *o, char **args, size_t n_args)
{
	struct report rp = { .o = o };
	struct cfs_repo_gc_stats rst = { 0 };
	struct cfs_repo_list l = { 0 };
	struct cfs_gc_stats st;
	struct cfs_objects set;
	struct cfs_repo *repo = NULL;
	uint8_t(*keep)[CFS_DIGEST_SIZE] = NULL;
	char hex[CFS_DIGEST_HEX_SIZE], *path;
	size_t n = 0, images = 0;
	int dirfd = -1, lockfd = -1, r, r2, rc = EXIT_FAIL;

	cfs_objects_init(&set);
	if (cli_repo_open("gc", o->repo, false, &repo) != EXIT_OK)
		goto out;
	o->basedir = cfs_repo_objects(repo);
	lockfd = open_locked(o->basedir, "repository", o->repo, &dirfd);
	if (lockfd < 0)
		goto out;
	/* opening the repository warned of it on stderr; the summary says it too */
	rp.exposed = cfs_repo_exposed(repo) > 0;
	if (cfs_repo_list(repo, &l) < 0)
		goto out;
	keep = calloc(2 * l.n_names + n_args + 1, sizeof(*keep));
	if (!keep) {
		cli_error("gc: %s", strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; i < l.n_names; i++) {
		if (!l.names[i].ok) {
			cli_error("gc: the name '%s' in '%s/images/refs': %s; nothing removed",
				  l.names[i].name, o->repo, l.names[i].problem);
			goto out;
		}
		memcpy(keep[n++], l.names[i].digest, CFS_DIGEST_SIZE);
		n += (size_t)sealed_form(repo, o->repo, &l.names[i], keep[n]);
	}
	for (size_t i = 0; i < n_args; i++) {
		if (cfs_repo_resolve(repo, args[i], keep[n], NULL) < 0) {
			cli_error("gc: nothing removed");
			goto out;
		}
		n++;
	}
	if (n)
		qsort(keep, n, sizeof(*keep), cmp_digest);
	for (size_t i = 0; i < n; i++) {
		struct cfs_image *img;

		if (i && memcmp(keep[i], keep[i - 1], CFS_DIGEST_SIZE) == 0)
			continue;
		images++;
		cfs_digest_to_hex(keep[i], hex);
		if (asprintf(&path, "%s/images/%s", o->repo, hex) < 0) {
			cli_error("gc: %s", strerror(ENOMEM));
			goto out;
		}
		r = cfs_image_open(path, &img);
		if (r == 0) {
			r = cfs_objects_add_image(&set, img);
			cfs_image_close(img);
		}
		if (r < 0) {
			cli_error("gc: reading image: '%s': %s; nothing removed", path, strerror(-r));
			free(path);
			goto out;
		}
		free(path);
	}

	r = cfs_repo_gc(repo, (const uint8_t(*)[CFS_DIGEST_SIZE])keep, n, o->dry_run,
			on_repo_entry, &rp, &rst);
	r2 = cfs_store_gc(dirfd, o->basedir, &set, o->dry_run, on_entry, &rp, &st);
	if (rp.oom) {
		cli_error("gc: %s", strerror(ENOMEM));
		goto out;
	}
	if (o->json) {
		if (print_json(o, &rp, images, set.n, &st, &rst))
			r = -ENOMEM;
	} else {
		print_summary(o, &rp, images, set.n, &st, &rst);
	}
	rc = r || r2 ? EXIT_FAIL : EXIT_OK;
out:
	cfs_store_unlock(lockfd);
	if (dirfd >= 0)
		close(dirfd);
	free(keep);
	cfs_repo_list_free(&l);
	cfs_repo_close(repo);
	free_report(&rp);
	cfs_objects_free(&set);
	if (cli_close_stdout() != EXIT_OK)
		rc = EXIT_FAIL;
	return rc;
}

static int gc_option(void *ctx, int c, const char *arg)
{
	struct opts *o = ctx;

	switch (c) {
	case CLI_OPT_BASEDIR:
		if (o->basedir)
			return cli_usage("gc", "--basedir given twice: one store at a time");
		o->basedir = arg;
		return EXIT_OK;
	case 'f':
		if (o->images_from)
			return cli_usage("gc", "--images-from given twice");
		o->images_from = arg;
		return EXIT_OK;
	}
	return -1;
}

/* cfsctl gc --help, and its man page (docs/mkman.py) */
const char cmd_gc_usage[] =
	  "Usage: cfsctl gc --basedir DIR [--dry-run] [--json] IMAGE...\n"
	  "       cfsctl gc --basedir DIR [--dry-run] [--json] --images-from FILE\n"
	  "       cfsctl gc --repo DIR [--dry-run] [--json] [IMAGE...]\n"
	  "\n"
	  "Remove from the digest store DIR every object (a regular file\n"
	  "DIR/xx/<62 hex digits>) that none of the IMAGEs references, and the\n"
	  "temporaries left in DIR by builds and fetches that died. Give every\n"
	  "image that uses the store: what no image given references is removed.\n"
	  "\n"
	  "Every image is read in full before anything is removed: an image that\n"
	  "cannot be opened or is corrupt is an error naming it, and nothing is\n"
	  "removed. gc then locks the store exclusively (an flock() on DIR):\n"
	  "builds with --digest-store and fetches hold that lock shared while they\n"
	  "write and publish objects, so gc waits for them to finish publishing\n"
	  "(saying so on stderr), and they wait for gc; a second gc waits for the\n"
	  "first. A file named as ostree names its payloads, xx/<62 hex>.file\n"
	  "(build --from-ostree unpacks an archive repository's contents under\n"
	  "those names), is an object too; an ostree repository's own objects\n"
	  "directory is refused, as ostree prunes it. Anything in DIR that is not\n"
	  "an object, a temporary or an xx directory (other names, symlinks,\n"
	  "other directories, temporaries of running processes) is reported on\n"
	  "stderr and left alone. Symlinks are never followed. A store (or\n"
	  "repository) open to other users, who can then read what it holds, is\n"
	  "said on stderr and in the summary ('open:', JSON open_to_others).\n"
	  "\n"
	  "With --repo, gc cleans the repository DIR (see cfsctl images): it takes\n"
	  "the lock first, then keeps every image a name reaches, the sealed form\n"
	  "that pull --repo stored beside a sealed image and recorded for its name\n"
	  "(images --json's seal), and the IMAGEs\n"
	  "given (names or digests), with every object they reference; it removes\n"
	  "the images no name reaches (as ostree prunes unreferenced commits: an\n"
	  "image is kept by naming it), the temporaries of dead builds and pulls\n"
	  "in DIR/images, and the objects of DIR/objects no kept image references.\n"
	  "A name that is not a symlink to an image of DIR, or an image that\n"
	  "cannot be read, is an error and nothing is removed. Builds and pulls\n"
	  "into DIR hold the lock shared until their name is set, so gc never\n"
	  "removes an image or object about to be named.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir DIR        the digest store to clean\n"
	  "  --repo DIR           the repository to clean\n"
	  "  --images-from FILE   read the image paths from FILE, one per line\n"
	  "                       ('-': standard input), instead of the arguments\n"
	  "  -n, --dry-run        remove nothing; report what would be removed\n"
	  "  --json               one JSON document on stdout: store, dry_run,\n"
	  "                       images, referenced, kept, kept_bytes, missing,\n"
	  "                       (with --repo: repository, removed_images,\n"
	  "                       removed_images_bytes; removed images are\n"
	  "                       {\"path\": \"images/<hex>\", \"kind\": \"image\"})\n"
	  "                       removed_objects, removed_temporaries, bytes_freed,\n"
	  "                       left_alone, failed, removed: [{path, kind,\n"
	  "                       bytes}] and not_objects: [{path, reason}]\n"
	  "  -h, --help           show this help\n"
	  "\n"
	  "Output: a line \"removed object xx/... (N bytes)\", \"removed temporary\n"
	  "NAME (N bytes)\" or \"removed image images/<hex> (N bytes)\" (\"would\n"
	  "remove\" with --dry-run) per entry, in sorted order, then a summary:\n"
	  "with --repo the images kept and removed, objects kept and their bytes, objects\n"
	  "and temporaries removed and the bytes freed (file sizes), entries left\n"
	  "alone, and objects the images reference that the store lacks.\n"
	  "\n"
	  "Examples:\n"
	  "  cfsctl gc --dry-run --basedir objects rootfs.cfs other.cfs\n"
	  "  cfsctl gc --repo /var/lib/cfs\n"
	  "\n"
	  "Exit status: 0 success, 1 failure (an image that does not read, a\n"
	  "removal that failed), 2 usage error.\n";

int cmd_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_OPTION_BASEDIR,
		CLI_OPTION_REPO,
		{ "images-from", required_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'n' },
		CLI_OPTION_JSON,
		CLI_OPTION_HELP,
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 0 };
	const struct cli_var vars[] = {
		{ 'n', .flag = &o.dry_run },
		{ CLI_OPT_JSON, .flag = &o.json },
		{ 0 },
	};
	const struct cli_parse p = {
		.verb = "gc", .shortopts = "nh", .longopts = longopts,
		.help = cmd_gc_usage,
		.vars = vars, .repo = &o.repo, .take = gc_option, .ctx = &o,
	};
	struct list l = { 0 };
	int r, rc;

	rc = cli_parse(&p, argc, argv);
	if (rc >= 0)
		return rc;
	if (o.repo) {
		if (o.basedir)
			return cli_usage("gc", "--repo and --basedir exclude each other: the repository's store is REPO/objects");
		if (o.images_from)
			return cli_usage("gc", "--images-from is not for --repo: the names say what to keep");
		return run_repo(&o, argv + optind, (size_t)(argc - optind));
	}
	if (!o.basedir || !o.basedir[0])
		return cli_usage("gc", "--basedir DIR or --repo DIR is required");
	if (o.images_from && optind < argc)
		return cli_usage("gc", "give IMAGEs or --images-from FILE, not both");
	if (!o.images_from) {
		if (optind >= argc)
			return cli_usage("gc", "no IMAGE given: gc keeps only what images reference");
		return run(&o, argv + optind, (size_t)(argc - optind));
	}

	r = read_list(o.images_from, &l);
	if (r) {
		cli_error("gc: reading the image list: '%s': %s", o.images_from, strerror(-r));
		rc = EXIT_FAIL;
	} else if (l.n == 0) {
		cli_error("gc: the image list '%s' names no image; nothing removed",
			  o.images_from);
		rc = EXIT_FAIL;
	} else {
		rc = run(&o, l.v, l.n);
	}
	list_free(&l);
	return rc;
}
