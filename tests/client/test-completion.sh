#!/bin/bash
# test-completion.sh AIRLOCK FAKE_DAEMON BASH_COMPLETION ZSH_COMPLETION: the
# shell completions of airlock(1) (libclient/cli/completions/) against the
# command: they offer every command and every option its --help lists, and
# complete session ids and runtimes from the daemon (the fake daemon of
# test-cli.sh). zsh's is checked for syntax and its commands when zsh is
# installed.
set -u
airlock=$1
fake=$2
bashcomp=$3
zshcomp=$4
tmp=$(mktemp -d)
sock=$tmp/airlock.sock
fails=0
"$fake" "$sock" "$tmp/ps" "$tmp/log" &
fpid=$!
trap 'kill $fpid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2" >&2; fails=$((fails + 1)); }

# shellcheck source=/dev/null
. "$bashcomp"

# complete WORDS...: what the completion offers for the last word (a line
# typed up to the cursor), one per line, sorted.
complete_line() {
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_airlock
	printf '%s\n' "${COMPREPLY[@]}" | sort
}

# The commands: those of the command's usage, no more, no fewer.
want=$("$airlock" --help | sed -n 's/^.*airlock \[--socket PATH\] \(\[--json\] \)\{0,1\}\([a-z]*\).*/\2/p' | sort -u)
got=$(complete_line "$airlock" "" | sort -u)
[ "$want" = "$got" ] && ok commands || fail commands "usage lists [$(echo $want)], completion offers [$(echo $got)]"
got=$(complete_line "$airlock" --socket "$sock" "se")
[ "$got" = session ] && ok command-after-socket || fail command-after-socket "got [$got]"
got=$(complete_line "$airlock" session "")
# The subcommands airlock session --help lists, all of them.
subs=$("$airlock" session --help 2>&1 | sed -n 's/.*\] session \([a-z][a-z]*\).*/\1/p' | sort -u)
[ -n "$subs" ] && [ "$(echo $got)" = "$(echo $subs)" ] && ok session-subcommands ||
	fail session-subcommands "got [$(echo $got)], --help lists [$(echo $subs)]"

# Every long option of run and session open (their --help) is offered.
for cmd in run "session open"; do
	# shellcheck disable=SC2086
	# The options it lists: at a line's start or in a synopsis' brackets
	# (not those named in a description).
	opts=$("$airlock" $cmd --help | grep -oE -- '(^ *|\[)--[a-z][a-z-]*' | tr -d ' [' | sort -u)
	# shellcheck disable=SC2086
	offered=$(complete_line "$airlock" $cmd "--")
	missing=
	for o in $opts; do
		case $o in --version) continue ;; esac
		echo "$offered" | grep -qx -- "$o" || missing="$missing $o"
	done
	[ -z "$missing" ] && ok "options-$cmd" || fail "options-$cmd" "not offered:$missing"
done
got=$(complete_line "$airlock" "--t")
[ "$got" = --timeout ] && ok global-timeout || fail global-timeout "got [$got]"

# From the daemon: runtimes for --lang, the session ids for close and put.
got=$(complete_line "$airlock" --socket "$sock" run --lang "")
echo "$got" | grep -qx python && echo "$got" | grep -qx sh && ok runtimes || fail runtimes "got [$(echo $got)]"
sid=$("$airlock" --socket "$sock" session open)
got=$(complete_line "$airlock" --socket "$sock" session close "")
[ "$got" = "$sid" ] && ok session-ids || fail session-ids "got [$got], want $sid"
got=$(complete_line "$airlock" --socket "$sock" put "0123")
[ "$got" = "$sid" ] && ok put-session || fail put-session "got [$got]"
# No daemon: nothing offered, and at once (--timeout 1 bounds a hung one).
got=$(complete_line "$airlock" --socket "$tmp/none" session close "")
[ -z "$got" ] && ok no-daemon || fail no-daemon "got [$got]"

# zsh: its syntax, and the same commands.
if command -v zsh >/dev/null; then
	zsh -n "$zshcomp" && ok zsh-syntax || fail zsh-syntax "zsh -n failed"
else
	echo "skip zsh-syntax: no zsh"
fi
zcmds=$(sed -n "s/^\t\t'\([a-z]*\):.*/\1/p" "$zshcomp" | sort -u)
[ "$zcmds" = "$want" ] && ok zsh-commands || fail zsh-commands "zsh offers [$(echo $zcmds)]"

[ "$fails" -eq 0 ] || { echo "$fails failed" >&2; exit 1; }
