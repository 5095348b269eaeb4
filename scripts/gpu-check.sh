#!/usr/bin/env bash
# make gpu-check: run four tiny real PyTorch training jobs through
# `aegis exec` on one NVIDIA GPU under the AEGIS policy, then check that the
# telemetry says what the GPU did (scripts/gpu-check/report.py prints every
# check with its numbers; any failed check fails the run).
#
# Needs: Linux, an NVIDIA GPU with its driver, nvidia-smi, python3 with torch
# (CUDA), and an aegis binary with NVML in it: AEGIS_BIN, or bin/aegis when it
# has NVML (make gpu-build, here or on another machine, then copy it here),
# or else Go and gcc to build one. It never downloads anything (no network:
# GOPROXY=off, GOTOOLCHAIN=local); when it cannot build it says what is
# missing. About 3 minutes; aborts after 8.
#
# GPU_CHECK_EMULATE=a100-40gb runs the same check without a GPU, PyTorch or
# nvidia-smi: aegis exec --emulate TYPE:1 (every job 10x longer, at
# GPU_CHECK_SPEEDUP, default 50x: the emulator's jobs take as long to start
# as the catalog says); the checks that need the hardware print SKIP, and
# the energy checks take their bounds from the type's power model.
#
# Settings (environment):
#   AEGIS_GPU          the GPU index to use (default 0)
#   AEGIS_TELEMETRY    auto|nvml|dcgm|util (default auto)
#   GPU_CHECK_DIR      where to write the run (default: a new temp directory)
#   AEGIS_BIN          the aegis binary to use
#   GPU_CHECK_EMULATE  a GPU type: emulate one GPU of it instead
#
# The four jobs (scripts/gpu-check/{trace.csv,workloads.yaml,train.py}, random data):
#   heavy  t=5s   a compute-heavy MLP, 25 s: the first 5 s the GPU is idle, then
#                 heavy runs alone (SM activity must read high)
#   big-a  t=10s  holds 55% of the GPU's memory, light compute, 40 s
#   big-b  t=12s  the same: fits alone, not beside big-a -> OOM when AEGIS
#                 collocates it, then recovered by the policy
#   light  t=14s  a small MLP, 20 s
set -euo pipefail

