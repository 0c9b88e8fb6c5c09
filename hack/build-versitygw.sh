#!/usr/bin/env bash
# Builds versitygw, the S3-compatible server that e2e tests and local-up run on loopback with its POSIX backend,
# from the Go module proxy (github.com/versity/versitygw/cmd/versitygw at VERSITYGW_VERSION). The binary goes to
# _output/bin/versitygw and is reused while a stamp keyed on the version and the Go version matches, so only the
# first build on a machine pays.
#
# Environment:
#   VERSITYGW_CACHE_DIR   optional directory holding built binaries by stamp key (for CI caches); read before
#                         building and written after.
#   VERSITYGW_BIN_DIR     output directory (default _output/bin).
#   VERSITYGW_FORCE=1     rebuild even when the stamp matches.
#   VERSITYGW_NICE        niceness for the compilers (default 10) so that other work on the machine is not starved.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"

VERSITYGW_VERSION="v1.8.0"
VERSITYGW_PACKAGE="github.com/versity/versitygw/cmd/versitygw"
BIN_DIR="${VERSITYGW_BIN_DIR:-${OUTPUT_DIR}/bin}"
NICE="${VERSITYGW_NICE:-10}"

util::require_cmd go sha256sum flock

# build::key prints the cache key of the binary the pinned version produces.
build::key() {
	{
		echo "${VERSITYGW_PACKAGE}@${VERSITYGW_VERSION}"
		go env GOVERSION GOOS GOARCH
	} | sha256sum | cut -c1-16
}

# build::up_to_date succeeds when BIN_DIR holds a binary built for key $1.
build::up_to_date() {
	[[ "${VERSITYGW_FORCE:-0}" != "1" ]] &&
		[[ -x "${BIN_DIR}/versitygw" && -f "${BIN_DIR}/.versitygw-stamp" ]] &&
		[[ "$(cat "${BIN_DIR}/.versitygw-stamp")" == "$1" ]]
}

build::versitygw() {
	local gobin="$1"
	util::log "building versitygw ${VERSITYGW_VERSION} ..."
	# Outside any module (GOWORK=off, GOFLAGS cleared) so that the repository's go.mod plays no part; the pure Go
	# build (CGO_ENABLED=0) needs no C toolchain and gives a static binary.
	(cd "${BUILD_TMP}" && GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN="${gobin}" nice -n "${NICE}" \
		go install -trimpath -ldflags "-s -w -X main.Version=${VERSITYGW_VERSION}" \
		"${VERSITYGW_PACKAGE}@${VERSITYGW_VERSION}")
}

# BUILD_TMP is the scratch directory of a build in progress, removed on exit.
BUILD_TMP=""
trap 'if [[ -n "${BUILD_TMP}" ]]; then rm -rf "${BUILD_TMP}"; fi' EXIT

main() {
	local key start
	mkdir -p "${BIN_DIR}"
	# Serialise concurrent builds (several e2e runs or local-up started together) on one lock.
	exec 9>"${BIN_DIR}/.versitygw-build.lock"
	flock 9

	key="$(build::key)"
	if build::up_to_date "${key}"; then
		util::log "versitygw ${VERSITYGW_VERSION} is up to date in ${BIN_DIR} (key ${key})"
		return 0
	fi

	if [[ -n "${VERSITYGW_CACHE_DIR:-}" && -x "${VERSITYGW_CACHE_DIR}/${key}/versitygw" ]]; then
		util::log "copying versitygw from cache ${VERSITYGW_CACHE_DIR}/${key}"
		cp "${VERSITYGW_CACHE_DIR}/${key}/versitygw" "${BIN_DIR}/.versitygw.new"
		mv -f "${BIN_DIR}/.versitygw.new" "${BIN_DIR}/versitygw"
	else
		start=$(date +%s)
		BUILD_TMP="$(mktemp -d "${BIN_DIR}/.build-versitygw.XXXXXX")"
		build::versitygw "${BUILD_TMP}"
		mv -f "${BUILD_TMP}/versitygw" "${BIN_DIR}/versitygw"
		util::log "built versitygw ${VERSITYGW_VERSION} in $(( $(date +%s) - start ))s"
		if [[ -n "${VERSITYGW_CACHE_DIR:-}" ]]; then
			mkdir -p "${VERSITYGW_CACHE_DIR}/${key}"
			cp "${BIN_DIR}/versitygw" "${VERSITYGW_CACHE_DIR}/${key}/"
			util::log "stored versitygw in cache ${VERSITYGW_CACHE_DIR}/${key}"
		fi
	fi
	echo "${key}" >"${BIN_DIR}/.versitygw-stamp"
	util::log "versitygw is in ${BIN_DIR}: $("${BIN_DIR}/versitygw" --version 2>&1 | head -n 1)"
}

main "$@"
