#!/usr/bin/env bash
# gobin::install builds a Go program from the module proxy with go install and keeps it in a bin directory while a
# stamp keyed on the package, its version and the Go version matches, so only the first build on a machine pays.
# Source util.sh first.
#
# Usage: gobin::install <name> <package> <version> <env prefix> [ldflags]
# It reads <prefix>_BIN_DIR (default ${OUTPUT_DIR}/bin), <prefix>_CACHE_DIR (optional directory holding built
# binaries by stamp key, for CI caches; read before building and written after), <prefix>_FORCE=1 (rebuild even when
# the stamp matches) and <prefix>_NICE (niceness of the compilers, default 10, so that other work is not starved).
gobin::install() (
	set -euo pipefail
	local name="$1" package="$2" version="$3" prefix="$4" ldflags="${5:-}"
	local bin_dir_var="${prefix}_BIN_DIR" cache_dir_var="${prefix}_CACHE_DIR" force_var="${prefix}_FORCE" nice_var="${prefix}_NICE"
	local bin_dir="${!bin_dir_var:-${OUTPUT_DIR}/bin}" cache_dir="${!cache_dir_var:-}"
	local force="${!force_var:-0}" nice="${!nice_var:-10}"
	local key start build_tmp=""

	util::require_cmd go sha256sum flock
	mkdir -p "${bin_dir}"
	# Serialise concurrent builds (several scripts started together) on one lock.
	exec 9>"${bin_dir}/.${name}-build.lock"
	flock 9

	key="$({
		echo "${package}@${version}"
		go env GOVERSION GOOS GOARCH
	} | sha256sum | cut -c1-16)"
	if [[ "${force}" != "1" && -x "${bin_dir}/${name}" && -f "${bin_dir}/.${name}-stamp" &&
		"$(cat "${bin_dir}/.${name}-stamp")" == "${key}" ]]; then
		util::log "${name} ${version} is up to date in ${bin_dir} (key ${key})"
		return 0
	fi

	if [[ -n "${cache_dir}" && -x "${cache_dir}/${key}/${name}" ]]; then
		util::log "copying ${name} from cache ${cache_dir}/${key}"
		cp "${cache_dir}/${key}/${name}" "${bin_dir}/.${name}.new"
		mv -f "${bin_dir}/.${name}.new" "${bin_dir}/${name}"
	else
		start=$(date +%s)
		build_tmp="$(mktemp -d "${bin_dir}/.build-${name}.XXXXXX")"
		# shellcheck disable=SC2064
		trap "rm -rf '${build_tmp}'" EXIT
		util::log "building ${name} ${version} ..."
		# Outside any module (GOWORK=off, GOFLAGS cleared) so that the repository's go.mod plays no part; the pure Go
		# build (CGO_ENABLED=0) needs no C toolchain and gives a static binary.
		(cd "${build_tmp}" && GOWORK=off GOFLAGS= CGO_ENABLED=0 GOBIN="${build_tmp}" nice -n "${nice}" \
			go install -trimpath -ldflags "-s -w ${ldflags}" "${package}@${version}")
		mv -f "${build_tmp}/${name}" "${bin_dir}/${name}"
		util::log "built ${name} ${version} in $(( $(date +%s) - start ))s"
		if [[ -n "${cache_dir}" ]]; then
			mkdir -p "${cache_dir}/${key}"
			cp "${bin_dir}/${name}" "${cache_dir}/${key}/"
			util::log "stored ${name} in cache ${cache_dir}/${key}"
		fi
	fi
	echo "${key}" >"${bin_dir}/.${name}-stamp"
)
