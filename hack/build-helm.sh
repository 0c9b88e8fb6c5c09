#!/usr/bin/env bash
# Builds helm, which renders and lints the chart in deploy/helm/scylla-operator, from the Go module proxy
# (helm.sh/helm/v3/cmd/helm at HELM_VERSION). The binary goes to _output/bin/helm and is reused while a stamp keyed
# on the version and the Go version matches, so only the first build on a machine pays.
#
# Environment:
#   HELM_CACHE_DIR   optional directory holding built binaries by stamp key (for CI caches); read before building and
#                    written after.
#   HELM_BIN_DIR     output directory (default _output/bin).
#   HELM_FORCE=1     rebuild even when the stamp matches.
#   HELM_NICE        niceness for the compilers (default 10) so that other work on the machine is not starved.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"

HELM_VERSION="v3.22.0"
HELM_PACKAGE="helm.sh/helm/v3/cmd/helm"
BIN_DIR="${HELM_BIN_DIR:-${OUTPUT_DIR}/bin}"
NICE="${HELM_NICE:-10}"

util::require_cmd go sha256sum flock

# build::key prints the cache key of the binary the pinned version produces.
build::key() {
	{
		echo "${HELM_PACKAGE}@${HELM_VERSION}"
		go env GOVERSION GOOS GOARCH
	} | sha256sum | cut -c1-16
}

# build::up_to_date succeeds when BIN_DIR holds a binary built for key $1.
build::up_to_date() {
	[[ "${HELM_FORCE:-0}" != "1" ]] &&
		[[ -x "${BIN_DIR}/helm" && -f "${BIN_DIR}/.helm-stamp" ]] &&
		[[ "$(cat "${BIN_DIR}/.helm-stamp")" == "$1" ]]
}

build::helm() {
	local gobin="$1"
	util::log "building helm ${HELM_VERSION} ..."
	# Outside any module (GOWORK=off, GOFLAGS cleared) so that the repository's go.mod plays no part; the pure Go
	# build (CGO_ENABLED=0) needs no C toolchain. The version is stamped the way helm's own Makefile does.
	(cd "${BUILD_TMP}" && GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN="${gobin}" nice -n "${NICE}" \
		go install -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}" \
		"${HELM_PACKAGE}@${HELM_VERSION}")
}

# BUILD_TMP is the scratch directory of a build in progress, removed on exit.
BUILD_TMP=""
trap 'if [[ -n "${BUILD_TMP}" ]]; then rm -rf "${BUILD_TMP}"; fi' EXIT

main() {
	local key start
	mkdir -p "${BIN_DIR}"
	# Serialise concurrent builds (update and verify started together) on one lock.
	exec 9>"${BIN_DIR}/.helm-build.lock"
	flock 9

	key="$(build::key)"
	if build::up_to_date "${key}"; then
		util::log "helm ${HELM_VERSION} is up to date in ${BIN_DIR} (key ${key})"
		return 0
	fi

	if [[ -n "${HELM_CACHE_DIR:-}" && -x "${HELM_CACHE_DIR}/${key}/helm" ]]; then
		util::log "copying helm from cache ${HELM_CACHE_DIR}/${key}"
		cp "${HELM_CACHE_DIR}/${key}/helm" "${BIN_DIR}/.helm.new"
		mv -f "${BIN_DIR}/.helm.new" "${BIN_DIR}/helm"
	else
		start=$(date +%s)
		BUILD_TMP="$(mktemp -d "${BIN_DIR}/.build-helm.XXXXXX")"
		build::helm "${BUILD_TMP}"
		mv -f "${BUILD_TMP}/helm" "${BIN_DIR}/helm"
		util::log "built helm ${HELM_VERSION} in $(( $(date +%s) - start ))s"
		if [[ -n "${HELM_CACHE_DIR:-}" ]]; then
			mkdir -p "${HELM_CACHE_DIR}/${key}"
			cp "${BIN_DIR}/helm" "${HELM_CACHE_DIR}/${key}/"
			util::log "stored helm in cache ${HELM_CACHE_DIR}/${key}"
		fi
	fi
	echo "${key}" >"${BIN_DIR}/.helm-stamp"
	util::log "helm is in ${BIN_DIR}: $("${BIN_DIR}/helm" version --short 2>&1 | head -n 1)"
}

main "$@"
