/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the cfsctl verbs share: the command table entry, the option loop and
 * the options several verbs take, error reporting in the
 * "cfsctl: <what>: '<path>': <reason>" form, the exit codes, checked stdout,
 * and a progress line for long work on a terminal.
 */
#ifndef CFSCTL_H
#define CFSCTL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "cfs/build.h"
#include "cfs/fetch.h"
#include "cfs/oci.h"
#include "cfs/util.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

/**
 * struct cfs_command - one verb of cfsctl
 */
struct cfs_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line for "cfsctl --help" */
	const char *usage; /* the full "cfsctl VERB --help" text */
};

/* The verbs, one file each: cmd/<verb>.c, with its --help text beside its options */
int cmd_build(int argc, char **argv);
extern const char cmd_build_usage[];
int cmd_inspect(int argc, char **argv);
extern const char cmd_inspect_usage[];
int cmd_verify(int argc, char **argv);
extern const char cmd_verify_usage[];
int cmd_diff(int argc, char **argv);
extern const char cmd_diff_usage[];
int cmd_fetch(int argc, char **argv);
extern const char cmd_fetch_usage[];
int cmd_pull(int argc, char **argv);
extern const char cmd_pull_usage[];
int cmd_push(int argc, char **argv);
extern const char cmd_push_usage[];
int cmd_gc(int argc, char **argv);
extern const char cmd_gc_usage[];
int cmd_lazy(int argc, char **argv);
extern const char cmd_lazy_usage[];
int cmd_mount(int argc, char **argv);
extern const char cmd_mount_usage[];
int cmd_tui(int argc, char **argv);
extern const char cmd_tui_usage[];
int cmd_images(int argc, char **argv);
extern const char cmd_images_usage[];

/*
 * cfsctl mount --fuse (fuse.c): an image served from userspace.
 */
struct cfs_basedirs;

/**
 * struct cli_fuse_options - what cfsctl mount --fuse serves, and how
 * @image: IMAGE as given, for messages; @imgfd: it, open (read once)
 * @mountpoint: where
 * @basedirs: where backing files are looked up, in order (NULL: none)
 * @digest: the fs-verity digest the image must have, or NULL
 * @verity_check: 0, 1 or 2, as the module's verity_check=
 * @mirrors: with --lazy-url, where an object missing from every basedir
 *	is fetched from, into the first basedir (cfs_fetch_init() done); or NULL
 * @foreground: stay attached; else return once mounted
 * @allow_other: let users other than the mounter in
 */
struct cli_fuse_options {
	const char *image;
	int imgfd;
	const char *mountpoint;
	const struct cfs_basedirs *basedirs;
	const uint8_t *digest;
	int verity_check;
	const struct cli_mirrors *mirrors;
	bool foreground, allow_other;
};

/**
 * cli_fuse_mount() - mount and serve until unmounted
 *
 * Without @foreground, the calling process exits with EXIT_OK once the
 * mount is there, and a child serves it. Return: EXIT_OK, or EXIT_FAIL
 * after saying why.
 */
int cli_fuse_mount(const struct cli_fuse_options *o);
/** cli_first_userns() - is this process in the first user namespace? */
bool cli_first_userns(void);

/* The --from-ostree forms of build, verify and mount (ostree.c) */
struct cli_build;
int cli_ostree_build(struct cli_build *b, const char *spec, const char *image,
		     bool commit_digest);
/** cli_ostree_spec() - EXIT_OK when @spec is REPO:REF, else EXIT_USAGE after saying why */
int cli_ostree_spec(const char *verb, const char *spec);
int cli_ostree_verify(const char *spec, const char *gpg_homedir, bool system_keyrings);
int cli_ostree_mount(const char *spec, const char *gpg_homedir, const char *mnt,
		     enum cfs_image_format format);


/**
 * cli_usage() - report a usage error for @verb on stderr
 *
 * Return: EXIT_USAGE, for "return cli_usage(...)".
 */
