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

# modules::list_all prints the directory of every go.mod in the repository, build wrappers included; only
# _output (built and downloaded things) is left out.
function modules::list_all() {
	(cd "${REPO_ROOT}" && git ls-files --cached --others --exclude-standard -- 'go.mod' '**/go.mod') |
		while read -r f; do
			[[ -f "${REPO_ROOT}/${f}" ]] && dirname "${REPO_ROOT}/${f}"
		done | sed 's#/\.$##' | sort
}
