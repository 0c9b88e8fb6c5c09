#!/usr/bin/env bash
# Fails when the generated deepcopy functions or client code are not what hack/update-codegen.sh produces.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/verify.sh"

verify::generated hack/update-codegen.sh \
	staging/src/github.com/scyllakube/api \
	staging/src/github.com/scyllakube/client
