#!/usr/bin/env bash
# Runs go mod tidy in every Go module of the repository (see modules::list_all).
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/modules.sh"

while read -r mod; do
	echo "go mod tidy in ${mod#"${REPO_ROOT}"/}" >&2
	(cd "${mod}" && GOWORK=off go mod tidy)
done < <(modules::list_all)