int cli_usage(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct cfs_basedirs;

/**
 * cli_basedirs() - add the directories of the --basedir value @arg to @b
 *
 * Split by cfs_basedirs_parse(), as mount and the kernel module split it.
 * Return: EXIT_OK, or an exit status after saying why (a usage error for
 * an empty name).
 */
int cli_basedirs(const char *verb, struct cfs_basedirs *b, const char *arg);

/** cli_error() - "cfsctl: <message>" on stderr */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** cli_close_stdout() - flush stdout and report a write error; EXIT_OK or EXIT_FAIL */
int cli_close_stdout(void);

/*
 * SIGINT, SIGTERM and SIGHUP during a build, pull or fetch (interrupt.c):
 * the temporaries go, and the process dies of the signal.
 */
/** cli_interrupt_start() - install the handler (a signal ignored stays so) */
void cli_interrupt_start(void);
/** cli_interrupt_dir() - a store whose temporaries of this process the handler removes */
void cli_interrupt_dir(const char *dir);
/** cli_interrupt_file() - the one temporary file the handler removes (NULL: none); -1 if too long */
int cli_interrupt_file(const char *path);
/** cli_interrupt_block() - hold the signals off while a temporary is made and named */
void cli_interrupt_block(sigset_t *old);
/** cli_interrupt_unblock() - let them in again */
void cli_interrupt_unblock(const sigset_t *old);

/**
 * cli_parse_size() - parse a size: digits, then optionally K, M, G, T, P
 *	or E (powers of 1024); 0 or -1 when invalid or too large
 */
int cli_parse_size(const char *s, uint64_t *size);

/* --max-size when none is given: 256 GiB */
#define CLI_DEFAULT_MAX_SIZE ((uint64_t)256 << 30)

/*
 * --max-entries when none is given: for a tar archive, a container image or
 * a pull, what keeps it under 256 MiB (a compressed archive of empty files
 * costs next to nothing to send); for a dumpfile or a directory, whose
 * every entry is a line or an inode the input already holds, 16 Mi entries
 */
#define CLI_DEFAULT_MAX_ENTRIES 150000
#define CLI_DEFAULT_MAX_ENTRIES_LOCAL (1U << 24)

/** cli_parse_count() - parse a --jobs/--threads value (1..4096); 0 if invalid */
unsigned int cli_parse_count(const char *s);

/** cli_parse_uint() - parse a decimal from 0 to @max into @out; -1 if invalid */
int cli_parse_uint(const char *s, unsigned int max, unsigned int *out);

/*
 * The getopt values of the options several verbs take, and their entries
 * for a verb's struct option table; cli_parse() handles them.
 */
enum {
	CLI_OPT_BASEDIR = 'b',
	CLI_OPT_HELP = 'h',
	CLI_OPT_JSON = 'J',
	CLI_OPT_REPO = 'R',
};

#define CLI_OPTION_BASEDIR { "basedir", required_argument, NULL, CLI_OPT_BASEDIR }
#define CLI_OPTION_HELP { "help", no_argument, NULL, CLI_OPT_HELP }
#define CLI_OPTION_JSON { "json", no_argument, NULL, CLI_OPT_JSON }
#define CLI_OPTION_REPO { "repo", required_argument, NULL, CLI_OPT_REPO }

struct cli_mirrors;
struct cli_build;
struct cfs_registry_ref;

/**
 * cli_find_creds() - the credentials for @ref (creds.c): @creds
 * (USER[:PASSWORD], the password asked for when missing), else the auth
 * file @authfile, else the first of $REGISTRY_AUTH_FILE, or
 * $XDG_RUNTIME_DIR/containers/auth.json then ~/.docker/config.json, with
 * an entry for the registry
 *
 * Return: 0 (*@user NULL for none), or -errno after a message. Free both
 * with cli_forget().
 */
int cli_find_creds(const char *creds, const char *authfile, const struct cfs_registry_ref *ref,
		   char **user, char **password);

/** cli_forget() - wipe and free @secret (NULL is fine) */
void cli_forget(char *secret);

/**
 * struct cli_var - an option that only sets a variable: *@flag to true,
 * or *@str to the option's value
 */
struct cli_var {
	int opt;
	bool *flag;
	const char **str;
};

/**
 * struct cli_parse - how a verb's options are read
 * @verb: for the messages
 * @help: the verb's usage text, printed by --help (cmd_VERB_usage)
 * @shortopts, @longopts: for getopt_long()
 * @quiet: getopt_long() says nothing of a bad option: @unknown names it
 * @unknown: the usage message for an option no one takes; "%s", if it has
 *	     one, is the command-line word
 * @vars: the options that only set a variable, up to one with @opt 0
 * @basedirs: where each --basedir adds its directories (cli_basedirs()),
 *	      or NULL when the verb takes it otherwise
 * @repo: where --repo keeps its value (once, non-empty), or NULL
 * @mirrors: for the download options (cli_mirrors_option()), or NULL
 * @take: the verb's other options, with @arg the value, or for one
 *	  getopt_long() refused the command-line word: EXIT_OK, an exit
 *	  status, or -1 for one it does not know (@unknown then)
 * @ctx: for @take
 */
struct cli_parse {
	const char *verb;
	const char *help;
	const char *shortopts;
	const struct option *longopts;
	const struct cli_var *vars;
	struct cfs_basedirs *basedirs;
	const char **repo;
	struct cli_mirrors *mirrors;
	int (*take)(void *ctx, int opt, const char *arg);
	void *ctx;
};

/**
 * cli_parse() - take the options of @argv as @p says (options.c)
 *
 * --help prints the verb's usage.
 * Return: -1 when all are taken, optind at the first argument; else the
 * exit status to end with (after --help, or a refused option).
 */
int cli_parse(const struct cli_parse *p, int argc, char **argv);

#define CLI_MAX_MIRRORS 64 /* --url values */
#define CLI_MAX_JOBS 256

/**
 * struct cli_mirrors - the download options of fetch and lazy (mirrors.c)
 * @urls: the mirrors, in the order given, pointing into @buf
 * @jobs: --jobs, @retries: --retries, @timeout: --timeout (seconds)
 * @cacert: --cacert, or NULL
 * @authfile: --authfile, or NULL
 * @logins: per URL, its credentials from @authfile (cli_mirrors_logins())
 */
struct cli_mirrors {
	const char *urls[CLI_MAX_MIRRORS];
	size_t n_urls;
	char *buf[CLI_MAX_MIRRORS]; /* the --url values, split in place */
	size_t n_buf;
	unsigned int jobs, retries, timeout;
	const char *cacert;
	const char *authfile;
	struct cfs_fetch_login logins[CLI_MAX_MIRRORS];
};

/** cli_mirrors_init() - the defaults of cfs/fetch.h */
void cli_mirrors_init(struct cli_mirrors *m);
/**
 * cli_hide_userinfo() - overwrite with '*' the USER:PASSWORD of each URL
 * in the comma-separated list @arg (an argv string, already copied), so
 * that ps shows no password
 */
void cli_hide_userinfo(char *arg);

/**
 * cli_mirrors_option() - take getopt's @opt ('u', 'j', 'r', 't', 'C' or 'A')
 *
 * A --url value's userinfo (USER:PASSWORD@) is overwritten in @arg, which
 * is the process's argv, once it is copied: ps shows no password.
 *
 * Return: -1 when @opt is none of these; else EXIT_OK, or EXIT_USAGE
 * after saying why @arg is refused.
 */
int cli_mirrors_option(struct cli_mirrors *m, const char *verb, int opt, const char *arg);
/** cli_mirrors_check_urls() - at least one URL, each http, https or file: EXIT_OK or EXIT_USAGE */
int cli_mirrors_check_urls(const struct cli_mirrors *m, const char *verb);
/**
 * cli_mirrors_logins() - each http(s) URL's credentials from --authfile
 *
 * An entry of the containers-auth.json(5) file keyed HOST[:PORT], or
 * HOST[:PORT]/PATH for the URLs below PATH, gives a mirror's user and
 * password. Return: EXIT_OK, or EXIT_FAIL after saying why the file
 * cannot be read.
 */
int cli_mirrors_logins(struct cli_mirrors *m, const char *verb);
/** cli_mirrors_check_cacert() - --cacert, if given, readable: EXIT_OK or EXIT_FAIL */
int cli_mirrors_check_cacert(const struct cli_mirrors *m, const char *verb);
void cli_mirrors_free(struct cli_mirrors *m);

/* Their entries: the mirrors, and the download options pull takes too. */
#define CLI_MIRRORS_LONG_OPTIONS                                                        \
	{ "url", required_argument, NULL, 'u' },                                        \
	{ "jobs", required_argument, NULL, 'j' },                                       \
	{ "authfile", required_argument, NULL, 'A' },                                   \
	CLI_DOWNLOAD_LONG_OPTIONS
#define CLI_DOWNLOAD_LONG_OPTIONS                                                       \
	{ "retries", required_argument, NULL, 'r' },                                    \
	{ "timeout", required_argument, NULL, 't' },                                    \
	{ "cacert", required_argument, NULL, 'C' }

/**
 * struct cli_progress - a self-rewriting progress line on stderr
 *
 * Shown only when stderr is a terminal; all calls are cheap no-ops otherwise.
 */
struct cli_progress {
	bool enabled;
	const char *label;
	uint64_t total; /* items, or 0 when unknown */
	uint64_t total_bytes; /* 0 when bytes are not counted */
	struct timespec start;
	struct timespec last;
};

void cli_progress_start(struct cli_progress *p, const char *label, uint64_t total,
			uint64_t total_bytes);
/** cli_progress_update() - redraw at most ~10 times a second */
void cli_progress_update(struct cli_progress *p, uint64_t done, uint64_t done_bytes);
/** cli_progress_end() - erase the line */
void cli_progress_end(struct cli_progress *p);
/* A progress line is drawn and not yet ended: the signal handler ends it with a newline. */
extern volatile sig_atomic_t cli_progress_open;

/* The getopt values of the options that choose how an image is built (builder.c). */
enum {
	CLI_OPT_PLATFORM = 256,
	CLI_OPT_DIGEST_STORE,
	CLI_OPT_REQUIRE_VERITY,
	CLI_OPT_PRINT_DIGEST,
	CLI_OPT_USE_EPOCH,
	CLI_OPT_SKIP_XATTRS,
	CLI_OPT_SKIP_DEVICES,
	CLI_OPT_THREADS,
	CLI_OPT_FORMAT,
	CLI_OPT_MIN_VERSION,
	CLI_OPT_MAX_VERSION,
	CLI_OPT_USER_XATTRS,
	CLI_OPT_MAX_SIZE,
	CLI_OPT_RESERVE,
	CLI_OPT_MAX_ENTRIES,
	CLI_OPT_BUILD_END, /* a verb's own options from here on */
};

/* Their entries in a verb's struct option table. */
#define CLI_BUILD_LONG_OPTIONS                                                          \
	{ "platform", required_argument, NULL, CLI_OPT_PLATFORM },                      \
	{ "digest-store", required_argument, NULL, CLI_OPT_DIGEST_STORE },              \
	{ "require-verity", no_argument, NULL, CLI_OPT_REQUIRE_VERITY },                \
	{ "print-digest", no_argument, NULL, CLI_OPT_PRINT_DIGEST },                    \
	{ "use-epoch", no_argument, NULL, CLI_OPT_USE_EPOCH },                          \
	{ "skip-xattrs", no_argument, NULL, CLI_OPT_SKIP_XATTRS },                      \
	{ "skip-devices", no_argument, NULL, CLI_OPT_SKIP_DEVICES },                    \
	{ "threads", required_argument, NULL, CLI_OPT_THREADS },                        \
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },                          \
	{ "min-version", required_argument, NULL, CLI_OPT_MIN_VERSION },                \
	{ "max-version", required_argument, NULL, CLI_OPT_MAX_VERSION },                \
	{ "user-xattrs", no_argument, NULL, CLI_OPT_USER_XATTRS },                      \
	{ "max-size", required_argument, NULL, CLI_OPT_MAX_SIZE },                      \
	{ "reserve", required_argument, NULL, CLI_OPT_RESERVE },                        \
	{ "max-entries", required_argument, NULL, CLI_OPT_MAX_ENTRIES },                \
	CLI_OPTION_REPO

