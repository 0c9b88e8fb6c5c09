#!/usr/bin/env bash
# Fails when a staging module imports the root module, or when the ScyllaDB Manager client imports Kubernetes.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

ret=0
for dir in "${STAGING_DIR}"/*/; do
	mod="$(basename "${dir}")"
	[[ -f "${dir}/go.mod" ]] || continue
	deps="$(cd "${dir}" && go list -deps -test ./... 2>/dev/null || true)"
	if grep -q '^github.com/scyllakube/scylla-operator' <<<"${deps}"; then
		echo "staging module ${mod} imports the root module github.com/scyllakube/scylla-operator:" >&2
		grep '^github.com/scyllakube/scylla-operator' <<<"${deps}" | sed 's/^/  /' >&2
		ret=1
	fi
	if [[ "${mod}" == "managerclient" ]] && grep -q '^k8s.io/' <<<"${deps}"; then
		echo "staging module managerclient must not depend on Kubernetes, but imports:" >&2
		grep '^k8s.io/' <<<"${deps}" | sed 's/^/  /' >&2
		ret=1
	fi
done
exit "${ret}"
