# SPDX-License-Identifier: GPL-2.0 OR MIT
# The docker-registry of the host benchmarks (bench/pull.sh, bench/push.sh):
# started on a free 127.0.0.1 port with its storage in DIR/data, emptied
# first, and stopped by the caller's cleanup. Sourced, not run; the caller
# defines die.

reg_pid=

# registry_start DIR: a new, empty registry under DIR; its address in $reg
registry_start() {
	local dir=$1 tries i port
	registry_stop
	rm -rf "$dir"
	mkdir -p "$dir"
	for tries in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		cat > "$dir/config.yml" <<EOC
version: 0.1
log: {level: error}
storage: {filesystem: {rootdirectory: $dir/data}}
http: {addr: 127.0.0.1:$port}
EOC
		docker-registry serve "$dir/config.yml" >> "$dir/log" 2>&1 &
		reg_pid=$!
		for i in $(seq 100); do
			curl -sf -o /dev/null "http://127.0.0.1:$port/v2/" && break
			kill -0 "$reg_pid" 2> /dev/null || break
			sleep 0.1
		done
		kill -0 "$reg_pid" 2> /dev/null && break
		reg_pid=
	done
	[ -n "$reg_pid" ] || { cat "$dir/log" >&2; die "docker-registry did not start"; }
	reg=127.0.0.1:$port
}

# registry_stop: the registry stopped, if one runs (its death by the
# signal is no failure under set -e)
registry_stop() {
	if [ -n "$reg_pid" ]; then
		kill "$reg_pid" 2> /dev/null || true
		wait "$reg_pid" 2> /dev/null || true
	fi
	reg_pid=
}