/* Their help, in build's and pull's usage text. */
#define BUILD_OPTIONS_HELP \
	  "  --platform=OS/ARCH[/VARIANT]\n" \
	  "                      the platform to choose from an image index\n" \
	  "                      (default: this machine's, e.g. linux/amd64)\n" \
	  "  --digest-store=DIR  copy (or reflink) each file's content into DIR as\n" \
	  "                      DIR/xx/<62 hex>, named by its fs-verity digest;\n" \
	  "                      objects already there are kept; fs-verity is\n" \
	  "                      enabled on new objects where the filesystem can;\n" \
	  "                      with --format=erofs, files of up to 64 bytes are\n" \
	  "                      in the image and get no object\n" \
	  "  --repo=DIR          store the image in the repository DIR (made if\n" \
	  "                      missing; see cfsctl images) and point the name\n" \
	  "                      IMAGE at it: the objects go to DIR/objects, the\n" \
	  "                      image to DIR/images/<its fs-verity digest>, and\n" \
	  "                      DIR/images/refs/IMAGE is replaced atomically by a\n" \
	  "                      symlink to it once it is complete. IMAGE is then a\n" \
	  "                      name: components of letters, digits and\n" \
	  "                      ._-+@:=,~ separated by '/'. The repository's lock\n" \
	  "                      is held shared until the name is set, so a gc\n" \
	  "                      never removes what the build is about to name\n" \
	  "  --require-verity    fail when fs-verity cannot be enabled on an object\n" \
	  "                      (or, with --repo, on the image; needs\n" \
	  "                      --digest-store or --repo)\n" \
	  "  --print-digest      print the fs-verity digest of the written image\n" \
	  "  --use-epoch         record every mtime as 0\n" \
	  "  --skip-xattrs       record no extended attributes\n" \
	  "  --skip-devices      leave out character and block devices\n" \
	  "  --threads=N         hash files with N threads (default: all CPUs;\n" \
	  "                      a tar archive or container image is hashed as\n" \
	  "                      it is read, in one)\n" \
	  "  --format=v1|erofs   v1: the composefs descriptor (default); erofs: a\n" \
	  "                      composefs 1.0 image (EROFS with overlayfs xattrs),\n" \
	  "                      byte for byte as mkcomposefs 1.0.8 writes it;\n" \
	  "                      files of at most 64 bytes are stored inside it\n" \
	  "  --min-version=N     erofs: composefs version to write at least (0)\n" \
	  "  --max-version=N     erofs: version it may be raised to when the tree\n" \
	  "                      has whiteouts (1)\n" \
	  "  --user-xattrs       erofs: keep only user.* extended attributes\n" \
	  "  --max-size=SIZE     refuse an input whose files add up to more than\n" \
	  "                      SIZE bytes, holes of sparse files included (K, M,\n" \
	  "                      G, T: powers of 1024; 0: no limit; default 256G)\n" \
	  "  --reserve=SIZE      never fill the digest store's filesystem beyond\n" \
	  "                      SIZE bytes free (default: 5% of it, at most 1G)\n" \
	  "  --max-entries=N     refuse an input whose tree would hold more than N\n" \
	  "                      entries (files, links, directories), or whose\n" \
	  "                      xattrs and symlink targets add up to more than\n" \
	  "                      256 bytes per entry allowed; a zstd:chunked TOC\n" \
	  "                      may list no more (0: no limit; an entry costs up\n" \
	  "                      to 1.3 KiB of memory; default 150000 for a tar\n" \
	  "                      archive or container image, 16777216 for a\n" \
	  "                      dumpfile or directory)\n"

