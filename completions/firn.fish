# fish completion for firn. Commands and options come from the binary itself
# (`firn help --commands`, `firn help --options CMD`), so they never drift from its tables.
function __firn_cmd
	set -l words (commandline -opc)
	for w in $words[2..-1]
		if not string match -q -- '-*' $w
			echo $w
			return
		end
	end
end
function __firn_options
	set -l cmd (__firn_cmd)
	test -n "$cmd"; and firn help --options $cmd 2>/dev/null | string replace -r '=$' ''
end
complete -c firn -f -n 'test -z (__firn_cmd)' -a '(firn help --commands 2>/dev/null) help'
complete -c firn -f -n 'test -n (__firn_cmd); and string match -q -- "-*" (commandline -ct)' -a '(__firn_options)'
complete -c firn -n 'test -n (__firn_cmd)' -F
