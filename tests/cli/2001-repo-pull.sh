#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull --repo: an image pulled from a docker-registry on 127.0.0.1
# is stored under its digest, byte for byte build --from-oci's, and named
# (names with '/'); a second pull replaces the name; a refused pull and a
# pull killed mid-way (a fake registry that stalls) leave the name on its
# image and nothing the next gc keeps; pulls racing gc in a loop never
# leave a name with a missing object.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022

mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
L=$T/L
cat >"$T/spec.json" <<EOF2
[{"tag": "v1", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"], ["$L/3.tar", "none"]]},
 {"tag": "v2", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"], ["$L/arm.tar", "none"]]}]
EOF2
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"

start_registry reg
for tag in v1 v2; do
	python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" $tag "http://$REG" cfs/test $tag >/dev/null ||
		fail "pushing $tag"
	expect_exit 0 "$CFSCTL" build --from-oci --print-digest --digest-store="$T/want-store" \
		"oci:$T/lay:$tag" "$T/want.$tag"
	cp "$T/out" "$T/want.$tag.digest"
done
d1=$(cat "$T/want.v1.digest")
d2=$(cat "$T/want.v2.digest")

R=$T/repo
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$R" --print-digest "$REG/cfs/test:v1" cfs/test/v1
assert_eq "$d1" "$(cat "$T/out")" "digest of the pulled image"
cmp -s "$T/want.v1" "$R/images/$d1" || fail "the pulled image differs from build --from-oci's"
assert_eq "../../../$d1" "$(readlink "$R/images/refs/cfs/test/v1")" "the pulled name"
check_store "$R/objects"
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$R" "$REG/cfs/test:v2" cfs/test/current
assert_eq "../../../$d2" "$(readlink "$R/images/refs/cfs/test/current")" "the second name"
diff <(cd "$T/want-store" && find . -type f | sort) <(cd "$R/objects" && find . -type f | sort) >/dev/null ||
	fail "the repository's objects differ from those of build --from-oci"
expect_exit 0 "$CFSCTL" images --repo "$R"
awk '{print $1, $2}' "$T/out" >"$T/list"
printf '%s\n' "cfs/test/current $d2" "cfs/test/v1 $d1" >"$T/want"
diff -u "$T/want" "$T/list" || fail "images after two pulls"
expect_exit 0 "$CFSCTL" verify --repo "$R" cfs/test/current
expect_exit 1 "$CFSCTL" diff --repo "$R" cfs/test/v1 cfs/test/current
assert_contains "$T/out" '^\+ /arm$'

# Pulled again over the name: replaced, the old image unnamed until gc.
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$R" "$REG/cfs/test:v1" cfs/test/current
assert_eq "../../../$d1" "$(readlink "$R/images/refs/cfs/test/current")" "the replaced name"
expect_exit 0 "$CFSCTL" gc --repo "$R"
assert_contains "$T/out" "^removed image images/$d2 "
[ ! -e "$R/images/$d2" ] || fail "gc kept the image no name reaches"
expect_exit 0 "$CFSCTL" verify --repo "$R" cfs/test/current

# A refused pull: no name changed, no image, no temporary.
before=$(cd "$R" && find . | sort)
expect_exit 1 "$CFSCTL" pull --plain-http --repo "$R" "$REG/cfs/test:nope" cfs/test/current
assert_contains "$T/err" "'$REG/cfs/test:nope': HTTP 404"
assert_eq "$before" "$(cd "$R" && find . | sort)" "the repository after a refused pull"
expect_exit 2 "$CFSCTL" pull --plain-http --repo "$R" "$REG/cfs/test:v1" 'bad//name'
expect_exit 2 "$CFSCTL" pull --plain-http --repo "$R" --digest-store "$T/s" "$REG/cfs/test:v1" x

# Killed mid-way (the last layer stalls): the name keeps its image.
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v2 "dir:$T/fake" img v2 >/dev/null || fail "fake tree"
start_server stall "$T/fake" stall --min-size 1000
"$CFSCTL" pull --plain-http --repo "$R" "${SERVER_URL#http://}/img:v2" cfs/test/current \
	2>"$T/killed.err" &
pid=$!
for i in $(seq 100); do
	grep -q '^stall ' "$T/stall.log" && break
	sleep 0.1
done
grep -q '^stall ' "$T/stall.log" || fail "the pull did not reach the stalling layer"
sleep 0.3
# (its children too: under valgrind $pid is tests/lib/valgrind-cfsctl's shell)
kill -KILL $(pgrep -P $pid) $pid
wait $pid 2>/dev/null
assert_eq "../../../$d1" "$(readlink "$R/images/refs/cfs/test/current")" "the name after a killed pull"
[ ! -e "$R/images/$d2" ] || fail "a killed pull left its image"
[ -n "$(find "$R/objects" -maxdepth 1 -name '.tmp-*')" ] || fail "no temporaries: the kill came too late to test"
expect_exit 0 "$CFSCTL" verify --repo "$R" cfs/test/current
stop_servers
expect_exit 0 "$CFSCTL" gc --repo "$R"
[ -z "$(find "$R" -name '.tmp-*')" ] || fail "gc left the killed pull's temporaries"
diff <(for n in cfs/test/v1 cfs/test/current; do "$CFSCTL" inspect objects --repo "$R" $n; done | sort -u) \
	<(cd "$R/objects" && find . -type f | sed 's|^\./||' | sort) >/dev/null ||
	fail "the store holds other objects than the named images'"

# Pulls and gc at once, in a loop: each pull replaces the name with the
# other version (so the one before loses its name and gc removes it); the
# name is checked, image and objects, right after each pull.
start_registry reg
gc_loop_start "$R"
for i in $(seq 1 10); do
	tag=v$((i % 2 + 1))
	"$CFSCTL" pull --plain-http --repo "$R" "$REG/cfs/test:$tag" cfs/test/current >/dev/null 2>"$T/perr" ||
		{ cat "$T/perr"; touch "$T/stop"; fail "pull $i failed"; }
	"$CFSCTL" verify --repo "$R" cfs/test/current >"$T/vout" 2>&1 ||
		{ cat "$T/vout"; touch "$T/stop"; fail "after pull $i, the name lost something"; }
done
gc_loop_stop
expect_exit 0 "$CFSCTL" verify --repo "$R" cfs/test/v1
echo "ok: $(grep -c '^images: ' "$T/gc.log") gc runs raced 10 pulls"