/**
 * struct cli_build - what those options chose, and the progress of the build
 * @platform: with @have_platform, --platform
 * @writer_options: --min-version, --max-version or --user-xattrs was given
 * @repo_dir: --repo, or NULL; then IMAGE is a name in it (@name)
 * @repo: the repository, open from cli_build_start() on
 * @lock: its lock, held shared from cli_build_start() until the name is set
 * @digest: with --repo, the stored image's digest, once cli_build_write()
 *	succeeded
 */
struct cli_build {
	struct cfs_build_options o;
	const char *repo_dir, *name;
	struct cfs_repo *repo;
	int lock;
	uint8_t digest[CFS_DIGEST_SIZE];
	struct cfs_write_options wo;
	struct cfs_oci_platform platform;
	bool have_platform, print_digest, writer_options;
	bool max_entries_given; /* else a dump or directory has its own default */
	struct cli_progress progress;
	/*
	 * check: unless NULL, called with the finished tree before the image is
	 * written or anything published; nonzero (-errno, after saying why)
	 * fails the build, which then leaves nothing
	 */
	int (*check)(void *ctx, struct cfs_node *root);
	void *check_ctx;
	const char *origin; /* with --repo: recorded for the name (cfs_repo_set_origin()) */
	bool store_seal; /* with --repo: store the sealed form too (cfs_image_target) */
	const char *seal; /* with store_seal: the digest it must have, or NULL (cfs_image_target) */
};

