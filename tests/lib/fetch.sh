# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the cfsctl fetch tests (tests/cli/50xx-fetch-*.sh) after lib/common.sh:
# an image with a digest store to serve, servers on 127.0.0.1 (nginx, and
# tests/lib/fetch-server.py for the failure modes, docker-registry) that are
# stopped on exit, and the check that a store holds exactly the objects that
# verify.

FETCH_PIDS=()
stop_servers() {
	local p
	for p in "${FETCH_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${FETCH_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	FETCH_PIDS=()
}
trap 'stop_servers; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT

command -v python3 >/dev/null || skip "python3 is not installed (make deps)"
command -v fsverity >/dev/null || skip "fsverity is not installed (make deps)"

# make_source DIR NSMALL NLARGE LARGE_KIB: files of distinct content
make_source() {
	local dir=$1 nsmall=$2 nlarge=$3 kib=$4
	python3 - "$dir" "$nsmall" "$nlarge" "$kib" <<'EOF'
import os, sys
d, ns, nl, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for i in range(ns):
    sub = os.path.join(d, "small", "d%02d" % (i % 17))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "f%05d" % i), "wb") as f:
        f.write(("object %d\n" % i).encode() * (1 + i % 50))
os.makedirs(os.path.join(d, "large"), exist_ok=True)
for i in range(nl):
    with open(os.path.join(d, "large", "big%d" % i), "wb") as f:
        block = bytes((i * 7 + k) % 251 for k in range(65536))
        for k in range(kib // 64):
            f.write(block[k % 200:] + block[:k % 200])
# the same content twice and an empty file: one object, and none
with open(os.path.join(d, "copy-of-0"), "wb") as f:
    f.write(b"object 0\n")
open(os.path.join(d, "empty"), "wb").close()
EOF
}

# make_image SRC IMAGE STORE: build IMAGE with its objects in STORE
make_image() {
	"$CFSCTL" build --digest-store="$3" "$1" "$2" >"$T/build.out" 2>&1 || {
		cat "$T/build.out"; fail "cfsctl build $1 failed"
	}
}

# store_files DIR: every non-directory entry under DIR, relative, sorted
store_files() {
	(cd "$1" && find . -mindepth 1 ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}

# assert_store DIR EXPECTED_LIST_FILE: DIR holds exactly those objects (no
# temporary or partial files) and each has the fs-verity digest it is named by
assert_store() {
	local dir=$1 want=$2 f d
	store_files "$dir" >"$T/store.list"
	if ! diff -u "$want" "$T/store.list" >"$T/store.diff"; then
		head -n 30 "$T/store.diff"
		fail "store '$dir' does not hold exactly the expected objects"
	fi
	while read -r f; do
		d=$(fsverity digest --compact "$dir/$f") || fail "fsverity digest '$dir/$f'"
		[ "${f%%/*}${f#*/}" = "$d" ] || fail "'$dir/$f' has digest $d"
	done <"$T/store.list"
}

# free_port: a TCP port on 127.0.0.1 that was free a moment ago
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_server NAME ROOT MODE [ARGS...]: fetch-server.py; URL in $SERVER_URL
start_server() {
	local name=$1 root=$2 mode=$3 i
	shift 3
	rm -f "$T/$name.port"
	python3 "$TOP/tests/lib/fetch-server.py" --root "$root" --mode "$mode" \
		--port-file "$T/$name.port" --log "$T/$name.log" "$@" 2>"$T/$name.err" &
	FETCH_PIDS+=($!)
	for i in $(seq 100); do
		[ -s "$T/$name.port" ] && break
		sleep 0.1
	done
	[ -s "$T/$name.port" ] || { cat "$T/$name.err"; fail "fetch-server.py did not start"; }
	SERVER_URL="http://127.0.0.1:$(cat "$T/$name.port")"
}

# make_cert DIR: a self-signed certificate for 127.0.0.1, DIR/cert.pem and DIR/key.pem
make_cert() {
	command -v openssl >/dev/null || skip "openssl is not installed"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$1/key.pem" \
		-out "$1/cert.pem" >"$1/openssl.log" 2>&1 || {
		cat "$1/openssl.log"; fail "openssl could not make a certificate"
	}
}

