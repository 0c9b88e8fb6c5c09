#!/usr/bin/env bash
# verify::generated runs an update script in a clean copy of the tree and fails when any of the given paths differ.
# Usage: verify::generated <update-script relative to the repo root> <path>...
function verify::generated() {
	local update_script="$1"
	shift
	local tmp
	tmp="$(mktemp -d)"
	# shellcheck disable=SC2064
	trap "rm -rf '${tmp}'" RETURN

	# A clean copy: tracked and untracked-but-not-ignored files, never _output or .git.
	(cd "${REPO_ROOT}" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c '[ -e "{}" ] && echo "{}"' ) \
		| (cd "${REPO_ROOT}" && tar --no-recursion -cf - -T -) | tar -xf - -C "${tmp}"
	(cd "${tmp}" && OUTPUT_DIR="${OUTPUT_DIR}" "./${update_script}" >/dev/null)

	local ret=0
	for p in "$@"; do
		if ! diff -Naupr "${REPO_ROOT}/${p}" "${tmp}/${p}"; then
			ret=1
		fi
	done
	if [[ "${ret}" -ne 0 ]]; then
		echo "Generated files are stale: run ${update_script} and commit the result." >&2
		return 1
	fi
}
