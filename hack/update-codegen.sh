#!/usr/bin/env bash
# Generates deepcopy functions for the API module and the clientset, listers, informers and apply configurations
# of the client module with k8s.io/code-generator's kube_codegen.sh, at the version pinned by go.mod.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

cd "${REPO_ROOT}"
CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
# kube_codegen.sh installs the generators into GOBIN; keep them out of the user's GOPATH.
export GOBIN="${OUTPUT_DIR}/tools/bin"
mkdir -p "${GOBIN}"
# shellcheck source=/dev/null
source "${CODEGEN_PKG}/kube_codegen.sh"

kube::codegen::gen_helpers \
	--boilerplate "${REPO_ROOT}/hack/boilerplate.go.txt" \
	"${STAGING_DIR}/api"

# The generators resolve input directories to import paths from the working directory's module, so the client is
# generated from inside the API module.
cd "${STAGING_DIR}/api"
kube::codegen::gen_client \
	--with-watch \
	--with-applyconfig \
	--output-dir "${STAGING_DIR}/client/scylla" \
	--output-pkg "github.com/scyllakube/client/scylla" \
	--boilerplate "${REPO_ROOT}/hack/boilerplate.go.txt" \
	"${STAGING_DIR}/api"
