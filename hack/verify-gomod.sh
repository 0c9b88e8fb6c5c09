#!/usr/bin/env bash
# Fails, naming the module, when go mod tidy would change the go.mod or go.sum of any Go module of the repository.
# It needs the module cache or the module proxy, nothing else, and writes nothing into the tree.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/modules.sh"

ret=0
while read -r mod; do
	name="${mod#"${REPO_ROOT}"}"
	name="${name#/}"
	if ! (cd "${mod}" && GOWORK=off go mod tidy -diff); then
		echo "Module ${name:-.} is not tidy: run hack/update-gomod.sh and commit the result." >&2
		ret=1
	fi
done < <(modules::list_all)
exit "${ret}"
