#!/usr/bin/env python3
"""Summarise a `make gpu-check` run: NVML samples, decisions, OOMs, recovery.

Reads the run directory aegis exec wrote (events.jsonl, jobs.csv, attempt
logs) and the sampler's output (aegis gpus --samples N). Prints what
happened and exits 1 if a job did not finish or no OOM was classified and
recovered (the check's purpose), 0 otherwise.
"""

import argparse
import csv
import json
import os
import sys


def read_events(path):
    events = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError as e:
                print(f"{path}:{n}: not JSON ({e}); a torn last line is possible after a kill")
    return events


def print_samples(path, every):
    print(f"-- NVML samples ({path}), every {every}th reading:")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"   none: {e}")
        return 0, 0
    n = pressure = 0
    in_samples = False
    for line in lines:
        if line.startswith("time "):
            in_samples = True
            print("   " + line)
            continue
        if not in_samples:
            print("   " + line)
            continue
        if not line.strip():
            continue
        n += 1
        cols = line.split()
        if len(cols) > 5 and cols[5] == "yes":
            pressure += 1
        if n % every == 1 or every == 1:
            print("   " + line)
    print(f"   {n} readings, {pressure} with pressure signals (GPM or DCGM), "
          f"{n - pressure} utilization only")
    return n, pressure


def print_decisions(events):
    print("-- decisions and job events (consecutive deferrals of a job on a GPU for one reason folded):")
    open_defer = {}

    def flush(key):
        d = open_defer.pop(key)
        job, gpu, reason = key
        print(f"   t={d['t0']:8.1f}..{d['t1']:.1f}s  job {job}: deferred on GPU {gpu}: {reason} ({d['n']} decisions)")

    for e in events:
        kind = e.get("event", "?")
        t = float(e.get("t", 0))
        job = e.get("job")
        if kind == "defer":
            key = (job, e.get("gpu"), e.get("reason"))
            if key in open_defer:
                open_defer[key]["t1"] = t
                open_defer[key]["n"] += 1
            else:
                open_defer[key] = {"t0": t, "t1": t, "n": 1}
            continue
        for key in [k for k in open_defer if k[0] == job]:
            flush(key)
        rest = {k: v for k, v in e.items() if k not in ("t", "event", "job")}
        extra = " ".join(f"{k}={json.dumps(v)}" for k, v in rest.items())
        print(f"   t={t:8.1f}s  job {job}: {kind} {extra}".rstrip())
    for key in list(open_defer):
        flush(key)


def find_oom_logs(run):
    hits = []
    for root, _, files in os.walk(run):
        for name in files:
            p = os.path.join(root, name)
            if not (name.endswith(".log") or "stderr" in name or name.endswith(".err")):
                continue
            try:
                with open(p, "rb") as f:
                    tail = f.read()[-4096:].decode("utf-8", "replace")
            except OSError:
                continue
            if "out of memory" in tail.lower():
                hits.append((p, tail))
    return sorted(hits)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="aegis exec --out directory")
    ap.add_argument("--samples", required=True, help="output of aegis gpus --samples N")
    ap.add_argument("--every", type=int, default=5, help="print every Nth sample")
    args = ap.parse_args()

    problems = []
    n, _ = print_samples(args.samples, max(1, args.every))
    if n == 0:
        problems.append("no NVML sample was read")

    ev_path = os.path.join(args.run, "events.jsonl")
    try:
        events = read_events(ev_path)
    except OSError as e:
        print(f"-- no events: {e}")
        events = []
        problems.append(f"no {ev_path}")
    print_decisions(events)

    print("-- failures and their classification:")
    fails = [e for e in events if e.get("event") == "failed"]
    for e in fails:
        print(f"   t={float(e.get('t', 0)):.1f}s job {e.get('job')} attempt {e.get('attempt')}: "
              f"reason={e.get('reason')}")
    if not fails:
        print("   none")
    ooms = [e for e in fails if str(e.get("reason", "")).lower() == "oom"]
    for path, tail in find_oom_logs(args.run):
        last = [l for l in tail.splitlines() if "out of memory" in l.lower()][-1:]
        print(f"   OOM message in {path}: {last[0].strip()[:160] if last else ''}")

    print("-- recovery:")
    for e in ooms:
        job, att = e.get("job"), e.get("attempt") or 0
        later = [x for x in events if x.get("job") == job and x.get("event") == "started"
                 and (x.get("attempt") or 0) > att]
        if later:
            x = later[0]
            print(f"   job {job}: OOM on attempt {att}, restarted as attempt {x.get('attempt')} at "
                  f"t={float(x.get('t', 0)):.1f}s on GPUs {x.get('gpus')} (shared={x.get('shared')})")
        else:
            print(f"   job {job}: OOM on attempt {att}, never restarted")
            problems.append(f"job {job} was not restarted after its OOM")
    if not ooms:
        problems.append("no failure was classified as OOM (big-b should fail beside big-a)")

    print("-- jobs.csv:")
    jobs_path = os.path.join(args.run, "jobs.csv")
    try:
        with open(jobs_path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        rows = []
        problems.append(f"no {jobs_path}: {e}")
    cols = ["job_id", "workload", "state", "submit_s", "start_s", "finish_s", "attempts", "failed_attempts"]
    if rows:
        have = [c for c in cols if c in rows[0]]
        print("   " + "  ".join(f"{c:>14}" for c in have))
        for r in rows:
            print("   " + "  ".join(f"{r[c][:14]:>14}" for c in have))
            if r.get("state", "done") != "done":
                problems.append(f"job {r.get('job_id')} ended {r.get('state')}")
    elif not problems:
        problems.append("jobs.csv has no rows")

    if problems:
        print("gpu-check: FAIL:\n   " + "\n   ".join(problems))
        return 1
    print(f"gpu-check: PASS: {len(rows)} jobs done, {len(ooms)} OOM(s) classified and recovered, {n} NVML readings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
