#!/usr/bin/env bash
# Generates one CustomResourceDefinition file per kind into deploy/crds/ with controller-gen, at the version pinned
# by go.mod. hack/update-deploy.sh (run after this by make update) copies them into the Helm chart's crds/ and
# deploy/operator/05-crds.yaml.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

cd "${REPO_ROOT}"
rm -f deploy/crds/*.yaml
go tool controller-gen \
	crd:crdVersions=v1 \
	paths=github.com/scyllakube/api/scylla/... \
	output:crd:dir=deploy/crds

# Keep the CRDs small enough for etcd: drop the descriptions copied from Kubernetes' own types.
go run ./hack/tools/crd-trim-descriptions deploy/crds/*.yaml
