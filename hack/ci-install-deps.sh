#!/usr/bin/env bash
# Installs the system packages the build and tests need (git, make), when they are missing. Certificates for the
# local control plane are generated in Go, so nothing else is needed. Safe to run repeatedly.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"

missing=()
command -v git >/dev/null 2>&1 || missing+=(git)
command -v make >/dev/null 2>&1 || missing+=(make)

if [[ "${#missing[@]}" -gt 0 ]]; then
	echo "Installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
go version
