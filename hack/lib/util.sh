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

# util::free_port prints a TCP port on 127.0.0.1 that nothing listens on and that no other caller of this
# function has reserved. Reservations are files under $1 (a directory shared by all instances), so several
# control planes started at once never pick the same port.
util::free_port() {
	local reserve_dir="$1" port
	mkdir -p "${reserve_dir}"
	for _ in $(seq 1 200); do
		port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
		if (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then
			continue # Something listens there.
		fi
		# mkdir is atomic: the first caller wins the reservation.
		if mkdir "${reserve_dir}/${port}" 2>/dev/null; then
			echo "${port}"
			return 0
		fi
	done
	util::die "can't find a free TCP port on 127.0.0.1"
}

# util::wait_for runs a command every 0.2 s until it succeeds or the timeout (seconds) passes.
# Usage: util::wait_for <timeout> <description> <command...>
util::wait_for() {
	local timeout="$1" what="$2"
	shift 2
	local deadline=$(( $(date +%s) + timeout ))
	until "$@" >/dev/null 2>&1; do
		if (( $(date +%s) >= deadline )); then
			util::log "timed out after ${timeout}s waiting for ${what}"
			return 1
		fi
		sleep 0.2
	done
}
