#!/usr/bin/env bash
# Runs every fuzz test (func FuzzX(f *testing.F)) of every module for FUZZ_TIME each (default 20s); a fuzz test that
# finds a failing input fails the run, and 'go test' writes that input under the package's testdata/fuzz for the next
# run to replay. Extra arguments go to 'go test'.
source "$(dirname "${BASH_SOURCE[0]}")/lib/init.sh"
source "${REPO_ROOT}/hack/lib/modules.sh"

FUZZ_TIME="${FUZZ_TIME:-20s}"
# Minimizing each new interesting input may take up to a minute by default, leaving no time to fuzz.
FUZZ_MINIMIZE_TIME="${FUZZ_MINIMIZE_TIME:-5s}"

# fuzz_one fuzzes one target. Go's fuzz coordinator can fail a target with a bare "context deadline exceeded" when
# -fuzztime runs out while a worker is mid-call (golang/go#75804, fixed in Go 1.27): no input failed, none was
# written. Such a run is retried once; any other failure, and a second deadline failure, fails.
fuzz_one() {
	local mod="$1" dir="$2" name="$3"
	shift 3
	local log attempt
	log="$(mktemp)"
	for attempt in 1 2; do
		if (cd "${mod}" && go test -run '^$' -fuzz "^${name}\$" -fuzztime "${FUZZ_TIME}" -fuzzminimizetime "${FUZZ_MINIMIZE_TIME}" "$@" "./${dir}") 2>&1 | tee "${log}"; [[ "${PIPESTATUS[0]}" -eq 0 ]]; then
			rm -f "${log}"
			return 0
		fi
		if [[ "${attempt}" -eq 2 ]] || ! grep -q '^    context deadline exceeded$' "${log}" ||
			grep -q -e 'Failing input written to' -e '^panic:' -e '_test\.go:[0-9]*:' "${log}"; then
			break
		fi
		echo "${name}: the fuzz coordinator's deadline race (golang/go#75804), no failing input; fuzzing it once more"
	done
	rm -f "${log}"
	return 1
}

ret=0
ran=0
while read -r mod; do
	while read -r file; do
		[[ -n "${file}" ]] || continue
		dir="$(dirname "${file}")"
		while read -r name; do
			echo "fuzzing ${name} in ${mod}/${dir} for ${FUZZ_TIME}"
			fuzz_one "${mod}" "${dir}" "${name}" "$@" || ret=1
			ran=$((ran + 1))
		done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(f \*testing\.F) {$/\1/p' "${mod}/${file}")
	done < <(cd "${mod}" && grep -rl --include='*_test.go' --exclude-dir=staging --exclude-dir=_output --exclude-dir=e2e '^func Fuzz' . | sed 's|^\./||' | sort)
done < <(modules::list)
if [[ "${ran}" -eq 0 ]]; then
	echo "no fuzz tests found" >&2
	exit 1
fi
exit "${ret}"
