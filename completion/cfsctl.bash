# SPDX-License-Identifier: GPL-2.0 OR MIT
# bash completion for cfsctl. The verbs and each verb's options are read
# from cfsctl's own --help (once per shell), so they cannot drift from the
# program: "  VERB  summary" lines of 'cfsctl --help', and the "--name",
# "--name=VALUE" and "--name=a|b" items of 'cfsctl VERB --help', where
# a|b lists the fixed values. Other arguments complete as files: images,
# dumpfiles and directories.

_cfsctl_help() { # VERB...: the help text, cached per command line
	local key="_cfsctl_help_${*//[^a-z]/_}"
	if [ -z "${!key+set}" ]; then
		printf -v "$key" '%s' "$(command "${_cfsctl_bin:-cfsctl}" "$@" --help 2>/dev/null)"
	fi
	printf '%s\n' "${!key}"
}

_cfsctl() {
	local cur prev verb i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	_cfsctl_bin=${COMP_WORDS[0]}
	verb=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) verb=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [ -z "$verb" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help --version' -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_cfsctl_help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')" -- "$cur"))
		fi
		return
	fi
	local help opts
	help=$(_cfsctl_help "$verb")
	# Option names as the help lists them: "  -x, --name=VALUE  text".
	opts=$(sed -n 's/^  \(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z-]*\)\(=\{0,1\}\)\([^ ]*\).*/\2\3/p' <<<"$help")
	# A value after "--opt=" or after "--opt" as its own word.
	local name= val=
	if [[ $cur == --*=* ]]; then
		name=${cur%%=*} val=${cur#*=}
	elif [[ $prev == --* ]] && [[ $cur != -* ]] && grep -qx -- "$prev=" <<<"$opts"; then
		name=$prev val=$cur
	elif [[ $prev == --* ]] && [[ $cur != -* ]] && grep -qE -- "^  (-[a-zA-Z], )?$prev [A-Z]" <<<"$help"; then
		name=$prev val=$cur
	fi
	if [ -n "$name" ]; then
		local fixed
		fixed=$(sed -n "s/^  \(-[a-zA-Z], \)\{0,1\}$name[= ]\([a-z0-9]*\(|[a-z0-9]*\)\{1,\}\) .*/\2/p" <<<"$help" | head -n 1)
		if [ -n "$fixed" ]; then
			COMPREPLY=($(compgen -W "${fixed//|/ }" -- "$val"))
		else
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$val"))
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		[[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	# Sub-verbs listed in the usage lines ("cfsctl inspect ls ...").
	local subs
	subs=$(sed -n "s/^\(Usage:\)\{0,1\} *cfsctl $verb \([a-z][a-z]*\) .*/\2/p" <<<"$help")
	if [ -n "$subs" ] && [ "${COMP_WORDS[COMP_CWORD - 1]}" = "$verb" ]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	fi
	compopt -o filenames 2>/dev/null
	COMPREPLY+=($(compgen -f -- "$cur"))
}
complete -F _cfsctl cfsctl
