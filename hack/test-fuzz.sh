#!/usr/bin/env bash
# Runs every fuzz test (func FuzzX(f *testing.F)) of every module for FUZZ_TIME each (default 20s); a fuzz test that
# finds a failing input fails the run, and 'go test' writes that input under the package's testdata/fuzz for the next
# run to replay. Extra arguments go to 'go test'.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/modules.sh"

FUZZ_TIME="${FUZZ_TIME:-20s}"
# Minimizing each new interesting input may take up to a minute by default, leaving no time to fuzz.
FUZZ_MINIMIZE_TIME="${FUZZ_MINIMIZE_TIME:-5s}"

ret=0
ran=0
while read -r mod; do
	while read -r file; do
		[[ -n "${file}" ]] || continue
		dir="$(dirname "${file}")"
		while read -r name; do
			echo "fuzzing ${name} in ${mod}/${dir} for ${FUZZ_TIME}"
			(cd "${mod}" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "${FUZZ_TIME}" -fuzzminimizetime "${FUZZ_MINIMIZE_TIME}" "$@" "./${dir}") || ret=1
			ran=$((ran + 1))
		done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F) {$/\1/p' "${mod}/${file}")
	done < <(cd "${mod}" && grep -rl --include='*_test.go' --exclude-dir=staging --exclude-dir=_output --exclude-dir=e2e '^func Fuzz' . | sed 's|^\./||' | sort)
done < <(modules::list)
if [[ "${ran}" -eq 0 ]]; then
	echo "no fuzz tests found" >&2
	exit 1
fi
exit "${ret}"
