#!/usr/bin/env bash
# Fails when a Go file of the project is not gofmt-formatted.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

cd "${REPO_ROOT}"
unformatted="$(git ls-files -z --cached --others --exclude-standard '*.go' | xargs -0 -r gofmt -l)"
if [[ -n "${unformatted}" ]]; then
	echo "These files are not gofmt-formatted; run 'gofmt -w' on them:" >&2
	echo "${unformatted}" >&2
	exit 1
fi
