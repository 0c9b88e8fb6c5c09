#!/usr/bin/env bash
# Fails when deploy/crds/ is not what hack/update-crds.sh produces.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/verify.sh"

verify::generated hack/update-crds.sh deploy/crds
