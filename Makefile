# scylla-operator build, test and code generation entry points. Run 'make help' for the list.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -o errexit -o nounset -o pipefail -c
.DEFAULT_GOAL := build

OUTPUT_DIR ?= _output
GIT_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-unknown)
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION_PKG := github.com/scyllakube/scylla-operator/pkg/version
LDFLAGS := -X $(VERSION_PKG).gitVersion=$(GIT_VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)
GO_TEST_FLAGS ?=
E2E_TIMEOUT ?= 45m
FUZZ_TIME ?= 20s

.PHONY: help
help: ## Show this help.
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-22s %s\n", $$1, $$2}'

.PHONY: build
build: ## Build the scylla-operator binary into _output/bin.
	go build -ldflags '$(LDFLAGS)' -o $(OUTPUT_DIR)/bin/scylla-operator ./cmd/scylla-operator

.PHONY: test
test: test-unit test-fuzz test-e2e ## Run every test: unit tests, fuzz tests, then e2e tests on a local control plane.

.PHONY: test-unit
test-unit: ## Run the unit tests of every module.
	hack/test-unit.sh $(GO_TEST_FLAGS)

.PHONY: test-fuzz
test-fuzz: ## Run every fuzz test for FUZZ_TIME (default 20s) each; an input that panics fails.
	FUZZ_TIME=$(FUZZ_TIME) hack/test-fuzz.sh $(GO_TEST_FLAGS)

.PHONY: test-e2e
test-e2e: ## Build the local control plane (cached) and run the e2e tests against it.
	hack/build-control-plane.sh
	go test -tags e2e -timeout $(E2E_TIMEOUT) -count=1 $(GO_TEST_FLAGS) ./e2e/...

.PHONY: bench
bench: ## Run the benchmarks of every module.
	hack/test-unit.sh -run '^$$' -bench . -benchmem $(GO_TEST_FLAGS)

BENCH_SCALE_N ?= 10,100
BENCH_SCALE_FLAGS ?=

.PHONY: bench-scale
bench-scale: ## Measure convergence, API and ScyllaDB Manager requests, RSS and CPU for BENCH_SCALE_N ScyllaClusters (not part of test).
	hack/build-control-plane.sh
	go run ./e2e/cmd/bench-scale --n=$(BENCH_SCALE_N) --out=$(OUTPUT_DIR)/bench $(BENCH_SCALE_FLAGS)

.PHONY: update
update: update-gomod update-codegen update-crds update-deploy ## Regenerate all generated code and tidy every Go module.

.PHONY: update-gomod
update-gomod: ## Run go mod tidy in every Go module.
	hack/update-gomod.sh

.PHONY: update-codegen
update-codegen: ## Regenerate deepcopy functions and the client module.
	hack/update-codegen.sh

.PHONY: update-crds
update-crds: ## Regenerate the CRDs in deploy/crds.
	hack/update-crds.sh

.PHONY: update-deploy
update-deploy: ## Render the Helm chart into deploy/operator and deploy/manager.
	hack/update-deploy.sh

.PHONY: verify
verify: verify-gofmt verify-govet verify-staging-imports verify-gomod verify-codegen verify-crds verify-deploy ## Fail on stale generated code, formatting or vet findings.

.PHONY: verify-gofmt verify-govet verify-staging-imports verify-gomod verify-codegen verify-crds verify-deploy
verify-gofmt:
	hack/verify-gofmt.sh
verify-govet:
	hack/verify-govet.sh
verify-staging-imports:
	hack/verify-staging-imports.sh
verify-gomod:
	hack/verify-gomod.sh
verify-codegen:
	hack/verify-codegen.sh
verify-crds:
	hack/verify-crds.sh
verify-deploy:
	hack/verify-deploy.sh

.PHONY: local-up
local-up: ## Start a local control plane with the operator, the manager-controller and example ScyllaClusters.
	hack/local-up.sh

.PHONY: local-down
local-down: ## Stop what local-up started.
	hack/local-down.sh
