#!/usr/bin/env bash
# Builds versitygw, the S3-compatible server that e2e tests and local-up run on loopback with its POSIX backend,
# from the Go module proxy (github.com/versity/versitygw/cmd/versitygw at VERSITYGW_VERSION). The binary goes to
# _output/bin/versitygw and is reused while a stamp keyed on the version and the Go version matches, so only the
# first build on a machine pays (hack/lib/gobin.sh).
#
# Environment:
#   VERSITYGW_CACHE_DIR   optional directory holding built binaries by stamp key (for CI caches); read before
#                         building and written after.
#   VERSITYGW_BIN_DIR     output directory (default _output/bin).
#   VERSITYGW_FORCE=1     rebuild even when the stamp matches.
#   VERSITYGW_NICE        niceness for the compilers (default 10) so that other work on the machine is not starved.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"
source "${REPO_ROOT}/hack/lib/gobin.sh"

VERSITYGW_VERSION="v1.8.0"

gobin::install versitygw github.com/versity/versitygw/cmd/versitygw "${VERSITYGW_VERSION}" VERSITYGW \
	"-X main.Version=${VERSITYGW_VERSION}"
