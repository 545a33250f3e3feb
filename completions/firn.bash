# bash completion for firn. Commands and options come from the binary itself
# (`firn help --commands`, `firn help --options CMD`), so they never drift from its tables.
_firn()
{
	local cur prev cmd i
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
		COMPREPLY=($(compgen -W "$(firn help --commands 2>/dev/null) help --version --verbose" -- "$cur"))
		return
	fi
	case $prev in
	-o|--output|--palette|--base|--new) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	-p|--pid) COMPREPLY=($(compgen -W "$(ps -eo pid= 2>/dev/null)" -- "$cur")); return ;;
	--format) COMPREPLY=($(compgen -W "pprof folded" -- "$cur")); return ;;
	--call-graph) COMPREPLY=($(compgen -W "fp dwarf auto" -- "$cur")); return ;;
	--sort) COMPREPLY=($(compgen -W "self total" -- "$cur")); return ;;
	--colors) COMPREPLY=($(compgen -W "hot mem io red green blue aqua yellow purple orange" -- "$cur")); return ;;
	--by) COMPREPLY=($(compgen -W "function module line" -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(firn help --options "$cmd" 2>/dev/null | sed 's/=$//') --help" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _firn firn