void cli_build_init(struct cli_build *b);
/** cli_build_check() - the options' combination: EXIT_OK or EXIT_USAGE */
int cli_build_check(struct cli_build *b, const char *verb);
/**
 * cli_build_start() - library messages to stderr, and the progress line;
 * with --repo, the repository opened (made if missing) and its lock taken
 * shared: EXIT_OK, or EXIT_FAIL after saying why
 */
int cli_build_start(struct cli_build *b, const char *verb);
/** cli_build_end() - release the repository and its lock (after a failure: cli_build_write() does) */
void cli_build_end(struct cli_build *b);
/** cli_build_fail() - EXIT_FAIL, after naming @what @path failed unless the library said why */
int cli_build_fail(const char *what, const char *path, int r);
/** cli_build_said() - a message was printed (cli_error()): cli_build_fail() adds none */
void cli_build_said(void);
/**
 * cli_build_write() - finish @root (freed), write it to @image through a
 * temporary file (with --repo: store it in the repository and point the
 * name @image at it), print its digest if asked: an exit status
 */
int cli_build_write(struct cli_build *b, struct cfs_node *root, const char *source,
		    const char *image);

/**
 * cli_build_parse() - the command line of a verb that builds an image: the
 * options as @p says, with the build options in @b (made ready here) taken
 * before @p->take sees an option, then what the image is built from (@what
 * names it, "SOURCE") into *@source, and IMAGE
 *
 * Return: -1 to go on, or the exit status to end with.
 */
