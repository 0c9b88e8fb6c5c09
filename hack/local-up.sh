#!/usr/bin/env bash
# Starts a local Kubernetes control plane on loopback with simulated nodes, the project's CRDs, the project's
# programs that exist so far (operator, fake ScyllaDB Manager, manager-controller) and example ScyllaClusters. See
# docs/local-control-plane.md.
#
# Usage: hack/local-up.sh [--instance NAME] [--detach] [local-cluster flags...]
#   --instance NAME   run several control planes at once under different names (default: local);
#                     everything goes to _output/local/NAME/
#   --detach          start in the background and return once everything is up (stop with hack/local-down.sh)
#   other flags go to e2e/cmd/local-cluster, e.g. --example=PATH[,PATH...]|none, --zones=a,b,c, --nodes-per-zone=N
# Without --detach it runs in the foreground; Ctrl-C stops every process it started.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"
source "${REPO_ROOT}/hack/lib/local.sh"

instance="local"
detach=0
extra=()
while (($#)); do
	case "$1" in
	--instance) instance="${2:?--instance needs a name}"; shift 2 ;;
	--instance=*) instance="${1#*=}"; shift ;;
	--detach) detach=1; shift ;;
	-h | --help) util::usage "${BASH_SOURCE[0]}"; exit 0 ;;
	*) extra+=("$1"); shift ;;
	esac
done
local::check_instance_name "${instance}"
dir="$(local::instance_dir "${instance}")"

if pid="$(local::supervisor_pid "${dir}")"; then
	util::die "instance ${instance} already runs (pid ${pid}); stop it with hack/local-down.sh --instance ${instance}"
fi
if [[ -s "${dir}/pids" ]]; then
	util::log "stopping processes left over from an earlier run of ${instance}"
	"${REPO_ROOT}/hack/local-down.sh" --instance "${instance}"
fi

"${REPO_ROOT}/hack/build-control-plane.sh"
bin_dir="${KCP_BIN_DIR:-${OUTPUT_DIR}/bin}"
util::log "building e2e/cmd/local-cluster ..."
(cd "${REPO_ROOT}" && go build -o "${OUTPUT_DIR}/bin/local-cluster" ./e2e/cmd/local-cluster)

args=(--dir "${dir}" --name "${instance}" --bin-dir "${bin_dir}" "${extra[@]}")
if ((!detach)); then
	cd "${REPO_ROOT}"
	exec "${OUTPUT_DIR}/bin/local-cluster" "${args[@]}"
fi

mkdir -p "$(dirname "${dir}")"
rm -f "${dir}/ready"
supervisor_log="$(dirname "${dir}")/${instance}.supervisor.log"
(cd "${REPO_ROOT}" && exec setsid nohup "${OUTPUT_DIR}/bin/local-cluster" "${args[@]}" >"${supervisor_log}" 2>&1 </dev/null) &
supervisor=$!
util::log "started local-cluster in the background (pid ${supervisor}, log ${supervisor_log})"
deadline=$(($(date +%s) + 300))
until [[ -f "${dir}/ready" ]]; do
	if ! kill -0 "${supervisor}" 2>/dev/null; then
		util::log_tail "${supervisor_log}" 60
		util::die "local-cluster exited before the cluster was ready"
	fi
	if (($(date +%s) >= deadline)); then
		util::log_tail "${supervisor_log}" 60
		util::die "timed out waiting for the cluster; stop it with hack/local-down.sh --instance ${instance}"
	fi
	sleep 0.5
done
cat "${dir}/ready"