# start_registry [--accesslog] NAME [tls [HTPASSWD]]: a docker-registry with
# its config and storage in $T/NAME, on a free port, at $REG; its log in
# $T/NAME/log, errors only, or with --accesslog a line for each request too.
# With tls, https with the self-signed certificate $T/NAME/cert.pem (made
# once); with HTPASSWD, it wants the Basic credentials of that htpasswd file.
# Its storage outlives it: a registry started again with the same NAME
# serves what was pushed.
start_registry() {
	local level=error
	if [ "${1:-}" = --accesslog ]; then
		level="info, accesslog: {disabled: false}"
		shift
	fi
	local r=$T/$1 tls=${2:-} htpasswd=${3:-} port tries i scheme=http
	command -v docker-registry >/dev/null || fail "docker-registry is not installed (make deps)"
	mkdir -p "$r"
	if [ -n "$tls" ]; then
		[ -f "$r/cert.pem" ] || make_cert "$r"
		scheme=https
	fi
	for tries in 1 2 3 4 5; do
		port=$(free_port)
		{
			echo "version: 0.1"
			echo "log: {level: $level}"
			echo "storage: {filesystem: {rootdirectory: $r/data}}"
			echo "http:"
			echo "  addr: 127.0.0.1:$port"
			[ -n "$tls" ] && echo "  tls: {certificate: $r/cert.pem, key: $r/key.pem}"
			[ -n "$htpasswd" ] && echo "auth: {htpasswd: {realm: cfs-test, path: $htpasswd}}"
		} >"$r/config.yml"
		docker-registry serve "$r/config.yml" >>"$r/log" 2>&1 &
		FETCH_PIDS+=($!)
		for i in $(seq 100); do
			# 200, or 401 when it wants credentials: either way it answers
			case $(curl -s ${tls:+--cacert "$r/cert.pem"} -o /dev/null -w '%{http_code}' \
				"$scheme://127.0.0.1:$port/v2/") in
			200 | 401) break ;;
			esac
			kill -0 "${FETCH_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${FETCH_PIDS[-1]}" 2>/dev/null; then
			REG=127.0.0.1:$port
			return 0
		fi
	done
	cat "$r/log"
	fail "docker-registry did not start"
}

# start_nginx ROOT [tls]: nginx serving ROOT on 127.0.0.1, URL in $NGINX_URL.
# With tls: https and HTTP/2 with a self-signed certificate in $T/nginx/cert.pem;
# each request is logged to $T/nginx/access.log as "PROTOCOL CONNECTION URI";
# the readiness probes ask for /cfs-probe.
start_nginx() {
	local root=$1 tls=${2:-} n=$T/nginx port tries i mods listen scheme=http
	command -v nginx >/dev/null || PATH=$PATH:/usr/sbin
	command -v nginx >/dev/null || skip "nginx is not installed (make deps)"
	mkdir -p "$n/tmp"
	mods=$(nginx -V 2>&1)
	if [ -n "$tls" ]; then
		make_cert "$n"
		scheme=https
	fi
	for tries in 1 2 3 4 5; do
		port=$(free_port)
		listen="127.0.0.1:$port"
		[ -n "$tls" ] && listen="$listen ssl http2"
		{
			echo "daemon off; master_process off; worker_processes 1;"
			echo "pid $n/nginx.pid; error_log $n/error.log;"
			echo "events { worker_connections 1024; }"
			echo "http {"
			echo "  log_format proto '\$server_protocol \$connection \$uri';"
			echo "  access_log $n/access.log proto; sendfile on; keepalive_requests 100000;"
			echo "  http2_max_concurrent_streams 128;"
			echo "  client_body_temp_path $n/tmp/body;"
			local m
			for m in proxy fastcgi uwsgi scgi; do
				case $mods in *"--without-http_${m}_module"*) ;;
				*) echo "  ${m}_temp_path $n/tmp/$m;" ;; esac
			done
			echo "  server { listen $listen; root $root; location / { }"
			[ -n "$tls" ] && echo "    ssl_certificate $n/cert.pem; ssl_certificate_key $n/key.pem;"
			echo "  }"
			echo "}"
		} >"$n/nginx.conf"
		nginx -c "$n/nginx.conf" -p "$n" 2>>"$n/stderr" &
		FETCH_PIDS+=($!)
		for i in $(seq 50); do
			curl -sk -o /dev/null "$scheme://127.0.0.1:$port/cfs-probe" && break
			kill -0 "${FETCH_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${FETCH_PIDS[-1]}" 2>/dev/null; then
			NGINX_URL="$scheme://127.0.0.1:$port"
			return 0
		fi
	done
	cat "$n/stderr" "$n/error.log" 2>/dev/null
	fail "nginx did not start"
}

# json_get FILE KEY: a number from a one-line JSON object
json_get() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# lazy_start MNT CMD...: run CMD (a cfsctl lazy on MNT; exec'd, so that its
# PID is $LAZY_PID) in the background, its output in $T/lazy.out and
# $T/lazy.err, until MNT is mounted; skips where FUSE cannot mount.
# lazy_stop ends it with SIGTERM, its exit status in $LAZY_RC.
LAZY_PID=
lazy_start() {
	local mnt=$1 i
	shift
	[ -c /dev/fuse ] || skip "no /dev/fuse on this host: FUSE cannot be tested here"
	"$@" >"$T/lazy.out" 2>"$T/lazy.err" &
	LAZY_PID=$!
	for i in $(seq 100); do
		grep -q " $mnt fuse" /proc/mounts && return 0
		kill -0 "$LAZY_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/lazy.err"
	if grep -qiE "fuse|permission|not permitted" "$T/lazy.err"; then
		LAZY_PID=
		skip "FUSE cannot be mounted here: $(head -n 1 "$T/lazy.err")"
	fi
	fail "cfsctl lazy did not mount $mnt"
}
lazy_stop() {
	[ -n "$LAZY_PID" ] || return 0
	kill -TERM "$LAZY_PID" 2>/dev/null
	wait "$LAZY_PID"
	LAZY_RC=$?
	LAZY_PID=
}
