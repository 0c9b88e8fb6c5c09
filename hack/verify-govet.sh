#!/usr/bin/env bash
# Runs go vet over every module of the project.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/modules.sh"

ret=0
while read -r mod; do
	(cd "${mod}" && go vet -tags e2e ./...) || ret=1
done < <(modules::list)
exit "${ret}"
