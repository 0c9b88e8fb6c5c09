#!/usr/bin/env bash
# Shared helpers for the hack/ scripts. Source it; it defines functions and a few variables only.

# REPO_ROOT is the root of the scylla-operator working tree.
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export REPO_ROOT

# OUTPUT_DIR is the gitignored folder for everything the scripts produce.
OUTPUT_DIR="${REPO_ROOT}/_output"

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
