#!/usr/bin/env bash
# Failed attempts by workload: the testbed's four AEGIS runs of Philly and of
# Saturn (filter on: MFM, MU; filter off: MFM-NF, MU-NF) beside ours, as in
# docs/crowding.md ("Failed attempts: which jobs fail, and why").
#
# `aegis measured --out` replays each run (seeds SEEDS); its jobs.csv has,
# per job, the testbed's failed_attempts and ours per seed. The script prints
# each run's failed attempts (testbed, ours' mean over the seeds), then per
# workload the failures summed over the filtered runs and over the NF runs
# (testbed / ours' mean), largest first.
#
# Arguments after the script's name go to every `aegis measured` call, e.g.
# --truth ramp=3s or --server my-a100.yaml:3, to see what a change does to
# which jobs fail.
#
# Settings (environment): AEGIS_BIN (default bin/aegis), AEGIS_SHARED (the
# shared data folder, default ../shared), SEEDS (default 1-5). About 1 s of
# CPU per run and seed.
set -euo pipefail
. "$(dirname "$0")/testbed.sh"
seeds=${SEEDS:-1-5}
labels="aegis_magm_thresholded aegis_lug_thresholded aegis_magm_no_thresholds aegis_lug_no_thresholds"
for tr in philly saturn; do
	for l in $labels; do
		"$bin" measured "$runs/$tr/job_metrics__$l.csv" --trace "$tr" --seeds "$seeds" --out "$tmp/$tr-$l" "$@" > /dev/null
	done
done
# One line per job: trace, label, workload, testbed failures, ours' mean.
for tr in philly saturn; do
	for l in $labels; do
		awk -F, -v tr="$tr" -v l="$l" '
			NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "workload") w = i; if ($i == "failed_attempts") f = i; if ($i ~ /^ours_failed_seed/) s[++n] = i }
				if (!w || !f || !n) { print "jobs.csv of " tr " " l ": no workload, failed_attempts or ours_failed_seed* column" > "/dev/stderr"; exit 1 }
				next }
			{ o = 0; for (k = 1; k <= n; k++) o += $s[k]; print tr "," l "," $w "," $f "," o / n }' "$tmp/$tr-$l/jobs.csv"
	done
done > "$tmp/jobs"
echo "Failed attempts per run (seeds $seeds): testbed / ours' mean"
echo
echo "| trace | run | testbed | ours |"
echo "|---|---|---|---|"
awk -F, '{ t[$1 " | " $2] += $4; o[$1 " | " $2] += $5; if (!($1 " | " $2 in seen)) { seen[$1 " | " $2] = 1; order[++n] = $1 " | " $2 } }
	END { for (i = 1; i <= n; i++) printf "| %s | %d | %.1f |\n", order[i], t[order[i]], o[order[i]] }' "$tmp/jobs"
echo
echo "By workload, summed over the two traces (filtered: MFM and MU; NF: MFM-NF and MU-NF)"
echo
echo "| workload | filtered: testbed / ours | NF: testbed / ours |"
echo "|---|---|---|"
awk -F, '{ k = ($2 ~ /no_thresholds/) ? 2 : 0; a[$3, k] += $4; a[$3, k + 1] += $5; w[$3] = 1 }
	END { for (x in w) { s = a[x, 0] + a[x, 1] + a[x, 2] + a[x, 3]
			if (s > 0) printf "%.4f,%s,%d,%.1f,%d,%.1f\n", a[x, 1] + a[x, 3], x, a[x, 0], a[x, 1], a[x, 2], a[x, 3]
			for (k = 0; k < 4; k++) tot[k] += a[x, k] }
		printf "-1,**all**,%d,%.1f,%d,%.1f\n", tot[0], tot[1], tot[2], tot[3] }' "$tmp/jobs" |
	sort -t, -k1,1gr -k2,2 | awk -F, '{ printf "| %s | %s / %s | %s / %s |\n", $2, $3, $4, $5, $6 }'
