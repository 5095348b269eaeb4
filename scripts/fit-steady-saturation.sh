#!/usr/bin/env bash
# Fit the steady saturation u1 (models.SteadySaturationA100, the
# telemetry combination's saturation for jobs past their first 200 s) on one
# testbed trace's runs and report its error on the other (docs/crowding.md).
#
# For each candidate u1 the embedded A100 model is copied with
# telemetry.steady_saturation set to it, run as a user GPU type
# (--server TYPE.yaml:3), and `aegis measured --dcgm` compares the four AEGIS
# runs of Philly and of Saturn (seeds 1-5) with the testbed's DCGM
# distributions: the mean |error| over SMACT, SMOCC and DRAMA x mean, p50,
# p95, averaged over a trace's four runs. The candidate with the least error
# on one trace is that trace's fit; the other trace's error there is the
# held-out error.
#
# Settings (environment): AEGIS_BIN (default bin/aegis), AEGIS_SHARED (the
# shared data folder, default ../shared), U1 (the candidates, default
# "1 1.1 1.2 1.25 1.3 1.4 1.5 2"), PER_RUN (a file: also write each run's
# error there as CSV u1,trace,run,dcgm_error; models/data/steady_saturation_a100.csv,
# which the bootstrap refits of u1 resample, is this file, made with the
# shipped model, δ = 0.2). About 1 s of CPU
# per run and seed set: 64 runs for the default candidates.
set -euo pipefail
. "$(dirname "$0")/testbed.sh"
per=${PER_RUN:-/dev/null}
echo "u1,trace,run,dcgm_error" > "$per"
labels="aegis_magm_thresholded aegis_magm_no_thresholds aegis_lug_thresholded aegis_lug_no_thresholds"
echo "| u1 | DCGM error, philly | DCGM error, saturn |"
echo "|---|---|---|"
for u in ${U1:-1 1.1 1.2 1.25 1.3 1.4 1.5 2}; do
	user_gpu steady_saturation "$u"
	row="| $u |"
	for tr in philly saturn; do
		sum=0
		for l in $labels; do
			e=$("$bin" measured "$runs/$tr/job_metrics__$l.csv" --trace "$tr" --server "$tmp/gpu.yaml:3" --seeds 1-5 \
				--dcgm "$runs/dcgm_run_distributions.csv" | dcgm_error "$tr $l")
			echo "$u,$tr,$l,$e" >> "$per"
			sum=$(awk -v a="$sum" -v b="$e" 'BEGIN { print a + b }')
		done
		row="$row $(awk -v s="$sum" 'BEGIN { printf "%.4f", s / 4 }') |"
	done
	echo "$row"
done | tee "$tmp/table"
awk -F'|' '{ u = $2 + 0; p = $3 + 0; s = $4 + 0
	if (!np || p < bp) { bp = p; bu = u; sp = s; np = 1 }
	if (!ns || s < bs) { bs = s; su = u; ps = p; ns = 1 } }
	END { printf "\nfit on philly: u1 = %g (error %.4f); saturn there %.4f\nfit on saturn: u1 = %g (error %.4f); philly there %.4f\n", bu, bp, sp, su, bs, ps }' "$tmp/table"
