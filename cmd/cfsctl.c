// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl: one binary for every composefs task. This file holds the command
 * table that dispatches the verbs and drives --help, and the helpers in
 * cfsctl.h that all verbs share.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfsctl.h"
#include "cfs/store.h"
#include "cfs/util.h"

#ifndef CFS_VERSION_STRING
#define CFS_VERSION_STRING "unknown"
#endif

/* The options build and pull share (cli_build_option()). */
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
	  "  --require-verity    fail when fs-verity cannot be enabled on an object\n" \
	  "                      (needs --digest-store)\n" \
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
	  "  --user-xattrs       erofs: keep only user.* extended attributes\n"

static const struct cfs_command commands[] = {
	{ "build", cmd_build,
	  "build an image from a directory, a dumpfile, a tar archive or a container image",
	  "Usage: cfsctl build [OPTIONS] SOURCE IMAGE\n"
	  "\n"
	  "Build the composefs image IMAGE from the directory SOURCE (or, with\n"
	  "--from-dump, from the dumpfile SOURCE; with --from-tar, from the tar\n"
	  "archive SOURCE; with --from-oci, from the container image SOURCE).\n"
	  "Symlinks are recorded, never followed. Each regular file is recorded\n"
	  "with its fs-verity sha256 digest and its backing path \"xx/<62 hex>\"\n"
	  "in a digest store; the same input always gives a byte-identical\n"
	  "image. IMAGE is written to a temporary file and renamed\n"
	  "into place: on any error nothing is left at IMAGE.\n"
	  "\n"
	  "Options:\n"
	  "  --from-dump         SOURCE is a composefs-dump(5) file, '-' for stdin\n"
	  "  --from-tar          SOURCE is a tar archive (ustar, pax, GNU; plain or\n"
	  "                      compressed, the compression found from the data),\n"
	  "                      '-' for stdin; read once, never unpacked. Entries\n"
	  "                      keep the uid, gid, mode, mtime, xattrs and ACLs\n"
	  "                      the archive records; a later entry for a path\n"
	  "                      replaces an earlier one; directories only implied\n"
	  "                      by a path are 0755, 0:0, mtime 0; '..' is refused\n"
	  "  --from-oci          SOURCE is a container image: oci:DIR[:TAG] (an OCI\n"
	  "                      image layout directory), oci-archive:FILE[:TAG]\n"
	  "                      (a tar of one) or docker-archive:FILE[:TAG]. The\n"
	  "                      OCI layout's manifest tagged TAG (without\n"
	  "                      TAG: the only one, or 'latest'), from an image\n"
	  "                      index the one for --platform; its gzip, zstd or\n"
	  "                      plain layers are read once each, never unpacked,\n"
	  "                      and applied in order as --from-tar does, with the\n"
	  "                      OCI whiteouts (.wh.NAME, .wh..wh..opq), which never\n"
	  "                      appear in the image. Every blob must have the size\n"
	  "                      and sha256 digest its descriptor names, and each\n"
	  "                      layer uncompressed the sha256 of its diff_id in\n"
	  "                      the config. docker-archive:FILE[:TAG] is what\n"
	  "                      docker save and podman save write: the image\n"
	  "                      whose RepoTags in manifest.json hold TAG (e.g.\n"
	  "                      debian:12), without TAG the only one; its plain,\n"
	  "                      gzip or zstd layers are checked by their diff_ids\n"
	  "                      alone, as it has no descriptors\n"
	  BUILD_OPTIONS_HELP
	  "  --lax-dump          read the dumpfile as mkcomposefs does when not\n"
	  "                      strict: missing trailing fields are '-', MODE\n"
	  "                      bits beyond 0177777 are dropped\n"
	  "  -h, --help          show this help\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n" },
	{ "pull", cmd_pull, "build an image from a container image in a registry",
	  "Usage: cfsctl pull [OPTIONS] REFERENCE IMAGE\n"
	  "\n"
	  "Build the composefs image IMAGE from the container image REFERENCE,\n"
	  "REGISTRY[:PORT]/REPO[:TAG|@sha256:DIGEST] (TAG 'latest' when neither is\n"
	  "given), fetched from the registry over the OCI distribution API: by\n"
	  "https, or by http with --plain-http. The manifest (OCI or Docker v2;\n"
	  "from an image index or manifest list, the one for --platform) names a\n"
	  "config and layers, each fetched by its digest and checked against its\n"
	  "size and sha256 digest as it streams; with @sha256:DIGEST the manifest\n"
	  "itself must hash to DIGEST; each layer uncompressed must hash to its\n"
	  "diff_id in the config. The gzip, zstd or plain layers stream from the\n"
	  "network into the tree and the digest store, never written out whole, and\n"
	  "are applied as build --from-oci applies them: IMAGE is the image build\n"
	  "--from-oci makes of the same container image in a layout. A registry\n"
	  "that answers 401 with a bearer challenge is asked for an anonymous token\n"
	  "at the challenge's realm. IMAGE is written to a temporary file and\n"
	  "renamed into place: on any error (registry unreachable, HTTP 401, 403 or\n"
	  "404, a digest or diff_id mismatch, an unsupported media type, a\n"
	  "truncated blob) nothing is left at IMAGE, and no new object in the\n"
	  "digest store.\n"
	  "\n"
	  "Options:\n"
	  "  --plain-http        talk http:// to the registry, and accept an http://\n"
	  "                      token realm (default: https:// only)\n"
	  "  --retries=N         make a request again up to N times after a\n"
	  "                      transient error: reset, timeout, HTTP 5xx/408/429,\n"
	  "                      short body (default 3), with exponential backoff; a\n"
	  "                      blob resumes at the byte it reached\n"
	  "  --timeout=SECONDS   give up on a connection attempt, or a transfer that\n"
	  "                      receives nothing, after SECONDS (default 30)\n"
	  "  --cacert=FILE       trust the CA certificates in FILE (PEM) for https\n"
	  "                      instead of the system CA store\n"
	  "  --layers-cache=DIR  keep each layer applied in DIR (made if missing),\n"
	  "                      as a tar of its entries with the digests and sizes\n"
	  "                      of files over 64 bytes instead of their content,\n"
	  "                      named sha256-<hex>-<hex> by the layer's digest\n"
	  "                      and diff_id; a layer found there is applied from\n"
	  "                      it, neither fetched nor hashed, unless\n"
	  "                      --digest-store lacks an object it names (cfsctl\n"
	  "                      gc does not know the cache: such a layer is\n"
	  "                      fetched again). DIR may be removed at any time;\n"
	  "                      it is trusted as the store is\n"
	  BUILD_OPTIONS_HELP
	  "  -h, --help          show this help\n"
	  "\n"
	  "A progress line of the layers' bytes is drawn on stderr when it is a\n"
	  "terminal.\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n" },
	{ "inspect", cmd_inspect, "show what an image holds",
	  "Usage: cfsctl inspect [--json] IMAGE\n"
	  "       cfsctl inspect --karg IMAGE\n"
	  "       cfsctl inspect ls [--json] IMAGE [PATH]\n"
	  "       cfsctl inspect stat [--json] IMAGE PATH\n"
	  "       cfsctl inspect dump [--as-mounted] IMAGE\n"
	  "       cfsctl inspect objects IMAGE\n"
	  "       cfsctl inspect missing --basedir DIR[:DIR...] IMAGE\n"
	  "\n"
	  "Show what a composefs image holds, without mounting it.\n"
	  "\n"
	  "  (no verb)  summary: format and version, inodes by type, directories and\n"
	  "             entries, hardlinks, xattr sets and how many inodes share each,\n"
	  "             objects (distinct backing files) and their bytes, content\n"
	  "             bytes, image size and the image's fs-verity digest; in JSON,\n"
	  "             \"format\" is \"composefs-v1\" or \"erofs\" (composefs 1.0) and\n"
	  "             \"version\" the format version or the composefs_version\n"
	  "  ls         list the directory PATH (default /) like ls -l; a PATH that\n"
	  "             is not a directory lists just that entry\n"
	  "  stat       everything the image records about the inode at PATH\n"
	  "  dump       the image as a composefs-dump(5) file; building that dump\n"
	  "             gives the same image, with cfsctl or with mkcomposefs, and\n"
	  "             for an image mkcomposefs made it is what composefs-info\n"
	  "             dump prints: a file whose content is in the image has no\n"
	  "             DIGEST (one would ask for a trusted.overlay.metacopy xattr),\n"
	  "             and the root shows the overlay.opaque xattrs composefs sets\n"
	  "  objects    the backing paths of all regular files, sorted, unique\n"
	  "  missing    the backing paths no base directory provides (the first\n"
	  "             holding a path decides; it must be a regular file of the\n"
	  "             recorded size); exits 0 whether or not any are missing\n"
	  "             (no output: nothing is missing)\n"
	  "\n"
	  "Options:\n"
	  "  --json           JSON output (summary, ls, stat); a string that is not\n"
	  "                   valid UTF-8 is written as an array of its byte values\n"
	  "  --karg           print only the kernel parameter that boots the image\n"
	  "                   as the root filesystem: composefs=<its fs-verity\n"
	  "                   digest> (docs/boot.md)\n"
	  "  --as-mounted     dump: the tree as a mount shows it instead, as ls,\n"
	  "                   stat, diff and tui do: the digest of each content in\n"
	  "                   the image, without the xattrs composefs sets for its\n"
	  "                   whiteouts; it may not build the same image\n"
	  "  --basedir=DIRS   colon-separated directories that hold the objects\n"
	  "                   ('\\:' for a colon in a name, '\\\\' for a backslash)\n"
	  "  --help           show this help\n"
	  "\n"
	  "Names, targets and paths in text output are escaped as in dumpfiles\n"
	  "(\\xXY for spaces, control and non-ASCII bytes). A corrupt image is an\n"
	  "error naming what is wrong and at which offset (exit 1).\n" },
	{ "fetch", cmd_fetch, "download the objects images need from HTTP mirrors",
	  "Usage: cfsctl fetch [OPTIONS] --basedir DIR[:DIR...] --url URL[,URL...] IMAGE...\n"
	  "\n"
	  "Bring every object that the IMAGEs reference and the basedirs lack from\n"
	  "mirrors that serve a digest store's layout: URL/xx/<62 hex digits>. Each\n"
	  "object is accepted only when its size and fs-verity digest match the\n"
	  "image; it is written to a temporary file in DIR, fsynced and linked into\n"
	  "place (fs-verity is enabled where the filesystem supports it), so a\n"
	  "failed or interrupted fetch never leaves a partial object. Running the\n"
	  "command again continues where it stopped.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir DIR[:DIR...]  the store to fill (created if missing), then\n"
	  "                     more basedirs to look in, as in the kernel's basedir=\n"
	  "                     option (may be repeated): an object found in any of\n"
	  "                     them counts as present, new ones go into the first;\n"
	  "                     '\\:' for a colon in a name, '\\\\' for a backslash\n"
	  "  --url URL[,URL...] mirrors (http://, https://, file://), tried in order;\n"
	  "                     may be repeated\n"
	  "  -j, --jobs N       transfers in flight at once (default 16, at most 256)\n"
	  "  --retries N        retries per mirror after a transient error: reset,\n"
	  "                     timeout, HTTP 5xx/408/429, short body (default 3),\n"
	  "                     with exponential backoff; then the next mirror\n"
	  "  --timeout SECONDS  give up on a connection attempt, or a transfer that\n"
	  "                     receives nothing, after SECONDS (default 30)\n"
	  "  --cacert FILE      trust the CA certificates in FILE (PEM) for https\n"
	  "                     mirrors instead of the system CA store\n"
	  "  --json             print a summary as JSON on stdout: objects, fetched,\n"
	  "                     already_present, failed (still missing), unavailable\n"
	  "                     (not found on any mirror), bytes, retries, rejected\n"
	  "                     (content that did not verify), verity_enabled,\n"
	  "                     seconds, and missing: [{path, reason}]\n"
	  "  -h, --help         show this help\n"
	  "\n"
	  "A progress line is drawn on stderr when it is a terminal. Every object\n"
	  "still missing at the end is listed on stderr with the reason.\n"
	  "Exit status: 0 when every object the images need is present at the end,\n"
	  "1 otherwise, 2 for a usage error.\n" },
	{ "gc", cmd_gc, "remove the objects no image needs from a digest store",
	  "Usage: cfsctl gc --basedir DIR [--dry-run] [--json] IMAGE...\n"
	  "       cfsctl gc --basedir DIR [--dry-run] [--json] --images-from FILE\n"
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
	  "first. Anything in DIR that is not an object, a temporary or an xx\n"
	  "directory (other names, symlinks, other directories, temporaries of\n"
	  "running processes) is reported on stderr and left alone. Symlinks are\n"
	  "never followed.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir DIR        the digest store to clean\n"
	  "  --images-from FILE   read the image paths from FILE, one per line\n"
	  "                       ('-': standard input), instead of the arguments\n"
	  "  -n, --dry-run        remove nothing; report what would be removed\n"
	  "  --json               one JSON document on stdout: store, dry_run,\n"
	  "                       images, referenced, kept, kept_bytes, missing,\n"
	  "                       removed_objects, removed_temporaries, bytes_freed,\n"
	  "                       left_alone, failed, removed: [{path, kind,\n"
	  "                       bytes}] and not_objects: [{path, reason}]\n"
	  "  -h, --help           show this help\n"
	  "\n"
	  "Output: a line \"removed object xx/... (N bytes)\" or \"removed\n"
	  "temporary NAME (N bytes)\" (\"would remove\" with --dry-run) per entry,\n"
	  "in sorted order, then a summary: objects kept and their bytes, objects\n"
	  "and temporaries removed and the bytes freed (file sizes), entries left\n"
	  "alone, and objects the images reference that the store lacks.\n"
	  "\n"
	  "Exit status: 0 success, 1 failure (an image that does not read, a\n"
	  "removal that failed), 2 usage error.\n" },
	{ "lazy", cmd_lazy, "serve a digest store that fetches each missing object on first lookup",
	  "Usage: cfsctl lazy [OPTIONS] --store DIR --url URL[,URL...] MOUNTPOINT\n"
	  "\n"
	  "Mount on MOUNTPOINT a FUSE filesystem that looks like a digest store\n"
	  "(xx/<62 hex digits>) and fills the local store DIR. Looking up an object\n"
	  "that DIR lacks downloads it from the mirrors, verifies its fs-verity\n"
	  "digest against its name, links it into DIR (fs-verity enabled where the\n"
	  "filesystem supports it) and only then answers. Used as a later basedir\n"
	  "of a composefs mount (basedir=DIR:MOUNTPOINT), it makes an image usable\n"
	  "at once over an empty store: the module opens each object from DIR once\n"
	  "it is there. Lookups of one object share one download; different objects\n"
	  "download in parallel. A lookup fails with ENOENT when no mirror has the\n"
	  "object, EIO when what a mirror sent does not verify, ETIMEDOUT when the\n"
	  "fetch takes longer than --timeout; the reason goes to stderr and nothing\n"
	  "partial is left in DIR. Directories list only what DIR holds. Reading a\n"
	  "file of MOUNTPOINT reads DIR's file.\n"
	  "\n"
	  "It runs in the foreground until MOUNTPOINT is unmounted or it receives\n"
	  "SIGINT, SIGTERM or SIGHUP, then unmounts MOUNTPOINT and exits.\n"
	  "\n"
	  "Options:\n"
	  "  --store DIR        the local digest store to fill (created if missing)\n"
	  "  --url URL[,URL...] mirrors serving a digest store (http://, https://,\n"
	  "                     file://), tried in order; may be repeated\n"
	  "  -j, --jobs N       downloads in flight at once (default 16, at most 256)\n"
	  "  --retries N        retries per mirror after a transient error (default 3),\n"
	  "                     with exponential backoff; then the next mirror\n"
	  "  --timeout SECONDS  the longest a lookup waits for its object, and the\n"
	  "                     longest a connection attempt or a stalled transfer\n"
	  "                     may take (default 30)\n"
	  "  --cacert FILE      trust the CA certificates in FILE (PEM) for https\n"
	  "                     mirrors instead of the system CA store\n"
	  "  --stats FILE       keep FILE up to date with the counts as JSON (replaced\n"
	  "                     after each fetch, with every latency at exit)\n"
	  "  --json             print the counts as JSON on stdout at exit: lookups,\n"
	  "                     local (answered by DIR), fetched, bytes, present,\n"
	  "                     unavailable, failed, timeouts, coalesced (lookups\n"
	  "                     that joined a download in flight), retries, rejected,\n"
	  "                     in_flight, first_open_ms {count, mean, max} and\n"
	  "                     first_open_ms_each (first lookup to answer, per\n"
	  "                     fetched object)\n"
	  "  -h, --help         show this help\n"
	  "\n"
	  "Exit status: 0 after a clean unmount, 1 failure, 2 usage error.\n" },
	{ "mount", cmd_mount, "mount an image (v1: the composefs module; EROFS: overlayfs)",
	  "Usage: cfsctl mount [OPTIONS] IMAGE MOUNTPOINT\n"
	  "\n"
	  "Mount IMAGE on MOUNTPOINT, read-only unless --upperdir. A v1 image goes to the composefs\n"
	  "kernel module (mount -t composefs); an EROFS image (composefs 1.0) is\n"
	  "mounted as erofs on a private directory with overlayfs on top\n"
	  "(metacopy=on,redirect_dir=on, the basedirs as data-only layers), the\n"
	  "erofs mount then detached. File contents come from the backing files\n"
	  "the image names, looked up beneath each basedir in turn.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir=DIR[:DIR...]  directories holding the backing files, tried\n"
	  "                          in order ('\\:' for a colon in a name, '\\\\'\n"
	  "                          for a backslash; no name may be empty)\n"
	  "  --digest=auto|HEX       the fs-verity digest the image must have;\n"
	  "                          'auto' measures IMAGE (fs-verity must be\n"
	  "                          enabled on it). Implies --verity-check=2\n"
	  "                          unless given\n"
	  "  --verity-check=0|1|2    0: never check backing files; 1: check those\n"
	  "                          the image records a digest for; 2: also refuse\n"
	  "                          files without a recorded digest. Default 1\n"
	  "                          (2 with --digest); mount -t composefs without\n"
	  "                          verity_check= means 0 (2 with digest=).\n"
	  "                          v1 images only\n"
	  "  --upperdir=DIR          EROFS images: a writable overlayfs upper layer\n"
	  "  --workdir=DIR           its overlayfs work directory (with --upperdir)\n"
	  "  --lazy-url=URL[,URL...] v1 images: start 'cfsctl lazy --store DIR --url\n"
	  "                          URL' in the background, DIR the first --basedir,\n"
	  "                          on a new directory under /run/cfs-lazy, and add\n"
	  "                          it as the last basedir: each object the store\n"
	  "                          lacks is fetched when first opened. It keeps\n"
	  "                          running after the image is unmounted; umount\n"
	  "                          its directory (type fuse.cfs-lazy) to stop it\n"
	  "  --idmap=USERNS          make the mount idmapped with the mapping of\n"
	  "                          the user namespace file USERNS (such as\n"
	  "                          /proc/PID/ns/user): an owner N in the image\n"
	  "                          shows, and is checked, as the id that the\n"
	  "                          namespace's uid_map or gid_map maps N to\n"
	  "  -h, --help              show this help\n"
	  "\n"
	  "For an EROFS image --digest is checked before mounting and adds\n"
	  "verity=require: every backing file must have fs-verity with the digest\n"
	  "the image records (a wrong one reads as EIO). A refusal names the layer\n"
	  "(erofs or overlayfs) and quotes the last kernel log line if /dev/kmsg\n"
	  "is readable.\n"
	  "\n"
	  "Needs CAP_SYS_ADMIN. Details of a refused mount are in the kernel log.\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n" },
	{ "verify", cmd_verify, "check an image, and the objects it needs, thoroughly",
	  "Usage: cfsctl verify [OPTIONS] IMAGE\n"
	  "\n"
	  "Check every structural rule of the image format on every reachable inode,\n"
	  "more strictly than mounting needs: directories sorted and without\n"
	  "duplicate names, chunks and xattr sets within bounds and within one 4 KiB\n"
	  "page, names valid, entry types matching their inodes, no directory\n"
	  "cycles or directory hardlinks. Unreachable bytes of the inode section,\n"
	  "link counts that do not match and encodings a correct writer would not\n"
	  "produce are warnings. With --basedir, also check that each backing file\n"
	  "the image references is found (the first base directory holding it\n"
	  "wins, as in the kernel), is a regular file of the recorded size and has\n"
	  "the recorded fs-verity digest: measured by the kernel where fs-verity is\n"
	  "enabled on the file, computed from its content otherwise. Each object is\n"
	  "hashed once, however many paths use it. Nothing is ever written.\n"
	  "\n"
	  "A composefs 1.0 (EROFS) image is checked as strictly: the superblock and\n"
	  "each inode, xattr (inline and shared) and directory block within bounds,\n"
	  "names valid, directories sorted, without duplicates or cycles, \".\" and\n"
	  "\"..\" naming the right inodes, entry types matching, each\n"
	  "trusted.overlay.redirect the object path of the digest in its\n"
	  "trusted.overlay.metacopy, and no other overlay xattr overlayfs would act\n"
	  "on; offsets are file offsets.\n"
	  "\n"
	  "Options:\n"
	  "  --basedir=DIR[:DIR...]  directories holding the backing files (may be\n"
	  "                          given more than once; searched in order;\n"
	  "                          '\\:' for a colon in a name, '\\\\' for a\n"
	  "                          backslash)\n"
	  "  --digest=HEX            the image's own fs-verity digest must be HEX\n"
	  "                          (measured where fs-verity is enabled on it,\n"
	  "                          computed otherwise)\n"
	  "  --require-verity        an object without fs-verity whose digest the\n"
	  "                          image records is an error, not a warning\n"
	  "  --jobs=N                hash objects with N threads (default: all CPUs)\n"
	  "  --json                  the same report as a JSON document\n"
	  "  -h, --help              show this help\n"
	  "\n"
	  "Output: one line per problem, \"error: KIND: 'PATH' (offset N): what\" or\n"
	  "\"error: KIND: object 'xx/...' what; used by 'PATH', ...\", paths escaped as\n"
	  "in dumpfiles; then a summary. A progress line is drawn on stderr while\n"
	  "objects are hashed, when stderr is a terminal.\n"
	  "\n"
	  "Exit status: 0 everything checks (warnings allowed), 1 any error or a\n"
	  "failure to read, 2 usage error.\n" },
	{ "diff", cmd_diff, "show what differs between two images or trees",
	  "Usage: cfsctl diff [--stat] [--json] OLD NEW\n"
	  "\n"
	  "Compare two composefs images path by path. OLD or NEW (or both) may be a\n"
	  "directory: it is compared as the image cfsctl build would make of it\n"
	  "(built in memory, no object store; file contents are hashed), so an\n"
	  "image compared with the tree it was built from shows no difference.\n"
	  "Both trees are walked at once in their stored (sorted) order.\n"
	  "\n"
	  "Output: one line per path that differs, depth first, each directory's\n"
	  "entries in byte order, names escaped as in dumpfiles:\n"
	  "  + PATH       only in NEW (and everything below it)\n"
	  "  - PATH       only in OLD (and everything below it)\n"
	  "  M PATH WHAT  in both, different; WHAT lists each change as\n"
	  "               type=OLD->NEW (nothing else is compared then),\n"
	  "               content size=OLD->NEW digest=OLD->NEW (16 hex digits),\n"
	  "               mode=, owner=UID:GID->UID:GID, mtime=SEC.NSEC->SEC.NSEC,\n"
	  "               rdev=MAJOR,MINOR->..., target= (symlinks),\n"
	  "               hardlink=FIRST[NLINK]->FIRST[NLINK] or none (which paths\n"
	  "               share the inode: the first of them and their count),\n"
	  "               xattrs=+KEY,-KEY,~KEY (added, removed, value changed)\n"
	  "then a summary: paths added, removed and changed, and the backing\n"
	  "objects (by digest) in both, only in OLD and only in NEW, with the\n"
	  "bytes a machine holding OLD's objects must fetch to have NEW's.\n"
	  "Identical inputs print nothing.\n"
	  "\n"
	  "Options:\n"
	  "  --stat      the summary only\n"
	  "  --json      a JSON document: every change with both sides in full, and\n"
	  "              the counts (printed also when the inputs are identical)\n"
	  "  -h, --help  show this help\n"
	  "\n"
	  "Exit status: 0 identical, 1 different, 2 trouble (usage, unreadable or\n"
	  "corrupt input), as diff(1).\n" },
	{ "tui", cmd_tui, "browse an image in the terminal",
	  "Usage: cfsctl tui [--basedir DIR[:DIR...]] IMAGE\n"
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
	  "  --help           show this help\n"
	  "\n"
	  "Standard input and output must be a terminal. Colors are used where the\n"
	  "terminal has them, unless NO_COLOR is set. Exit status: 0 after q, 1 on\n"
	  "failure, 2 usage error; interrupted by a signal, it restores the terminal\n"
	  "and dies of that signal.\n" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cfs_command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

void cli_print_help(const char *verb, FILE *out)
{
	const struct cfs_command *c = find_command(verb);

	if (c)
		fputs(c->usage, out);
}

int cli_basedirs(const char *verb, struct cfs_basedirs *b, const char *arg)
{
	int ret = cfs_basedirs_parse(b, arg);

	if (ret == -EINVAL)
		return cli_usage(verb, "--basedir: empty directory name in '%s' (':' separates names, '\\:' is a colon in one)",
				 arg);
	if (ret < 0) {
		cli_error("%s: %s", verb, strerror(-ret));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_usage(const char *verb, const char *fmt, ...)
{
	va_list ap;

	fputs("cfsctl: ", stderr);
	if (verb)
		fprintf(stderr, "%s: ", verb);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (verb)
		fprintf(stderr, "\nTry 'cfsctl %s --help' for more information.\n", verb);
	else
		fputs("\nTry 'cfsctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cfsctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno ? errno : EIO));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

unsigned int cli_parse_count(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > 4096 || s[0] == '-')
		return 0;
	return (unsigned int)v;
}

static void print_message(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "cfsctl: %s\n", msg);
}

static void print_overview(FILE *out)
{
	fputs("Usage: cfsctl [--version] [--help] COMMAND [ARGS]\n\n"
	      "Build, inspect and use composefs images.\n\nCommands:\n",
	      out);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\nRun 'cfsctl COMMAND --help' for the options of a command.\n"
	      "Exit status: 0 success, 1 failure, 2 usage error.\n",
	      out);
}

int main(int argc, char **argv)
{
	const struct cfs_command *c;

	cfs_set_message_handler(print_message, NULL);

	if (argc < 2) {
		print_overview(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && find_command(argv[2])) {
			cli_print_help(argv[2], stdout);
			return cli_close_stdout();
		}
		print_overview(stdout);
		return cli_close_stdout();
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cfsctl %s\n", CFS_VERSION_STRING);
		return cli_close_stdout();
	}
	c = find_command(argv[1]);
	if (!c) {
		cli_error("'%s' is not a command; see 'cfsctl --help'", argv[1]);
		return EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
