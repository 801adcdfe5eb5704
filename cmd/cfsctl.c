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
	  "  --max-entries=N     refuse a tar archive or container image whose tree\n" \
	  "                      would hold more than N entries (files, links,\n" \
	  "                      directories), or whose xattrs and symlink targets\n" \
	  "                      add up to more than 256 bytes per entry allowed;\n" \
	  "                      a zstd:chunked TOC may list no more (0: no limit;\n" \
	  "                      default 150000: an entry costs up to 1.3 KiB\n" \
	  "                      of memory)\n"

static const struct cfs_command commands[] = {
	{ "build", cmd_build,
	  "build an image from a directory, dumpfile, tar archive, container image or ostree commit",
	  "Usage: cfsctl build [OPTIONS] SOURCE IMAGE\n"
	  "       cfsctl build [OPTIONS] --repo DIR SOURCE NAME\n"
	  "\n"
	  "Build the composefs image IMAGE from the directory SOURCE (or, with\n"
	  "--from-dump, from the dumpfile SOURCE; with --from-tar, from the tar\n"
	  "archive SOURCE; with --from-oci, from the container image SOURCE; with\n"
	  "--from-ostree, from the ostree commit SOURCE).\n"
	  "Symlinks are recorded, never followed. Each regular file is recorded\n"
	  "with its fs-verity sha256 digest and its backing path \"xx/<62 hex>\"\n"
	  "in a digest store; the same input always gives a byte-identical\n"
	  "image. IMAGE is written to a temporary file and renamed\n"
	  "into place: on any error nothing is left at IMAGE, and (as the image\n"
	  "is written before the new objects are published) no new object in\n"
	  "the digest store.\n"
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
	  "  --from-ostree       SOURCE is REPO:REF, REF a branch or a commit\n"
	  "                      checksum of the ostree repository REPO (no ':' in\n"
	  "                      REPO), read with libostree. Owners, modes, xattrs\n"
	  "                      (bare-user: user.ostreemeta's) and symlinks as\n"
	  "                      ostree checks them out, mtime 0, no hardlinks.\n"
	  "                      Each regular file points at ostree's own object\n"
	  "                      \"xx/<62 hex>.file\": mount with\n"
	  "                      basedir=REPO/objects, nothing is copied, and\n"
	  "                      fs-verity is enabled on the objects where the\n"
	  "                      filesystem allows (--require-verity: must be).\n"
	  "                      An archive repository needs --digest-store DIR\n"
	  "                      or --repo DIR: the objects are unpacked into DIR\n"
	  "                      (DIR/objects) under the same names; --repo takes\n"
	  "                      no bare repository's commit, whose image points\n"
	  "                      at its own objects. A partial commit is refused.\n"
	  "                      The same commit gives the same image in any\n"
	  "                      repository mode.\n"
	  "  --commit-digest     with --from-ostree and --format=erofs: once IMAGE\n"
	  "                      is complete, write a new commit of the same tree\n"
	  "                      (parent, subject, body, timestamp and metadata\n"
	  "                      kept) with ostree.composefs.digest.v0, IMAGE's\n"
	  "                      fs-verity digest, move REF to it if a branch, and\n"
	  "                      print its checksum; sign it with ostree gpg-sign\n"
	  BUILD_OPTIONS_HELP
	  "  --lax-dump          read the dumpfile as mkcomposefs does when not\n"
	  "                      strict: missing trailing fields are '-', MODE\n"
	  "                      bits beyond 0177777 are dropped\n"
	  "  -h, --help          show this help\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error; after SIGINT,\n"
	  "SIGTERM or SIGHUP, which remove its temporaries, 130, 143 or 129.\n" },
	{ "pull", cmd_pull, "build an image from a container image in a registry",
	  "Usage: cfsctl pull [OPTIONS] REFERENCE IMAGE\n"
	  "       cfsctl pull [OPTIONS] --repo DIR REFERENCE NAME\n"
	  "\n"
	  "Build the composefs image IMAGE from the container image REFERENCE,\n"
	  "[REGISTRY[:PORT]/]REPO[:TAG|@sha256:DIGEST] (TAG 'latest' when neither is\n"
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
	  "that answers 401 with a bearer challenge is asked for a token at the\n"
	  "challenge's realm (see credentials below). IMAGE is written to a\n"
	  "temporary file and renamed into place: on any error (registry unreachable, HTTP 401, 403 or\n"
	  "404, a digest or diff_id mismatch, an unsupported media type, a\n"
	  "truncated blob, an entry the format cannot hold) nothing is left at\n"
	  "IMAGE, and no new object in the digest store. With --repo, a failed\n"
	  "or killed pull changes no name.\n"
	  "\n"
	  "A zstd:chunked layer (the annotations io.github.containers.zstd-chunked.*\n"
	  "or io.containers.zstd-chunked.* give its table of contents) is pulled in\n"
	  "part: its TOC is fetched with a range request and must hash to the\n"
	  "manifest's checksum annotation; the files the digest store already holds\n"
	  "are found by their sha256 through the index of a repository\n"
	  "(REPO/index, next to REPO/objects) and each is read and checked against\n"
	  "its sha256; only the others' frames are fetched, neighbours coalesced,\n"
	  "many ranges to a request, and each file must decompress to its TOC size\n"
	  "and sha256 before anything is stored. The image is the one a full pull\n"
	  "of the same tree makes. Such a layer's diff_id is not checked (see\n"
	  "--full-pull). A layer that is not zstd:chunked, or a registry that\n"
	  "ignores Range requests, is pulled whole, and a line on stderr says so.\n"
	  "\n"
	  "Options:\n"
	  "  --full-pull         fetch every layer whole, check its digest and its\n"
	  "                      diff_id, even a zstd:chunked one (skopeo 1.9's\n"
	  "                      zstd:chunked layers fail the diff_id check: their\n"
	  "                      config keeps the diff_id of the layer before it\n"
	  "                      was recompressed)\n"
	  "  --plain-http        talk http:// to the registry, and accept an http://\n"
	  "                      token realm (default: https:// only)\n"
	  "  --retries=N         make a request again up to N times after a\n"
	  "                      transient error: reset, timeout, HTTP 5xx/408/429,\n"
	  "                      short body (default 3), with exponential backoff; a\n"
	  "                      blob resumes at the byte it reached\n"
	  "  --timeout=SECONDS   give up on a connection attempt, or a transfer that\n"
	  "                      receives nothing, after SECONDS (default 30)\n"
	  "  --speed-limit=BYTES\n"
	  "                      a transfer slower than BYTES a second for\n"
	  "                      --speed-time fails, and is retried as after a\n"
	  "                      reset (default 1024; 0: no limit)\n"
	  "  --speed-time=SECONDS\n"
	  "                      how long a transfer may be below --speed-limit\n"
	  "                      (default 30)\n"
	  "  --document-timeout=SECONDS\n"
	  "                      a manifest, an image config or a token must come\n"
	  "                      within SECONDS, retries included (default 60)\n"
	  "  --cacert=FILE       trust the CA certificates in FILE (PEM) for https\n"
	  "                      instead of the system CA store\n"
	  "  --creds=USER[:PASSWORD]\n"
	  "                      log in as USER: the password is asked for on the\n"
	  "                      terminal, or read as one line of stdin, when it is\n"
	  "                      not given\n"
	  "  --authfile=FILE     the credentials for the registry in FILE, in\n"
	  "                      containers-auth.json(5) format (Docker's\n"
	  "                      config.json is one); an entry for REGISTRY/NAMESPACE\n"
	  "                      is taken before one for REGISTRY. Without --creds\n"
	  "                      or --authfile: $REGISTRY_AUTH_FILE, or else the\n"
	  "                      first of $XDG_RUNTIME_DIR/containers/auth.json and\n"
	  "                      ~/.docker/config.json with an entry for the\n"
	  "                      registry (credential helpers are not asked)\n"
	  "  --json              print what was pulled as JSON on stdout: the\n"
	  "                      reference, its full name, the digest of what it\n"
	  "                      names, IMAGE, and each layer's digest, size and\n"
	  "                      whether it came from --layers-cache; then\n"
	  "                      layers_partial, layers_full, layers_cached,\n"
	  "                      bytes_fetched (received for the layers),\n"
	  "                      bytes_reused (of files found in the store) and\n"
	  "                      bytes_skipped (of blobs not fetched)\n"
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
	  "A progress line of the layers' bytes fetched, of their size, is drawn\n"
	  "on stderr when it is a terminal; otherwise a line for each layer as it is applied. At the end\n"
	  "'Digest: sha256:...' on stderr names what the reference resolved to (the\n"
	  "manifest or the index), to pull the very same image again by digest.\n"
	  "\n"
	  "Credentials answer a Basic challenge, or go to the token realm of a\n"
	  "bearer challenge to get a token (without them the token is anonymous).\n"
	  "They and the token are sent to the registry's host and port and the\n"
	  "realm's only: not after a redirect to another host (as registries\n"
	  "redirect blobs to a storage service). An https registry may not\n"
	  "redirect to http:// unless --plain-http is given. REFERENCE may be a\n"
	  "short name, completed as podman does: 'debian:12' is\n"
	  "docker.io/library/debian:12, 'foo/bar' docker.io/foo/bar, and a first\n"
	  "component with a '.' or ':', or 'localhost', names the registry.\n"
	  "Exit status: 0 success, 1 failure, 2 usage error; after SIGINT,\n"
	  "SIGTERM or SIGHUP, which remove its temporaries, 130, 143 or 129.\n" },
	{ "inspect", cmd_inspect, "show what an image holds",
	  "Usage: cfsctl inspect [--json] [--repo DIR] IMAGE\n"
	  "       cfsctl inspect --karg [--repo DIR] IMAGE\n"
	  "       cfsctl inspect ls [--json] [--repo DIR] IMAGE [PATH]\n"
	  "       cfsctl inspect stat [--json] [--repo DIR] IMAGE PATH\n"
	  "       cfsctl inspect dump [--as-mounted] [--repo DIR] IMAGE\n"
	  "       cfsctl inspect objects [--repo DIR] IMAGE\n"
	  "       cfsctl inspect missing --basedir DIR[:DIR...] IMAGE\n"
	  "       cfsctl inspect missing --repo DIR [--basedir DIR[:DIR...]] IMAGE\n"
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
	  "  --repo=DIR       IMAGE is a name or an image digest (64 hex digits) in\n"
	  "                   the repository DIR (see cfsctl images); missing looks\n"
	  "                   in DIR/objects unless --basedir is given\n"
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
	  "1 otherwise, 2 for a usage error; after SIGINT, SIGTERM or SIGHUP,\n"
	  "which remove its temporaries, 130, 143 or 129.\n" },
	{ "gc", cmd_gc, "remove the objects no image needs from a digest store",
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
	  "first. Anything in DIR that is not an object, a temporary or an xx\n"
	  "directory (other names, symlinks, other directories, temporaries of\n"
	  "running processes) is reported on stderr and left alone. Symlinks are\n"
	  "never followed.\n"
	  "\n"
	  "With --repo, gc cleans the repository DIR (see cfsctl images): it takes\n"
	  "the lock first, then keeps every image a name reaches, and the IMAGEs\n"
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
	  "Exit status: 0 success, 1 failure (an image that does not read, a\n"
	  "removal that failed), 2 usage error.\n" },
	{ "images", cmd_images, "list, name and unname the images of a repository",
	  "Usage: cfsctl images --repo DIR [--json]\n"
	  "       cfsctl images --repo DIR --tag NAME IMAGE\n"
	  "       cfsctl images --repo DIR --remove NAME...\n"
	  "\n"
	  "A repository is a directory holding a digest store and the images that\n"
	  "use it, with names (docs/repository.md):\n"
	  "  DIR/objects/xx/<62 hex>   the digest store, a basedir as it is\n"
	  "  DIR/images/<64 hex>       an image, named by its own fs-verity digest\n"
	  "  DIR/images/refs/NAME      a name: a symlink to ../<64 hex> (one more\n"
	  "                            ../ for each '/' in NAME)\n"
	  "cfsctl build --repo and cfsctl pull --repo store images and set names;\n"
	  "inspect, verify, diff, mount and tui take --repo and a name or a digest;\n"
	  "gc --repo keeps what the names reach and removes the rest.\n"
	  "\n"
	  "A NAME is components of letters, digits and ._-+@:=,~ separated by\n"
	  "single '/' (os/debian:12), none starting with '.', not starting with\n"
	  "'-', and not 64 hex digits, which name an image by its digest.\n"
	  "\n"
	  "With no other option, list the names, one line each: NAME, the image's\n"
	  "digest, its size in bytes and the number of objects it references; then\n"
	  "the images no name reaches, with '-' for NAME (the next gc removes them).\n"
	  "A name that is not a symlink to an image of the repository is reported\n"
	  "on stderr (exit 1).\n"
	  "\n"
	  "Options:\n"
	  "  --repo DIR          the repository\n"
	  "  --json              the listing as one JSON document: repository,\n"
	  "                      names: [{name, digest}], images: [{digest, size,\n"
	  "                      objects, object_bytes, names: [NAME...]}] (every\n"
	  "                      image, named or not) and broken_names: [{name,\n"
	  "                      problem}]\n"
	  "  --tag NAME IMAGE    point NAME at the image IMAGE (a name or a digest)\n"
	  "                      names, replacing NAME atomically if it exists\n"
	  "  --remove NAME...    remove the names; their images stay until gc\n"
	  "  -h, --help          show this help\n"
	  "\n"
	  "Exit status: 0 success, 1 failure, 2 usage error.\n" },
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
	  "       cfsctl mount --from-ostree [--gpg-homedir=DIR] [--format=v1|erofs]\n"
	  "                    REPO:REF MOUNTPOINT\n"
	  "       cfsctl mount [OPTIONS] --repo DIR IMAGE MOUNTPOINT\n"
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
	  "  --repo=DIR              IMAGE is a name or an image digest in the\n"
	  "                          repository DIR (see cfsctl images); the\n"
	  "                          basedir is DIR/objects unless --basedir is\n"
	  "                          given; --digest=auto also requires the\n"
	  "                          measured digest to be the image's name\n"
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
	  "  --from-ostree           mount the ostree commit REPO:REF (a bare or\n"
	  "                          bare-user repository) after the checks of\n"
	  "                          'verify --from-ostree': its EROFS image is\n"
	  "                          rebuilt into REPO/tmp (fs-verity enabled on\n"
	  "                          it), mounted with basedir=REPO/objects and the\n"
	  "                          digest in the commit, then unlinked. Takes no\n"
	  "                          other option but --gpg-homedir and --format\n"
	  "  --format=v1|erofs       with --from-ostree: mount the EROFS image\n"
	  "                          (default) or, once it has checked, the v1 image\n"
	  "                          of the same tree with its own digest and\n"
	  "                          verity_check=2 (the module)\n"
	  "  --gpg-homedir=DIR       with --from-ostree: the commit must be signed\n"
	  "                          by a key of the GnuPG home DIR\n"
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
	  "       cfsctl verify --from-ostree [--gpg-homedir=DIR] REPO:REF\n"
	  "       cfsctl verify [OPTIONS] --repo DIR IMAGE\n"
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
	  "  --repo=DIR              IMAGE is a name or an image digest in the\n"
	  "                          repository DIR (see cfsctl images): the\n"
	  "                          image's fs-verity digest must be its name\n"
	  "                          (unless --digest), and the objects are\n"
	  "                          checked in DIR/objects unless --basedir\n"
	  "  --digest=HEX            the image's own fs-verity digest must be HEX\n"
	  "                          (measured where fs-verity is enabled on it,\n"
	  "                          computed otherwise)\n"
	  "  --require-verity        an object without fs-verity whose digest the\n"
	  "                          image records is an error, not a warning\n"
	  "  --jobs=N                hash objects with N threads (default: all CPUs)\n"
	  "  --json                  the same report as a JSON document\n"
	  "  --from-ostree           check the chain of the ostree commit REPO:REF\n"
	  "                          instead, link by link, and say which failed:\n"
	  "                          1. with --gpg-homedir, its GPG signature;\n"
	  "                          2. every object of the commit against its\n"
	  "                          ostree checksum; 3. its\n"
	  "                          ostree.composefs.digest.v0 against the\n"
	  "                          digest of the EROFS image rebuilt from it (as\n"
	  "                          build --from-ostree --format=erofs makes it).\n"
	  "                          Prints one line per link, then \"verify: OK\".\n"
	  "                          Takes no other option but --gpg-homedir\n"
	  "  --gpg-homedir=DIR       with --from-ostree: the commit must be signed\n"
	  "                          by a key of the GnuPG home DIR (its public\n"
	  "                          keys, exported by gpg, are the only ones\n"
	  "                          libostree trusts)\n"
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
	  "       cfsctl diff [--stat] [--json] --repo DIR OLD NEW\n"
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
	  "  --repo=DIR  OLD and NEW are names or image digests in the repository\n"
	  "              DIR (see cfsctl images)\n"
	  "  --json      a JSON document: every change with both sides in full, and\n"
	  "              the counts (printed also when the inputs are identical)\n"
	  "  -h, --help  show this help\n"
	  "\n"
	  "Exit status: 0 identical, 1 different, 2 trouble (usage, unreadable or\n"
	  "corrupt input), as diff(1).\n" },
	{ "tui", cmd_tui, "browse an image in the terminal",
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
	char *raw = NULL, *msg;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&raw, fmt, ap);
	va_end(ap);
	/* An argument it quotes may hold anything. */
	msg = len < 0 ? NULL : cfs_printable(raw, (size_t)len, CFS_MSG_MAX, 0);
	fputs("cfsctl: ", stderr);
	if (verb)
		fprintf(stderr, "%s: ", verb);
	fputs(msg ? msg : "out of memory", stderr);
	free(msg);
	free(raw);
	if (verb)
		fprintf(stderr, "\nTry 'cfsctl %s --help' for more information.\n", verb);
	else
		fputs("\nTry 'cfsctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

void cli_error(const char *fmt, ...)
{
	char *raw = NULL, *msg;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vasprintf(&raw, fmt, ap);
	va_end(ap);
	/*
	 * Escaped as the library's messages are, which it may quote
	 * (escaped already: a backslash stays).
	 */
	msg = len < 0 ? NULL : cfs_printable(raw, (size_t)len, CFS_MSG_MAX, CFS_ESCAPE_NO_BACKSLASH);
	fprintf(stderr, "cfsctl: %s\n", msg ? msg : "out of memory");
	free(msg);
	free(raw);
}

int cli_close_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_error("write error on standard output: %s", strerror(errno ? errno : EIO));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_parse_size(const char *s, uint64_t *size)
{
	static const char units[] = "KMGTPE";
	const char *u;
	uint64_t v = 0;
	unsigned int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s) {
		u = strchr(units, *s);
		if (!u || s[1])
			return -1;
		shift = 10 * (unsigned int)(u - units + 1);
		if (v > UINT64_MAX >> shift)
			return -1;
	}
	*size = v << shift;
	return 0;
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
	      "Exit status: 0 success, 1 failure, 2 usage error. SIGINT, SIGTERM\n"
	      "and SIGHUP during a build, pull or fetch remove its temporaries and\n"
	      "exit 130, 143 and 129 (128 + the signal's number).\n"
	      "\n"
	      "Bytes that came from input (names, symlink targets, media types,\n"
	      "HTTP headers, arguments) are escaped when printed: a backslash as\n"
	      "\\\\, newline, return and tab as \\n, \\r, \\t, any other control\n"
	      "character (C1 ones and those that reorder text included) and every\n"
	      "byte of invalid UTF-8 as \\xXY. A message longer than 1000 bytes\n"
	      "so escaped is shortened in the middle, '...', keeping its start and\n"
	      "its end, where the reason is.\n",
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
