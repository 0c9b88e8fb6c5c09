#!/usr/bin/env bash
# Stops a control plane started by hack/local-up.sh, by PID: first its supervisor (which stops its processes in
# reverse start order, the API server before etcd), then, if the supervisor is gone, whatever its PID file still
# lists, newest first, with SIGTERM and SIGKILL after a few seconds.
#
# Usage: hack/local-down.sh [--instance NAME | --all]   (default instance: local)
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"
source "${REPO_ROOT}/hack/lib/local.sh"

instances=()
while (($#)); do
	case "$1" in
	--instance) instances+=("${2:?--instance needs a name}"); shift 2 ;;
	--instance=*) instances+=("${1#*=}"); shift ;;
	--all)
		for d in "${LOCAL_BASE_DIR}"/*/; do
			[[ -d "${d}" ]] && instances+=("$(basename "${d}")")
		done
		shift
		;;
	-h | --help) util::usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) util::die "unknown argument $1 (see --help)" ;;
	esac
done
((${#instances[@]})) || instances=(local)

stop_instance() {
	local instance="$1" dir pid lines i name stopped=0
	local::check_instance_name "${instance}"
	dir="$(local::instance_dir "${instance}")"
	[[ -d "${dir}" ]] || util::die "no instance ${instance} in ${LOCAL_BASE_DIR}"

	if pid="$(local::supervisor_pid "${dir}")"; then
		util::log "stopping ${instance}: local-cluster (pid ${pid}) stops its processes"
		local::stop_pid "${pid}" 60 local-cluster
		stopped=1
	fi
	# Whatever the supervisor did not stop (it was killed, or it timed out), newest first.
	if [[ -s "${dir}/pids" ]]; then
		mapfile -t lines <"${dir}/pids"
		for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
			read -r pid name <<<"${lines[i]}"
			if [[ "${pid}" =~ ^[0-9]+$ ]] && local::owned_by "${pid}" "${dir}"; then
				util::log "stopping ${name} (pid ${pid})"
				local::stop_pid "${pid}" 5 "${name}"
				stopped=1
			fi
		done
		rm -f "${dir}/pids"
	fi
	rm -f "${dir}/ready"
	if ((stopped)); then
		util::log "instance ${instance} is stopped; logs stay in ${dir}"
	else
		util::log "instance ${instance} was not running"
	fi
}

for instance in "${instances[@]}"; do
	stop_instance "${instance}"
done
