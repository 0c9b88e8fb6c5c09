#!/usr/bin/env bash
# The project's Go modules that are built and tested: the root module and each staging module.
# hack/kcp is a build wrapper for the control plane, not part of the project's code, and is left out.
function modules::list() {
	echo "${REPO_ROOT}"
	local dir
	for dir in "${STAGING_DIR}"/*/; do
		[[ -f "${dir}/go.mod" ]] && echo "${dir%/}"
	done
}
