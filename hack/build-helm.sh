#!/usr/bin/env bash
# Builds helm, which renders and lints the chart in deploy/helm/scylla-operator, from the Go module proxy
# (helm.sh/helm/v3/cmd/helm at HELM_VERSION) into _output/bin/helm, reused while its stamp matches (hack/lib/gobin.sh).
#
# Environment:
#   HELM_CACHE_DIR   optional directory holding built binaries by stamp key (for CI caches); read before building and
#                    written after.
#   HELM_BIN_DIR     output directory (default _output/bin).
#   HELM_FORCE=1     rebuild even when the stamp matches.
#   HELM_NICE        niceness for the compilers (default 10) so that other work on the machine is not starved.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib/util.sh"
source "${REPO_ROOT}/hack/lib/gobin.sh"

HELM_VERSION="v3.22.0"

# The version is stamped the way helm's own Makefile does, so that helm version reports it.
gobin::install helm helm.sh/helm/v3/cmd/helm "${HELM_VERSION}" HELM \
	"-X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}"
