#!/usr/bin/env bash
# Fails when deploy/operator/ or deploy/manager/ is not what the chart renders (hack/update-deploy.sh), when helm lint
# finds a problem with the chart, or when the chart accepts values it should refuse.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/verify.sh"

CHART_DIR="${REPO_ROOT}/deploy/helm/scylla-operator"
HELM="${OUTPUT_DIR}/bin/helm"

"${REPO_ROOT}/hack/build-helm.sh"

ret=0
verify::generated hack/update-deploy.sh deploy/operator deploy/manager deploy/helm/scylla-operator/crds || ret=1

# A template whose whitespace control is off leaves trailing blanks in the rendered manifests.
if grep -rnE '[[:space:]]+$' "${REPO_ROOT}/deploy/operator" "${REPO_ROOT}/deploy/manager"; then
	echo "the rendered manifests above end lines with blanks: fix the whitespace control of their templates" >&2
	ret=1
fi

# Every program toggled off in turn, and a different namespace, still lint.
for set in "" "operator.enabled=false" "webhook.enabled=false" "managerController.enabled=false" \
	"scyllaDBManager.enabled=false,managerController.scyllaDBManagerURL=http://manager.example.svc/api/v1" \
	"createNamespaces=false" "namespace=ops,managerController.namespace=ops" \
	"operator.replicas=1,webhook.replicas=1,managerController.replicas=1" "image.pullPolicy=IfNotPresent"; do
	if ! "${HELM}" lint --strict "${CHART_DIR}" ${set:+--set "${set}"} >/dev/null; then
		echo "helm lint fails with --set '${set}':" >&2
		"${HELM}" lint --strict "${CHART_DIR}" ${set:+--set "${set}"} >&2 || true
		ret=1
	fi
done

# Values the chart must refuse, each with the message that says why.
while IFS='|' read -r set want; do
	[[ -z "${set}" ]] && continue
	if out="$("${HELM}" template scylla-operator "${CHART_DIR}" --set "${set}" 2>&1 >/dev/null)"; then
		echo "the chart accepts --set '${set}'; want an error containing: ${want}" >&2
		ret=1
	elif [[ "${out}" != *"${want}"* ]]; then
		echo "the chart refuses --set '${set}' with:" >&2
		echo "${out}" >&2
		echo "want an error containing: ${want}" >&2
		ret=1
	fi
done <<'CASES'
operator.replicas=0|at '/operator/replicas': minimum: got 0, want 1
webhook.replicas=0|at '/webhook/replicas': minimum: got 0, want 1
managerController.replicas=-1|at '/managerController/replicas': minimum: got -1, want 1
image.pullPolicy=Sometimes|at '/image/pullPolicy': value must be one of
image.tag=a:b|at '/image/tag': 'a:b' does not match pattern
image.repository=|at '/image/repository': minLength
namespace=Bad_NS|at '/namespace': 'Bad_NS' does not match pattern
managerController.namespace=-x|at '/managerController/namespace': '-x' does not match pattern
webhok.enabled=false|additional properties 'webhok' not allowed
operator.resources.limits=null|at '/operator/resources': missing property 'limits'
webhook.resources.requests.cpu=lots|at '/webhook/resources/requests/cpu': 'lots' does not match pattern
managerController.scyllaDBManagerURL=ftp://manager|at '/managerController/scyllaDBManagerURL': 'ftp://manager' does not match pattern
scyllaDBManager.enabled=false|managerController.scyllaDBManagerURL must name the ScyllaDB Manager API when scyllaDBManager.enabled is false
CASES

# What values change, each as the number of rendered lines matching an extended regular expression
# (<--set>@<regular expression>@<count>).
while IFS='@' read -r set pattern want; do
	[[ -z "${set}" ]] && continue
	got="$("${HELM}" template scylla-operator "${CHART_DIR}" --set "${set}" | grep -cE -e "${pattern}" || true)"
	if [[ "${got}" != "${want}" ]]; then
		echo "with --set '${set}', ${got} rendered lines match '${pattern}', want ${want}" >&2
		ret=1
	fi
done <<'CASES'
image.tag=v1.2.3@image: docker.io/scyllakube/scylla-operator:v1.2.3$@3
image.tag=v1.2.3@value: docker.io/scyllakube/scylla-operator:v1.2.3$@1
image.pullPolicy=IfNotPresent@^        imagePullPolicy: IfNotPresent$@3
webhook.enabled=false@scylla-operator-webhook|kind: ValidatingWebhookConfiguration@0
operator.enabled=false@serviceAccountName: scylla-operator$|name: scylla-operator-(member|remote|leader-election)$@0
managerController.enabled=false@scylla-manager-controller@0
scyllaDBManager.enabled=false,managerController.scyllaDBManagerURL=https://manager.example:8443/api/v1@^kind: (ScyllaCluster|ConfigMap)$@0
scyllaDBManager.enabled=false,managerController.scyllaDBManagerURL=https://manager.example:8443/api/v1@--scylladb-manager-url=https://manager.example:8443/api/v1$@1
createNamespaces=false@^kind: Namespace$@0
namespace=ops@namespace: scylla-operator$@0
namespace=ops@^  namespace: ops$@15
managerController.namespace=mgr@scylla-manager-cluster-client.mgr.svc$@1
operator.replicas=1,webhook.replicas=1,managerController.replicas=1@^kind: PodDisruptionBudget$@0
webhook.replicas=3@^  replicas: 3$@1
webhook.resources.limits.memory=1Gi@^            memory: 1Gi$@1
CASES

if [[ "${ret}" -ne 0 ]]; then
	echo "deploy/ or the chart ${CHART_DIR#"${REPO_ROOT}"/} is wrong: fix the chart, run hack/update-deploy.sh and commit the result." >&2
fi
exit "${ret}"
