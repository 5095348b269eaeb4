#!/usr/bin/env bash
# make gpu-check: run a few tiny real PyTorch training jobs through
# `aegis exec` on one NVIDIA GPU under the AEGIS policy, and print the NVML
# samples, the scheduling decisions, the OOM classification and the recovery.
#
# Needs: Linux, an NVIDIA GPU with its driver, python3 with torch (CUDA), and
# either Go (to build bin/aegis with cgo) or a bin/aegis built that way
# elsewhere (make gpu-build). Planned to take about 3 minutes (not yet measured:
# written without a GPU); aborts after 8.
#
# Settings (environment):
#   AEGIS_GPU        the GPU index to use (default 0)
#   AEGIS_TELEMETRY  auto|nvml|dcgm|util (default auto)
#   GPU_CHECK_DIR    where to write the run (default: a new temp directory)
#   AEGIS_BIN        a prebuilt aegis binary to use instead of building one
#
# The four jobs (scripts/gpu-check/{trace.csv,workloads.yaml,train.py}, random data):
#   big-a  t=0s  holds 55% of the GPU's memory, light compute, 40 s
#   big-b  t=2s  the same: fits alone, not beside big-a -> OOM when collocated,
#                then recovered by the policy (exclusive retry)
#   heavy  t=4s  a compute-heavy MLP, 25 s
#   light  t=6s  a small MLP, 20 s
set -euo pipefail

start=$(date +%s)
repo=$(cd "$(dirname "$0")/.." && pwd)
gpu=${AEGIS_GPU:-0}
telemetry=${AEGIS_TELEMETRY:-auto}
work=${GPU_CHECK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/aegis-gpu-check.XXXXXX")}
out=$work/run
mkdir -p "$work"

say() { printf '\n== %s (t+%ds)\n' "$*" "$(( $(date +%s) - start ))"; }
die() { printf 'gpu-check: FAIL: %s\n' "$*" >&2; exit 1; }

say "preflight"
command -v python3 >/dev/null || die "python3 not on PATH"
python3 - <<'PY' || die "python3 cannot use torch with CUDA (pip install torch; check the driver)"
import torch, sys
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.device_count()} GPU(s) visible")
sys.exit(0 if torch.cuda.is_available() else 1)
PY
if command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu --format=csv || true
fi

say "build"
if [ -n "${AEGIS_BIN:-}" ]; then
	aegis=$AEGIS_BIN
elif command -v go >/dev/null; then
	(cd "$repo" && make gpu-build) || die "make gpu-build failed (needs a C compiler)"
	aegis=$repo/bin/aegis
else
	aegis=$repo/bin/aegis
	[ -x "$aegis" ] || die "no Go and no $aegis: build it with 'make gpu-build' on a machine with Go and copy it here"
fi
"$aegis" --version 2>/dev/null || true
"$aegis" exec --help >/dev/null 2>&1 || die "$aegis has no exec command"

say "telemetry: source, GPUs, three NVML samples"
"$aegis" gpus --telemetry "$telemetry" --gpus "$gpu" --samples 3 | tee "$work/gpus.txt" || die "aegis gpus failed: no GPU telemetry"
sets=(--set hold=10s --set window=5)
if grep -q '^telemetry [a-z]*: using nvml:' "$work/gpus.txt"; then
	echo "no pressure signals on this GPU (see above): AEGIS runs with its utilization filter"
	sets+=(--set filter=util:70)
fi

say "workloads and trace"
sed "s|@TRAIN@|$repo/scripts/gpu-check/train.py|g" "$repo/scripts/gpu-check/workloads.yaml" >"$work/workloads.yaml"
cp "$repo/scripts/gpu-check/trace.csv" "$work/trace.csv"
cat "$work/workloads.yaml" "$work/trace.csv"
gputype=()
if grep -q 'H200' "$work/gpus.txt"; then
	gputype=(--gpu-type h200-141gb) # the catalog whose profiles the policy sees
fi

say "aegis exec (policy aegis, GPU $gpu, telemetry $telemetry)"
# An independent 1 Hz NVML sampler beside the executor, for the printout.
"$aegis" gpus --telemetry "$telemetry" --gpus "$gpu" --samples 480 >"$work/samples.txt" 2>&1 &
sampler=$!
trap 'kill "$sampler" 2>/dev/null || true' EXIT
set +e
timeout --signal=INT --kill-after=30 420 \
	"$aegis" exec --trace "$work/trace.csv" --workloads "$work/workloads.yaml" --policy aegis \
	--gpus "$gpu" --telemetry "$telemetry" ${gputype[@]+"${gputype[@]}"} "${sets[@]}" --out "$out" 2>&1 | tee "$work/exec.txt"
rc=${PIPESTATUS[0]}
set -e
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
[ "$rc" -eq 0 ] || echo "aegis exec exited with status $rc"

say "report"
report=0
python3 "$repo/scripts/gpu-check/report.py" --run "$out" --samples "$work/samples.txt" || report=$?
say "done: everything is under $work"
[ "$rc" -eq 0 ] || die "aegis exec exited with status $rc"
exit "$report"
