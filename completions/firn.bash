# bash completion for firn. Commands, options and the values of options that take one of a fixed
# set come from the binary itself (`firn help --commands`, `firn help --options CMD`,
# `firn help --values CMD`), so they never drift from its tables; --sample-type offers the types
# of the profile on the line (`firn help --sample-types FILE`; firn.pb.gz when none is), and
# --group-by, --tag-focus and --tag-ignore its label keys (`firn help --labels FILE`; KEY= for the
# tag filters).
# Words from the binary (a profile's type names above all) are matched as plain strings, never
# through `compgen -W`, which would expand $(...), backquotes and globs in them.

# _firn_reply CUR: COMPREPLY = the lines of stdin that start with CUR, as they are
_firn_reply()
{
	local w
	COMPREPLY=()
	while IFS= read -r w; do
		[ -n "$w" ] && [[ $w == "$1"* ]] && COMPREPLY+=("$w")
	done
}

# The cgroups below the cgroup v2 mount, as paths relative to it (for --cgroup).
_firn_cgroups()
{
	local m
	m=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts 2>/dev/null)
	[ -n "$m" ] && find "$m" -mindepth 1 -maxdepth 4 -type d -printf '%P\n' 2>/dev/null
}

_firn()
{
	local cur prev cmd i j vals
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		_firn_reply "$cur" < <(firn help --commands 2>/dev/null; printf '%s\n' help --version --verbose)
		return
	fi
	if [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq $((i + 1)) ] &&
			_firn_reply "$cur" < <(firn help --commands 2>/dev/null)
		return
	fi
	# after --: a command, then that command's own arguments
	for ((j = i + 1; j < COMP_CWORD; j++)); do
		[ "${COMP_WORDS[j]}" = -- ] || continue
		if [ "$COMP_CWORD" -eq $((j + 1)) ]; then
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
		elif declare -F _command_offset >/dev/null; then
			_command_offset $((j + 1))
		else
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		fi
		return
	done
	# --opt=value: bash splits the word at '='
	if [ "$cur" = = ]; then
		cur=
	elif [ "$prev" = = ]; then
		prev=${COMP_WORDS[COMP_CWORD-2]}
	fi
	case $prev in
	-o|--output|--palette|--base|--new) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
	-p|--pid) _firn_reply "$cur" < <(ps -eo pid= 2>/dev/null | tr -d ' '); return ;;
	--cgroup) _firn_reply "$cur" < <(_firn_cgroups); return ;;
	--sample-type|--group-by|--tag-focus|--tag-ignore)
		local f=firn.pb.gz
		for ((j = i + 1; j < ${#COMP_WORDS[@]}; j++)); do
			case ${COMP_WORDS[j-1]} in -o|--output|--palette) continue ;; esac
			[ "$j" -ne "$COMP_CWORD" ] && [[ ${COMP_WORDS[j]} != -* ]] && [ -f "${COMP_WORDS[j]}" ] &&
				{ f=${COMP_WORDS[j]}; break; }
		done
		case $prev in
		--sample-type) _firn_reply "$cur" < <(firn help --sample-types "$f" 2>/dev/null) ;;
		--group-by) _firn_reply "$cur" < <(firn help --labels "$f" 2>/dev/null) ;;
		*)	# KEY= and the regular expression typed after it
			_firn_reply "$cur" < <(firn help --labels "$f" 2>/dev/null | sed 's/$/=/')
			compopt -o nospace 2>/dev/null ;;
		esac
		return ;;
	esac
	vals=$(firn help --values "$cmd" 2>/dev/null |
		awk -v o="$prev" '$1 == o { for (k = 2; k <= NF; k++) print $k }')
	if [ -n "$vals" ]; then
		_firn_reply "$cur" <<<"$vals"
		# a value's start such as usdt: goes on without a space
		if [ "${#COMPREPLY[@]}" -eq 1 ] && [[ ${COMPREPLY[0]} == *: ]]; then
			compopt -o nospace 2>/dev/null
		fi
		return
	fi
	if [[ $cur == -* ]]; then
		_firn_reply "$cur" < <(firn help --options "$cmd" 2>/dev/null | sed 's/=$//'; echo --help)
	else
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}
complete -F _firn firn
