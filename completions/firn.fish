# fish completion for firn. Commands, options and the values of options that take one of a fixed
# set come from the binary itself (`firn help --commands`, `firn help --options CMD`,
# `firn help --values CMD`), so they never drift from its tables; --sample-type offers the types
# of the profile on the line (`firn help --sample-types FILE`; firn.pb.gz when none is), and
# --group-by, --tag-focus and --tag-ignore its label keys (`firn help --labels FILE`; KEY= for the
# tag filters).
function __firn_cmd
	set -l words (commandline -opc)
	for w in $words[2..-1]
		if not string match -q -- '-*' $w
			echo $w
			return
		end
	end
end
# The words after `--` (the command to run and its arguments, the one being typed last); false
# when there is no `--` after the firn command.
function __firn_after_dashdash
	set -l words (commandline -opc)
	set -l seen_cmd 0
	for i in (seq 2 (count $words))
		if test $seen_cmd = 1; and string match -q -- -- $words[$i]
			printf '%s\n' $words[(math $i + 1)..-1] (commandline -ct)
			return 0
		end
		string match -q -- '-*' $words[$i]; or set seen_cmd 1
	end
	return 1
end
# Completes the command after `--` as fish would complete it on its own line.
function __firn_command
	set -l sub (__firn_after_dashdash)
	complete -C (string join ' ' -- (string escape -- $sub[1..-2]) $sub[-1])
end
function __firn_options
	set -l cmd (__firn_cmd)
	test -n "$cmd"; and firn help --options $cmd 2>/dev/null | string replace -r '=$' ''; and echo --help
end
# True when the option before the cursor takes a pid.
function __firn_after_pid
	contains -- (commandline -opc)[-1] -p --pid
end
# True when the option before the cursor is --cgroup.
function __firn_after_cgroup
	contains -- (commandline -opc)[-1] --cgroup
end
# The cgroups below the cgroup v2 mount, relative to it.
function __firn_cgroups
	set -l m (awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts 2>/dev/null)
	test -n "$m"; and find $m -mindepth 1 -maxdepth 4 -type d -printf '%P\n' 2>/dev/null
end
# The fixed values of the option before the cursor; false when it has none.
function __firn_values
	set -l cmd (__firn_cmd)
	set -l prev (commandline -opc)[-1]
	test -n "$cmd"; or return 1
	set -l vals (firn help --values $cmd 2>/dev/null | string match -- "$prev *" | string split ' ')[2..-1]
	test (count $vals) -gt 0; and printf '%s\n' $vals
end
# True when the option before the cursor is --sample-type.
function __firn_after_sample_type
	contains -- (commandline -opc)[-1] --sample-type
end
# True when the option before the cursor takes a label key (--group-by, KEY=REGEX).
function __firn_after_label
	contains -- (commandline -opc)[-1] --group-by --tag-focus --tag-ignore
end
# The first profile on the line (or firn.pb.gz).
function __firn_profile
	set -l words (commandline -opc)
	set -l f firn.pb.gz
	for i in (seq 3 (count $words))
		contains -- $words[(math $i - 1)] -o --output --palette; and continue
		if not string match -q -- '-*' $words[$i]; and test -f $words[$i]
			set f $words[$i]
			break
		end
	end
	echo $f
end
# The sample types of the first profile on the line (or of firn.pb.gz).
function __firn_sample_types
	firn help --sample-types (__firn_profile) 2>/dev/null
end
# Its label keys: as they are after --group-by, KEY= after the tag filters.
function __firn_labels
	if contains -- (commandline -opc)[-1] --group-by
		firn help --labels (__firn_profile) 2>/dev/null
	else
		firn help --labels (__firn_profile) 2>/dev/null | string replace -r '$' '='
	end
end
# True where files are what comes next: an operand or a file option's value.
function __firn_files
	set -l cmd (__firn_cmd)
	test -n "$cmd" -a "$cmd" != help; or return 1
	__firn_after_dashdash >/dev/null; and return 1
	__firn_values >/dev/null; and return 1
	__firn_after_pid; and return 1
	__firn_after_cgroup; and return 1
	__firn_after_sample_type; and return 1
	__firn_after_label; and return 1
	not string match -q -- '-*' (commandline -ct)
end
complete -c firn -f
complete -c firn -n 'test -z "$(__firn_cmd)"' -a '(firn help --commands 2>/dev/null) help'
complete -c firn -n 'string match -q -- help (__firn_cmd); and test (count (commandline -opc)) -eq 2' \
	-a '(firn help --commands 2>/dev/null)'
complete -c firn -n '__firn_after_dashdash >/dev/null' -a '(__firn_command)'
complete -c firn -n 'not __firn_after_dashdash >/dev/null; and __firn_values >/dev/null' -a '(__firn_values)'
complete -c firn -n 'test -n "$(__firn_cmd)"; and not __firn_after_dashdash >/dev/null; and string match -q -- "-*" (commandline -ct)' \
	-a '(__firn_options)'
complete -c firn -n 'not __firn_after_dashdash >/dev/null; and __firn_after_pid' -a '(__fish_complete_pids)'
complete -c firn -n 'not __firn_after_dashdash >/dev/null; and __firn_after_sample_type' -a '(__firn_sample_types)'
complete -c firn -n 'not __firn_after_dashdash >/dev/null; and __firn_after_label' -a '(__firn_labels)'
complete -c firn -n 'not __firn_after_dashdash >/dev/null; and __firn_after_cgroup' -a '(__firn_cgroups)'
complete -c firn -n '__firn_files' -F
