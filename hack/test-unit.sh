#!/usr/bin/env bash
# Runs the unit tests of every module of the project. Extra arguments go to 'go test'.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/modules.sh"

ret=0
while read -r mod; do
	(cd "${mod}" && go test "$@" ./...) || ret=1
done < <(modules::list)
exit "${ret}"
