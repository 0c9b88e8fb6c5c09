#!/usr/bin/env bash
# Helpers for hack/local-up.sh and hack/local-down.sh. Source after hack/lib/util.sh.
#
# An instance lives in _output/local/<instance>/ and holds:
#   supervisor.pid  PID of e2e/cmd/local-cluster, which started and stops everything else
#   pids            "<pid> <name>" of every process it started, in start order
#   ready           written once everything is up; holds the usage text
#   *.log           one log per process

LOCAL_BASE_DIR="${OUTPUT_DIR}/local"

# local::check_instance_name fails unless $1 is usable as a directory name.
local::check_instance_name() {
	[[ "$1" =~ ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$ ]] ||
		util::die "instance name '$1' must be lower-case letters, digits and inner dashes"
}

# local::instance_dir prints the directory of instance $1.
local::instance_dir() {
	echo "${LOCAL_BASE_DIR}/$1"
}

# local::owned_by succeeds when process $1 belongs to the instance in directory $2: its command line or its
# environment names a file in that directory. This guards against killing an unrelated process that reused a
# PID from a stale file.
local::owned_by() {
	local pid="$1" dir="$2" file entry
	for file in "/proc/${pid}/cmdline" "/proc/${pid}/environ"; do
		[[ -r "${file}" ]] || continue
		while IFS= read -r -d '' entry; do
			if [[ "${entry}" == *"${dir}" || "${entry}" == *"${dir}/"* ]]; then
				return 0
			fi
		done <"${file}"
	done
	return 1
}

# local::supervisor_pid prints the PID of the running supervisor of the instance in directory $1, or fails.
local::supervisor_pid() {
	local dir="$1" pid
	[[ -s "${dir}/supervisor.pid" ]] || return 1
	pid="$(cat "${dir}/supervisor.pid")"
	[[ "${pid}" =~ ^[0-9]+$ ]] || return 1
	local::owned_by "${pid}" "${dir}" || return 1
	echo "${pid}"
}

# local::stop_pid sends SIGTERM to $1, waits up to $2 seconds, then sends SIGKILL.
local::stop_pid() {
	local pid="$1" grace="$2" name="${3:-process}"
	kill -TERM "${pid}" 2>/dev/null || return 0
	local deadline=$(($(date +%s) + grace))
	while kill -0 "${pid}" 2>/dev/null; do
		if (($(date +%s) >= deadline)); then
			util::log "${name} (pid ${pid}) ignored SIGTERM for ${grace}s; sending SIGKILL"
			kill -KILL "${pid}" 2>/dev/null || true
			return 0
		fi
		sleep 0.1
	done
}
