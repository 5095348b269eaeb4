#!/usr/bin/env bash
# How evenly the energy fell on the three GPUs: the testbed's five runs of
# Philly and of Saturn (Exclusive, MFM, MU, MFM-NF, MU-NF) beside ours, as in
# docs/crowding.md ("Per-GPU energy: can it stand in for the jobs' GPUs?").
#
# The testbed's dcgm_energy_by_gpu.csv holds each GPU's DCGM energy counter
# over a run: the only measurement per GPU the runs kept (their job rows name
# no GPU). Per run the script prints the spread (the largest GPU's energy over
# the smallest's) and the three GPUs' total in kWh: the testbed's, then ours'
# range and mean over SEEDS, from `aegis simulate --telemetry` (power_w, each
# GPU's 1 Hz power as the energy meter charges it, summed). The testbed's
# spread under Exclusive includes the cards' own idle-power differences, which
# the simulator does not model: read the AEGIS runs against it.
#
# Arguments after the script's name go to every `aegis simulate` call, e.g.
# --truth noise=0.
#
# Settings (environment): AEGIS_BIN (default bin/aegis), AEGIS_SHARED (the
# shared data folder, default ../shared), SEEDS (a range, default 1-5).
# About 0.6 s of CPU per run and seed.
set -euo pipefail
. "$(dirname "$0")/testbed.sh"
seeds=${SEEDS:-1-5}
first=${seeds%-*} last=${seeds#*-}
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ && $first -le $last ]] || { echo "SEEDS=$seeds: want a range FIRST-LAST" >&2; exit 1; }
csv=$runs/dcgm_energy_by_gpu.csv
[ -f "$csv" ] || { echo "no $csv" >&2; exit 1; }
echo "Energy per GPU: spread (largest ÷ smallest of the 3 GPUs) and total kWh, testbed / ours over seeds $seeds (min–max, mean)"
echo
echo "| trace | run | spread, testbed | spread, ours | kWh, testbed | kWh, ours |"
echo "|---|---|---|---|---|---|"
for tr in philly saturn; do
	for l in exclusive aegis_magm_thresholded aegis_lug_thresholded aegis_magm_no_thresholds aegis_lug_no_thresholds; do
		case $l in
		exclusive) args=(--policy exclusive) ;;
		*)
			case $l in aegis_magm_*) p=mfm ;; *) p=mu ;; esac
			case $l in *_no_thresholds) f=nf ;; *) f=pressure ;; esac
			args=(--policy aegis --set placement=$p --set filter=$f) ;;
		esac
		: > "$tmp/ours"
		for ((s = first; s <= last; s++)); do
			"$bin" simulate --trace "$tr" "${args[@]}" --seed $s --telemetry --out "$tmp/s" "$@" > /dev/null
			# seed, spread, total kWh.
			awk -F, -v s=$s 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "gpu") g = i; if ($i == "power_w") w = i }
					if (!g || !w) { print "telemetry.csv: no gpu or power_w column" > "/dev/stderr"; exit 1 }; next }
				{ e[$g] += $w }
				END { lo = -1; for (k in e) { t += e[k]; if (e[k] > hi) hi = e[k]; if (lo < 0 || e[k] < lo) lo = e[k] }
					if (lo <= 0) { print "telemetry.csv: a GPU drew no energy" > "/dev/stderr"; exit 1 }
					printf "%d,%.4f,%.4f\n", s, hi / lo, t / 3.6e6 }' "$tmp/s/telemetry.csv" >> "$tmp/ours"
		done
		awk -F, -v tr=$tr -v l=$l '
			FILENAME == ARGV[1] {
				if (FNR == 1) { for (i = 1; i <= NF; i++) { if ($i == "trace") c = i; if ($i == "raw_label") r = i; if ($i == "energy_delta_j") j = i }
					if (!c || !r || !j) { print "dcgm_energy_by_gpu.csv: no trace, raw_label or energy_delta_j column" > "/dev/stderr"; exit 1 }; next }
				if ($c != tr || $r != l) next
				n++; t += $j; if ($j > hi) hi = $j; if (!lo || $j < lo) lo = $j; next }
			{ k++; sp += $2; kw += $3; if (!smin || $2 < smin) smin = $2; if ($2 > smax) smax = $2 }
			END {
				if (n != 3) { printf "dcgm_energy_by_gpu.csv: %d GPUs for %s %s, want 3\n", n, tr, l > "/dev/stderr"; exit 1 }
				printf "| %s | %s | %.3f | %.3f–%.3f (%.3f) | %.2f | %.2f |\n", tr, l, hi / lo, smin, smax, sp / k, t / 3.6e6, kw / k
			}' "$csv" "$tmp/ours"
	done
done
