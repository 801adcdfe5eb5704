#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# --layers-cache on an image whose later layer deletes a file of an earlier
# one: the deleted file's object is never published, and the cached
# fragment that names it must still be taken, since the final image needs
# only objects the store has. The second pull fetches no layer; after its
# object went from the store, a file the image keeps brings its layer back.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
umask 022

mkdir "$T/L"
python3 - "$T/L" <<'PY' || fail "writing the layers"
import io, sys, tarfile
def layer(path, entries):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for name, data in entries:
            i = tarfile.TarInfo(name)
            if data is None:
                i.type = tarfile.DIRTYPE
                i.mode = 0o755
                t.addfile(i)
            else:
                i.size = len(data)
                i.mode = 0o644
                t.addfile(i, io.BytesIO(data))
d = sys.argv[1]
layer(d + "/1.tar", [("etc", None), ("etc/os-release", b"NAME=deleted\n" * 400),
                     ("etc/keep", b"kept by the image\n" * 400)])
layer(d + "/2.tar", [("etc", None), ("etc/.wh.os-release", b""),
                     ("etc/new", b"from layer two\n" * 400)])
PY
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/2.tar", "gzip"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay:v1" "$T/want.img"

layers_fetched() { # LOG: how many layer blobs (the blobs but the config) it served; empty it
	grep -c "^ok /v2/img/blobs/" "$1" | awk '{ print $1 - 1 }'
	: >"$1"
}
start_server reg "$T/fake" ok
R=${SERVER_URL#http://}
pull() { # IMAGE
	expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" --digest-store="$T/s" \
		"$R/img:v1" "$1"
	cmp -s "$T/want.img" "$1" || fail "the pulled image '$1' differs from build --from-oci's"
}
pull "$T/1.img"
assert_eq 2 "$(layers_fetched "$T/reg.log")" "layers fetched into an empty cache"
assert_eq 2 "$(find "$T/lc" -name 'sha256-*' | wc -l)" "fragments in the layers cache"
check_store "$T/s"
assert_eq 2 "$n_objects" "objects in the store (etc/keep and etc/new)"
pull "$T/2.img"
assert_eq 0 "$(layers_fetched "$T/reg.log")" "layers fetched the second time"
# The object of a file the image keeps goes: the cache cannot serve it.
obj=$("$CFSCTL" inspect stat "$T/2.img" /etc/keep | sed -n 's/^backing: *//p')
[ -n "$obj" ] && [ -f "$T/s/$obj" ] || fail "/etc/keep's object '$obj' is not in the store"
rm "$T/s/$obj"
pull "$T/3.img"
[ -f "$T/s/$obj" ] || fail "the object gone from the store was not brought back"
fetched=$(layers_fetched "$T/reg.log")
[ "$fetched" -ge 1 ] || fail "no layer fetched when an object the image needs went"
check_store "$T/s"
assert_eq 2 "$n_objects" "objects in the store after the refetch"
pull "$T/4.img"
assert_eq 0 "$(layers_fetched "$T/reg.log")" "layers fetched once the store is whole again"
stop_servers