start=$(date +%s)
repo=$(cd "$(dirname "$0")/.." && pwd)
gpu=${AEGIS_GPU:-0}
telemetry=${AEGIS_TELEMETRY:-auto}
emulate=${GPU_CHECK_EMULATE:-}
work=${GPU_CHECK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/aegis-gpu-check.XXXXXX")}
out=$work/run
mkdir -p "$work"

say() { printf '\n== %s (t+%ds)\n' "$*" "$(($(date +%s) - start))"; }
die() {
	printf 'gpu-check: FAIL: %s\n' "$*" >&2
	exit 1
}

# has_nvml BIN: BIN runs and was built with NVML (make gpu-build).
has_nvml() {
	local msg
	msg=$("$1" gpus --samples 0 2>&1) && return 0
	! grep -q "built without NVML" <<<"$msg"
}

# build: make bin/aegis here, offline, or say exactly what is missing.
build() {
	local target=gpu-build missing=()
	[ -n "$emulate" ] && target=build
	if ! command -v go >/dev/null; then
		missing+=("Go (go1.26 or newer on PATH)")
	else
		local want have
		want=$(awk '/^go /{print $2; exit}' "$repo/go.mod")
		have=$(GOTOOLCHAIN=local go env GOVERSION | sed 's/^go//')
		if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n1)" != "$want" ]; then
			missing+=("Go $want or newer (this is go$have, and no toolchain can be downloaded here)")
		fi
	fi
	if [ "$target" = gpu-build ] && ! command -v "${CC:-gcc}" >/dev/null; then
		missing+=("a C compiler (${CC:-gcc}) for cgo")
	fi
	if [ ${#missing[@]} -eq 0 ] && ! (cd "$repo" && GOPROXY=off GOTOOLCHAIN=local GOFLAGS=-mod=mod go list -tags nvml -deps ./cmd/aegis >/dev/null 2>"$work/modules.txt"); then
		missing+=("the Go modules in the module cache ($(go env GOMODCACHE)): $(sed -n 's/^go: downloading //p' "$work/modules.txt" | head -5 | tr '\n' ';')— run 'go mod download' where there is network and copy the cache, or build there")
	fi
	if [ ${#missing[@]} -gt 0 ]; then
		printf 'cannot build aegis here; missing:\n' >&2
		printf '  - %s\n' "${missing[@]}" >&2
		die "no usable aegis binary: build one with 'make $target' on a machine that has these and copy bin/aegis to $repo/bin/ (or set AEGIS_BIN)"
	fi
	(cd "$repo" && GOPROXY=off GOTOOLCHAIN=local make "$target") || die "make $target failed (offline: GOPROXY=off GOTOOLCHAIN=local)"
}

say "preflight"
if [ -z "$emulate" ]; then
	command -v python3 >/dev/null || die "python3 not on PATH"
	command -v nvidia-smi >/dev/null || die "nvidia-smi not on PATH (it is installed with the NVIDIA driver)"
	python3 - <<'PY' || die "python3 cannot use torch with CUDA (pip install torch; check the driver)"
import torch, sys
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s) visible")
sys.exit(0 if torch.cuda.is_available() else 1)
PY
	nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.used,memory.total,utilization.gpu --format=csv -i "$gpu" ||
		die "nvidia-smi cannot read GPU $gpu"
	nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader -i "$gpu" |
		awk -F', ' '{print "name=" $1; print "compute_cap=" $2; print "driver=" $3}' >"$work/gpu.txt"
	# The idle GPU's power now and its board power limit, for the energy check.
	nvidia-smi --query-gpu=power.draw,power.max_limit --format=csv,noheader,nounits -i "$gpu" |
		awk -F', ' '{print "idle_w=" $1; print "board_w=" $2}' >>"$work/gpu.txt" || true
else
	echo "emulated: one $emulate GPU"
	# The energy check's bounds from the type's power model (the emulated
	# counter and power readings come from it): idle and board power.
	pm=$repo/models/data/power_${emulate%%-*}.yaml
	if [ -f "$pm" ]; then
		awk -v f="${pm#"$repo"/}" '/^idle_w:/ {print "idle_w=" $2} /^board_w:/ {print "board_w=" $2} END {print "power_source=the power model " f}' "$pm" >"$work/gpu.txt"
	fi
fi

say "aegis binary"
if [ -n "${AEGIS_BIN:-}" ]; then
	aegis=$AEGIS_BIN
	[ -x "$aegis" ] || die "AEGIS_BIN=$aegis is not an executable file"
elif [ -x "$repo/bin/aegis" ] && { [ -n "$emulate" ] || has_nvml "$repo/bin/aegis"; }; then
	aegis=$repo/bin/aegis
else
	[ -x "$repo/bin/aegis" ] && echo "$repo/bin/aegis has no NVML in it (built with make build): building with make gpu-build"
	build
	aegis=$repo/bin/aegis
fi
"$aegis" --version 2>/dev/null || true
"$aegis" exec --help >/dev/null 2>&1 || die "$aegis has no exec command"
if [ -z "$emulate" ] && ! has_nvml "$aegis"; then
	die "$aegis was built without NVML: build it with make gpu-build"
fi

say "workloads and trace"
sed "s|@TRAIN@|$repo/scripts/gpu-check/train.py|g" "$repo/scripts/gpu-check/workloads.yaml" >"$work/workloads.yaml"
if [ -n "$emulate" ]; then
	# The emulator starts jobs as slowly as the catalog says (a transformer
	# takes up to a minute to show activity): every job runs 10x longer.
	awk -F, -v OFS=, '/^#/ || /^job_id/ {print; next} {$5 = $5 * 10; print}' "$repo/scripts/gpu-check/trace.csv" >"$work/trace.csv"
else
	cp "$repo/scripts/gpu-check/trace.csv" "$work/trace.csv"
	cat "$work/workloads.yaml"
fi
cat "$work/trace.csv"

sets=(--set hold=10s --set window=5)
if [ -n "$emulate" ]; then
	target=(--emulate "$emulate:1" --speedup "${GPU_CHECK_SPEEDUP:-50}")
else
	say "telemetry: source, GPU, three readings"
	"$aegis" gpus --telemetry "$telemetry" --gpus "$gpu" --samples 3 | tee "$work/gpus.txt" || die "aegis gpus failed: no GPU telemetry"
	if grep -q '^telemetry [a-z]*: using nvml:' "$work/gpus.txt"; then
		echo "no pressure signals on this GPU (see above): AEGIS runs with its utilization filter (the source check decides whether that is acceptable)"
		sets+=(--set filter=util:70)
	fi
	target=(--workloads "$work/workloads.yaml" --gpus "$gpu" --telemetry "$telemetry")
	if grep -q 'H200' "$work/gpus.txt"; then
		target+=(--gpu-type h200-141gb) # the catalog whose profiles the policy sees
	fi
fi

say "aegis exec (policy aegis${emulate:+, emulated $emulate})"
smi=
if [ -z "$emulate" ]; then
	# nvidia-smi's own memory readings beside the run, for the memory check.
	smi=$work/nvidia-smi.csv
	nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader,nounits -i "$gpu" -lms 500 >"$smi" &
	sampler=$!
	trap 'kill "$sampler" 2>/dev/null || true' EXIT
fi
set +e
timeout --signal=INT --kill-after=30 420 \
	"$aegis" exec --trace "$work/trace.csv" --policy aegis "${target[@]}" "${sets[@]}" --out "$out" 2>&1 | tee "$work/exec.txt"
rc=${PIPESTATUS[0]}
set -e
if [ -n "$smi" ]; then
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
fi
[ "$rc" -eq 0 ] || echo "aegis exec exited with status $rc"

say "checks"
report=0
python3 "$repo/scripts/gpu-check/report.py" --run "$out" --trace "$work/trace.csv" --exec-log "$work/exec.txt" \
	${emulate:+--emulated "$emulate"} ${smi:+--smi "$smi"} --gpu-info "$work/gpu.txt" || report=$?
say "done: everything is under $work"
[ "$rc" -eq 0 ] || die "aegis exec exited with status $rc"
exit "$report"