int cli_build_parse(struct cli_build *b, const struct cli_parse *p, const char *what, int argc,
		    char **argv, const char **source, const char **image);

/**
 * cli_json_bytes() - @len bytes as a JSON string, or as an array of byte
 * values when they are not valid UTF-8 (NULL when out of memory)
 */
json_t *cli_json_bytes(const void *buf, size_t len);

/** cli_json_text() - cli_json_bytes() of a C string; null for NULL */
json_t *cli_json_text(const char *s);

/**
 * cli_json_set() - set the member @key of @obj to @v, taking @v; a NULL @v
 * or a failure makes the next cli_json_print() fail (out of memory)
 */
void cli_json_set(json_t *obj, const char *key, json_t *v);

/** cli_json_push() - append @v to the array @arr, as cli_json_set() does */
void cli_json_push(json_t *arr, json_t *v);

/**
 * enum cli_json_style - how cli_json_print() lays a document out
 * @CLI_JSON_LINE: one line, with ", " and ": " between members
 * @CLI_JSON_COMPACT: one line, no spaces
 * @CLI_JSON_LINES: the document's members one a line, an array of objects
 *	in it one object a line, the rest as CLI_JSON_LINE
 */
enum cli_json_style { CLI_JSON_LINE, CLI_JSON_COMPACT, CLI_JSON_LINES };

/**
 * cli_json_print() - print @doc and a newline to stdout, and free it
 *
 * Return: 0, or -ENOMEM when a value of @doc could not be made (@doc NULL,
 * or a failed cli_json_set()) or printed; write errors are
 * cli_close_stdout()'s to find.
 */
int cli_json_print(json_t *doc, enum cli_json_style style);

/** cli_json_fprint() - cli_json_print() to @out */
int cli_json_fprint(FILE *out, json_t *doc, enum cli_json_style style);


/* ---- repositories (repo-option.c) ---- */

struct cfs_repo;

/**
 * cli_repo_open() - open the repository @dir for @verb; with @create, make
 * it if missing
 *
 * Return: EXIT_OK, or EXIT_FAIL after saying why.
 */
int cli_repo_open(const char *verb, const char *dir, bool create, struct cfs_repo **repo);

/**
 * cli_repo_image() - the image file that @what, a NAME or a digest, names
 * in the repository @dir
 * @path: out: its path (free())
 * @basedir: out, or NULL: the basedir list of the repository's objects,
 *	escaped for cfs_basedirs_parse() (free())
 * @digest: out, or NULL: the image's fs-verity digest
 *
 * Return: EXIT_OK, or EXIT_FAIL after saying why.
 */
int cli_repo_image(const char *verb, const char *dir, const char *what, char **path,
		   char **basedir, uint8_t *digest);

/** cli_repo_basedir() - @dir escaped as a one-directory basedir list, or NULL (ENOMEM) */
char *cli_repo_basedir(const char *dir);

/** cli_mode_string() - ls-style "-rwxr-xr-x" (with s/S/t/T) and a NUL */
void cli_mode_string(uint32_t mode, char s[11]);

#endif /* CFSCTL_H */
