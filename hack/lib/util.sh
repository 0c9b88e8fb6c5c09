#!/usr/bin/env bash
# Logging helpers for the hack/ scripts of the local control plane. Source it; it also sources init.sh, which
# sets REPO_ROOT and OUTPUT_DIR (the gitignored folder for everything the scripts produce).
source "$(dirname "${BASH_SOURCE[0]}")/init.sh"

# util::log prints a timestamped message to stderr.
util::log() {
	printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
}

# util::die prints a message to stderr and exits with status 1.
util::die() {
	util::log "ERROR: $*"
	exit 1
}

# util::require_cmd fails unless every named command is on PATH.
util::require_cmd() {
	local c
	for c in "$@"; do
		command -v "${c}" >/dev/null 2>&1 || util::die "required command ${c} is not on PATH"
	done
}

# util::log_tail prints the last lines of a log file, framed, to stderr.
util::log_tail() {
	local file="$1" lines="${2:-40}"
	{
		echo "----- last ${lines} lines of ${file} -----"
		if [[ -f "${file}" ]]; then tail -n "${lines}" "${file}"; else echo "(no such file)"; fi
		echo "----- end of ${file} -----"
	} >&2
}

# util::usage prints the comment block at the top of script $1 (after the shebang), without the comment marks.
util::usage() {
	awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}
