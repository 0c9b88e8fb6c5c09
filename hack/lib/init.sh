#!/usr/bin/env bash
# Common settings for the scripts in hack/. Source it; it sets REPO_ROOT and OUTPUT_DIR.
set -o errexit
set -o nounset
set -o pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
OUTPUT_DIR="${OUTPUT_DIR:-${REPO_ROOT}/_output}"
export REPO_ROOT OUTPUT_DIR

STAGING_DIR="${REPO_ROOT}/staging/src/github.com/scyllakube"
export STAGING_DIR
