#!/usr/bin/env bash
# Builds the local Kubernetes control plane from the Go module proxy:
#   kcp   one multi-call binary: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl
#         (from k8s.io/kubernetes, pinned by hack/kcp/go.mod and go.sum), with one symlink per component;
#   kwok  simulated nodes and pods (sigs.k8s.io/kwok at KWOK_VERSION).
# The binaries go to _output/bin/ and are reused while a stamp keyed on hack/kcp/{go.mod,go.sum,main.go},
# the kwok version and the Go version matches, so only the first build on a machine pays (~8 min on 2 cores).
#
# Environment:
#   KCP_CACHE_DIR   optional directory holding built binaries by stamp key (for CI caches); read before
#                   building and written after.
#   KCP_BIN_DIR     output directory (default _output/bin).
#   KCP_FORCE=1     rebuild even when the stamp matches.
#   KCP_NICE        niceness for the compilers (default 10) so that other work on the machine is not starved.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"

KWOK_VERSION="v0.8.0"
KCP_MODULE_DIR="${REPO_ROOT}/hack/kcp"
BIN_DIR="${KCP_BIN_DIR:-${OUTPUT_DIR}/bin}"
NICE="${KCP_NICE:-10}"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl)

util::require_cmd go sha256sum flock

# build::key prints the cache key of the binaries the current sources produce.
build::key() {
	{
		cat "${KCP_MODULE_DIR}/go.mod" "${KCP_MODULE_DIR}/go.sum" "${KCP_MODULE_DIR}/main.go"
		echo "kwok ${KWOK_VERSION}"
		go env GOVERSION GOOS GOARCH
	} | sha256sum | cut -c1-16
}

# build::kube_version prints the k8s.io/kubernetes version the wrapper module pins, e.g. v1.37.1.
build::kube_version() {
	(cd "${KCP_MODULE_DIR}" && GOWORK=off GOFLAGS=-mod=readonly go list -m -f '{{.Version}}' k8s.io/kubernetes)
}

# build::up_to_date succeeds when BIN_DIR holds binaries built for key $1.
build::up_to_date() {
	[[ "${KCP_FORCE:-0}" != "1" ]] &&
		[[ -x "${BIN_DIR}/kcp" && -x "${BIN_DIR}/kwok" && -f "${BIN_DIR}/.kcp-stamp" ]] &&
		[[ "$(cat "${BIN_DIR}/.kcp-stamp")" == "$1" ]]
}

build::link_components() {
	local c
	for c in "${COMPONENTS[@]}"; do
		ln -sfn kcp "${BIN_DIR}/${c}"
	done
}

build::kcp() {
	local out="$1" kube_version major minor build_date pkg flags=()
	kube_version="$(build::kube_version)"
	[[ "${kube_version}" =~ ^v([0-9]+)\.([0-9]+)\. ]] || util::die "can't parse Kubernetes version ${kube_version}"
	major="${BASH_REMATCH[1]}"
	minor="${BASH_REMATCH[2]}"
	build_date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=("-X ${pkg}.gitVersion=${kube_version}" "-X ${pkg}.gitMajor=${major}" "-X ${pkg}.gitMinor=${minor}"
			"-X ${pkg}.gitTreeState=clean" "-X ${pkg}.buildDate=${build_date}")
	done
	util::log "building kcp (Kubernetes ${kube_version}) ..."
	(cd "${KCP_MODULE_DIR}" && GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" nice -n "${NICE}" \
		go build -trimpath -ldflags "-s -w ${flags[*]}" -o "${out}" .)
}

build::kwok() {
	local gobin="$1"
	util::log "building kwok ${KWOK_VERSION} ..."
	GOWORK=off GOFLAGS= GOBIN="${gobin}" nice -n "${NICE}" \
		go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}" \
		"sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
}

# BUILD_TMP is the scratch directory of a build in progress, removed on exit.
BUILD_TMP=""
trap 'if [[ -n "${BUILD_TMP}" ]]; then rm -rf "${BUILD_TMP}"; fi' EXIT

main() {
	local key start
	mkdir -p "${BIN_DIR}"
	# Serialise concurrent builds (local-up and e2e started together) on one lock.
	exec 9>"${BIN_DIR}/.kcp-build.lock"
	flock 9

	key="$(build::key)"
	if build::up_to_date "${key}"; then
		build::link_components
		util::log "control plane binaries are up to date in ${BIN_DIR} (key ${key})"
		return 0
	fi

	if [[ -n "${KCP_CACHE_DIR:-}" && -x "${KCP_CACHE_DIR}/${key}/kcp" && -x "${KCP_CACHE_DIR}/${key}/kwok" ]]; then
		util::log "copying control plane binaries from cache ${KCP_CACHE_DIR}/${key}"
		cp "${KCP_CACHE_DIR}/${key}/kcp" "${KCP_CACHE_DIR}/${key}/kwok" "${BIN_DIR}/"
	else
		start=$(date +%s)
		BUILD_TMP="$(mktemp -d "${BIN_DIR}/.build.XXXXXX")"
		build::kcp "${BUILD_TMP}/kcp"
		build::kwok "${BUILD_TMP}"
		mv -f "${BUILD_TMP}/kcp" "${BUILD_TMP}/kwok" "${BIN_DIR}/"
		util::log "built control plane binaries in $(( $(date +%s) - start ))s"
		if [[ -n "${KCP_CACHE_DIR:-}" ]]; then
			mkdir -p "${KCP_CACHE_DIR}/${key}"
			cp "${BIN_DIR}/kcp" "${BIN_DIR}/kwok" "${KCP_CACHE_DIR}/${key}/"
			util::log "stored control plane binaries in cache ${KCP_CACHE_DIR}/${key}"
		fi
	fi
	build::link_components
	echo "${key}" >"${BIN_DIR}/.kcp-stamp"
	util::log "control plane binaries are in ${BIN_DIR}: kcp ($("${BIN_DIR}/kube-apiserver" --version 2>&1)), kwok"
}

main "$@"
