#!/usr/bin/env bash
# How long the large jobs waited at the head of the queue: the testbed's four
# AEGIS runs of Philly and of Saturn (MFM, MU, MFM-NF, MU-NF) beside ours, as
# in docs/crowding.md ("Failed attempts with the filter on, at δ = 0.2").
#
# A job's head wait is its first launch less the later of its submission and
# the previous job's first launch (strict FIFO: the time it was the queue's
# head). Per run the script prints the head waits summed over the jobs whose
# catalog peak exceeds LARGE_MIB, how many of those waited more than 300 s,
# and the failed attempts: the testbed's, then ours' mean over SEEDS. The
# testbed's times come from `aegis measured`'s jobs.csv, ours from the
# first-attempt `started` events of `aegis simulate --out`.
#
# Arguments after the script's name go to every `aegis simulate` call, e.g.
# --set estfree_mib=7120 or --truth noise=0.
#
# Settings (environment): AEGIS_BIN (default bin/aegis), AEGIS_SHARED (the
# shared data folder, default ../shared), SEEDS (a range, default 1-10),
# LARGE_MIB (default 12288). About 0.3 s of CPU per run and seed.
set -euo pipefail
. "$(dirname "$0")/testbed.sh"
seeds=${SEEDS:-1-10}
large=${LARGE_MIB:-12288}
first=${seeds%-*} last=${seeds#*-}
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ && $first -le $last ]] || { echo "SEEDS=$seeds: want a range FIRST-LAST" >&2; exit 1; }
# The catalog's peak per workload (a two-GPU job's larger GPU).
grep -v '^#' models/data/catalog_a100.csv |
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "workload") w = i; if ($i == "peak_mib") p = i }
			if (!w || !p) { print "catalog_a100.csv: no workload or peak_mib column" > "/dev/stderr"; exit 1 }; next }
		$p > pk[$w] { pk[$w] = $p } END { for (x in pk) print x "," pk[x] }' > "$tmp/peaks"
echo "Large jobs' (peak > $large MiB) head waits summed per run: testbed / ours' mean over seeds $seeds"
echo
echo "| trace | run | head wait, s | waits > 300 s | failed attempts |"
echo "|---|---|---|---|---|"
for tr in philly saturn; do
	for l in aegis_magm_thresholded aegis_lug_thresholded aegis_magm_no_thresholds aegis_lug_no_thresholds; do
		case $l in
		aegis_magm_*) p=mfm ;;
		*) p=mu ;;
		esac
		case $l in
		*_no_thresholds) f=nf ;;
		*) f=pressure ;;
		esac
		"$bin" measured "$runs/$tr/job_metrics__$l.csv" --trace "$tr" --seeds 1 --out "$tmp/m" > /dev/null
		: > "$tmp/ours"
		for ((s = first; s <= last; s++)); do
			"$bin" simulate --trace "$tr" --policy aegis --set placement=$p --set filter=$f --seed $s --out "$tmp/s" "$@" > /dev/null
			# seed, job, first-attempt start; and each failed attempt as job -1.
			awk -v s=$s '/"event":"started"/ && /"attempt":1,/ { match($0, /"t":[0-9.]+/); t = substr($0, RSTART + 4, RLENGTH - 4)
					match($0, /"job":[0-9]+/); print s "," substr($0, RSTART + 6, RLENGTH - 6) "," t }
				/"event":"failed"/ { print s ",-1,0" }' "$tmp/s/events.jsonl" >> "$tmp/ours"
		done
		awk -F, -v large=$large -v n=$((last - first + 1)) -v tr=$tr -v l=$l '
			FILENAME ~ /peaks$/ { pk[$1] = $2; next }
			FILENAME ~ /jobs.csv$/ {
				if (FNR == 1) { for (i = 1; i <= NF; i++) { if ($i == "workload") w = i; if ($i == "submit_s") sb = i; if ($i == "start_s") st = i; if ($i == "failed_attempts") fa = i }
					if (!w || !sb || !st || !fa) { print "jobs.csv: no workload, submit_s, start_s or failed_attempts column" > "/dev/stderr"; exit 1 }; next }
				j = FNR - 2; wl[j] = $w; sub_[j] = $sb; tb[j] = $st; tf += $fa; jobs = j + 1
				if (!($w in pk)) { print "workload " $w " not in the catalog" > "/dev/stderr"; exit 1 }
				next }
			$2 == -1 { of++; next }
			{ os[$1, $2] = $3; seen[$1] = 1 }
			END {
				for (j = 1; j < jobs; j++) {
					if (pk[wl[j]] <= large) continue
					h = tb[j] - (sub_[j] > tb[j - 1] ? sub_[j] : tb[j - 1]); th += h; if (h > 300) tl++
					for (s in seen) { h = os[s, j] - (sub_[j] > os[s, j - 1] ? sub_[j] : os[s, j - 1]); oh += h; if (h > 300) ol++ }
				}
				printf "| %s | %s | %.0f / %.0f | %d / %.1f | %d / %.1f |\n", tr, l, th, oh / n, tl, ol / n, tf, of / n
			}' "$tmp/peaks" "$tmp/m/jobs.csv" "$tmp/ours"
	done
done
