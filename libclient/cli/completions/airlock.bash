# bash completion of airlock(1). Installed as
# /usr/share/bash-completion/completions/airlock (meson, debian/airlock.install).
# Commands and options as `airlock --help` lists them (tests/client/
# test-completion.sh checks both lists against the command). Session and run
# ids, runtimes and profiles are asked of the daemon, on the --socket given
# on the line, with a short --timeout: a daemon that does not answer costs
# a second, never a hung shell.

_airlock_ask() {
	local -a sock=()
	local i
	for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
		if [[ ${COMP_WORDS[i]} == --socket ]]; then
			sock=(--socket "${COMP_WORDS[i + 1]}")
		fi
	done
	"${COMP_WORDS[0]}" "${sock[@]}" --timeout 1 "$@" 2>/dev/null
}

_airlock_sessions() {
	_airlock_ask session ls | awk 'NR > 1 { print $1 }'
}

_airlock() {
	local cur prev cmd= sub= i nops=0
	local commands="ping info ps cancel run session put get files rm cell mcp"
	local global="--socket --json --timeout --help"
	local run_opts="-c --lang --arg --file --files-from --stdin --env --session --cell
		--figures --mount --stream --artifacts --force --tool --profile --limit --wall --cpu
		--memory --processes --output"
	local open_opts="--workspace --idle --lifetime --profile --interpreter --background --archive --limit --wall
		--cpu --memory --processes --output"
	local mcp_opts="--parallel --output-budget --python-runtime --help"
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	# The command, its subcommand and how many operands come before cur.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --timeout) ((i++)) ;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${COMP_WORDS[i]}
			elif [[ $cmd == session && -z $sub ]]; then
				sub=${COMP_WORDS[i]}
			else
				((nops++))
			fi
			;;
		esac
	done

	case $prev in
	--socket | --artifacts | --files-from | --stdin | --archive)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--lang | --interpreter | --python-runtime)
		COMPREPLY=($(compgen -W "$(_airlock_ask info | sed -n 's/^runtimes: *//p') exec" -- "$cur"))
		return
		;;
	--session)
		COMPREPLY=($(compgen -W "$(_airlock_sessions)" -- "$cur"))
		return
		;;
	--timeout | --wall | --cpu | --memory | --processes | --output | --limit | --env | \
		--arg | --file | --tool | --mount | --profile | --workspace | --idle | --lifetime | \
		--parallel | --output-budget | -c)
		return
		;;
	esac

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		fi
		return
	fi
	case $cmd in
	run)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$run_opts $global" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		;;
	session)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "open close ls ps kill extend save" -- "$cur"))
		elif [[ $cur == -* ]]; then
			[[ $sub == open ]] && COMPREPLY=($(compgen -W "$open_opts $global" -- "$cur")) ||
				COMPREPLY=($(compgen -W "$global" -- "$cur"))
		elif [[ $sub =~ ^(close|ps|kill|extend|save)$ && $nops -eq 0 ]]; then
			COMPREPLY=($(compgen -W "$(_airlock_sessions)" -- "$cur"))
		elif [[ $sub == save && $nops -eq 1 ]]; then
			COMPREPLY=($(compgen -f -- "$cur")) # the archive to write
		fi
		;;
	cancel)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global" -- "$cur"))
		elif ((nops == 0)); then
			COMPREPLY=($(compgen -W "$(_airlock_ask ps | awk 'NR > 1 { print $1 }')" -- "$cur"))
		fi
		;;
	put | get | files | rm | cell)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$global" -- "$cur"))
		elif ((nops == 0)); then
			COMPREPLY=($(compgen -W "$(_airlock_sessions)" -- "$cur"))
		elif [[ ($cmd == put && $nops -eq 1) || ($cmd == get && $nops -eq 2) ||
			($cmd == cell && $nops -eq 1) ]]; then
			COMPREPLY=($(compgen -f -- "$cur")) # a local file
		fi
		;;
	mcp)
		COMPREPLY=($(compgen -W "$mcp_opts" -- "$cur"))
		;;
	*)
		[[ $cur == -* ]] && COMPREPLY=($(compgen -W "$global" -- "$cur"))
		;;
	esac
}
complete -F _airlock airlock
