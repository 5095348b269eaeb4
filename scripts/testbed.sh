# Sourced by the scripts that replay the testbed's own runs
# (fit-steady-saturation.sh, fit-depth-overlap.sh, failed-attempts.sh,
# head-waits.sh, gpu-energy-spread.sh):
# the aegis binary, the testbed runs' folder, a scratch folder removed on
# exit, and a user GPU type whose interference model differs from the
# A100's in one value.
#
# Settings (environment): AEGIS_BIN (default bin/aegis), AEGIS_SHARED (the
# shared data folder, default ../shared).
bin=${AEGIS_BIN:-bin/aegis}
shared=${AEGIS_SHARED:-../shared}
runs=$shared/calibration/aegis/testbed_runs
model=models/data/interference_a100.yaml
[ -x "$bin" ] || { echo "no aegis binary at $bin: make build, or set AEGIS_BIN" >&2; exit 1; }
[ -d "$runs" ] || { echo "no testbed runs at $runs: set AEGIS_SHARED" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# user_gpu KEY VALUE writes $tmp/gpu.yaml: an A100-40GB whose model file
# ($tmp/model.yaml) is the A100's with telemetry.KEY set to VALUE.
user_gpu() {
	grep -q "^  $1: " "$model" || { echo "$model has no telemetry.$1 line" >&2; exit 1; }
	sed "s/^  $1: .*/  $1: $2/" "$model" > "$tmp/model.yaml"
	printf 'name: a100-%s-%s\nmemory_mib: 40960\npressure: true\ninterference: model.yaml\n' "${1//_/-}" "$2" > "$tmp/gpu.yaml"
}

# dcgm_error WHAT reads aegis measured's report of WHAT on stdin and prints
# its mean DCGM error (it fails when the report has none).
dcgm_error() {
	local e
	e=$(sed -n 's/^Mean |ours − measured| .*: \([0-9.]*\)\.$/\1/p')
	[ -n "$e" ] || { echo "no DCGM error in aegis measured's report ($1)" >&2; exit 1; }
	echo "$e"
}
