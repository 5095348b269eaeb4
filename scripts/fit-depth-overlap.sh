#!/usr/bin/env bash
# Fit the depth term δ (models.DepthOverlapA100, the telemetry combination's
# term for GPUs with more than 5 jobs) on one testbed trace's runs and report
# it on the other (docs/crowding.md, "A depth term").
#
# For each candidate δ the embedded A100 model is copied with
# telemetry.depth_overlap set to it, run as a user GPU type (--server
# TYPE.yaml:3), and `aegis measured --dcgm` compares the four AEGIS runs of
# Philly and of Saturn (per seed set) with the testbed's: per run, the max
# jobs at once, the failed attempts and the DCGM mean |error| (as
# scripts/fit-steady-saturation.sh). Output: CSV on stdout,
# delta,seeds,trace,run,peak_measured,peak_ours,failed_measured,failed_ours,dcgm_error
# (ours = the mean over the seeds). The fit: per trace, figures averaged over
# the seed sets, loss = mean over the runs of |peak error|/2 and
# |failed error|/2, plus (DCGM error − δ = 0's) / 0.01; the least loss
# (models.FitDepthOverlap). models/data/depth_overlap_a100.csv, which the
# bootstrap refits of δ resample (calibration.BootstrapDepthOverlap), is this
# output for the defaults: scripts/fit-depth-overlap.sh > that file.
#
# Settings (environment): AEGIS_BIN (default bin/aegis), AEGIS_SHARED
# (default ../shared), DELTA (candidates, default "0 0.05 0.1 0.2 0.3 0.4
# 0.5 0.75 1 1.5"), SEEDS (seed sets, default "1-5 6-10"). About 2 s of CPU
# per run and seed set: 160 runs for the defaults.
set -euo pipefail
. "$(dirname "$0")/testbed.sh"
labels="aegis_magm_thresholded aegis_magm_no_thresholds aegis_lug_thresholded aegis_lug_no_thresholds"
echo "delta,seeds,trace,run,peak_measured,peak_ours,failed_measured,failed_ours,dcgm_error"
for d in ${DELTA:-0 0.05 0.1 0.2 0.3 0.4 0.5 0.75 1 1.5}; do
	user_gpu depth_overlap "$d"
	for s in ${SEEDS:-1-5 6-10}; do
		for tr in philly saturn; do
			for l in $labels; do
				rm -rf "$tmp/out"
				"$bin" measured "$runs/$tr/job_metrics__$l.csv" --trace "$tr" --server "$tmp/gpu.yaml:3" --seeds "$s" \
					--dcgm "$runs/dcgm_run_distributions.csv" --out "$tmp/out" > "$tmp/report"
				e=$(dcgm_error "$tr $l" < "$tmp/report")
				awk -F, -v pre="$d,$s,$tr,$l" -v e="$e" '
					$1 == "max_running" { pm = $2; po = $3 }
					$1 == "failed_attempts" { fm = $2; fo = $3 }
					END { printf "%s,%s,%s,%s,%s,%s\n", pre, pm, po, fm, fo, e }' "$tmp/out/summary.csv"
			done
		done
	done
done
