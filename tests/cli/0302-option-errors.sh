#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A refused option is said once, in cfsctl's form, naming the verb once
# and the option: an unknown one, long or short, and one missing its value;
# a reference pull refuses is said by the part that is wrong.
# getopt's own words (which read like mount(8)'s) never show.
. "$(dirname "$0")/../lib/common.sh"

# refused VERB WANT ARGS...: cfsctl VERB ARGS... exits 2 with exactly WANT
# and the pointer to --help
refused() {
	local verb=$1 want=$2
	shift 2
	expect_exit 2 "$CFSCTL" "$verb" "$@"
	printf 'cfsctl: %s: %s\nTry '\''cfsctl %s --help'\'' for more information.\n' \
		"$verb" "$want" "$verb" | diff - "$T/err" >"$T/diff" ||
		{ cat "$T/diff"; fail "cfsctl $verb $*: not said as expected"; }
}

for verb in build pull inspect fetch gc images lazy mount verify diff tui; do
	refused "$verb" "unknown option '--bogus'" --bogus a b
	refused "$verb" "unknown option '--bogus'" --bogus=1 a b
done
refused inspect "unknown option '--bogus'" ls --bogus img
refused gc "unknown option '-z'" -z a
refused build "option '--repo' needs a value" --repo
refused pull "option '--repo' needs a value" --repo
refused fetch "option '--url' needs a value" --url
refused mount "option '--basedir' needs a value" --basedir
refused verify "option '--basedir' needs a value" --basedir

# A reference that does not parse: the part that is wrong, not the grammar.
refused pull "'docker://host/app:1' is not a reference: drop the 'docker://': a reference names no transport" \
	docker://host/app:1 img
refused pull "'localhost:5000/App:1' is not a reference: the repository 'App' has capitals: its name is lowercase" \
	localhost:5000/App:1 img
refused pull "'host.io/app:.x' is not a reference: the tag '.x' is not 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'" \
	host.io/app:.x img
refused pull "'host.io/app@sha256:12' is not a reference: after '@' comes sha256: and 64 lowercase hex digits" \
	host.io/app@sha256:12 img
refused pull "'host.io//app' is not a reference: the repository '/app' has an empty component" \
	host.io//app img
