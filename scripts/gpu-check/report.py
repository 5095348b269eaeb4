#!/usr/bin/env python3
"""Check a `make gpu-check` run: does the telemetry say what the GPU did?

Reads the run directory aegis exec wrote (events.jsonl, jobs.csv,
telemetry.csv: every reading the policy's window took, journal.jsonl, the
attempt logs), the executor's log (which telemetry source it chose), the GPU's
nvidia-smi identity and nvidia-smi's memory readings taken beside the run.
Prints the decisions, then one line per check with its numbers and PASS,
FAIL or SKIP, and exits 1 if any check failed (see CHECKS below).
"""

import argparse
import csv
import json
import os
import re
import sys
from datetime import datetime


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


# Tolerances of the checks (why each is what it is: docs/gpu-telemetry.md).
IDLE_SMACT_MAX = 0.05      # an idle GPU's SM activity: ~0, a little noise allowed
HEAVY_SMACT_MIN = 0.50     # a compute-bound MLP alone keeps most SMs busy most of the time
PRESSURE_COVERAGE_MIN = 0.80  # share of the run's seconds with a reading that has pressure signals
MEM_MEDIAN_MIB = 256       # median |aegis - nvidia-smi| used memory: below the ~500 MiB driver reservation
IDLE_MEM_MAX_MIB = 512     # used memory of the idle GPU, as nvidia-smi counts it (v2: reservation excluded)
POWER_IDLE_SLACK = 0.9     # mean power may read 10 % below the idle reading taken before the run
POWER_READING_RANGE = (0.5, 1.05)  # one second's power, times idle and board: a deeper idle state, an overshoot of the average
POWER_COVERAGE_MIN = 0.8   # share of telemetry readings with a power reading
POWER_AGREE = 0.25         # mean per-second power vs the energy counter's mean power


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(row for row in f if not row.startswith("#")))


def read_kv(path):
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                k, _, v = line.partition("=")
                if v:
                    out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def run_start(run):
    """The run's wall-clock start (Unix seconds) from its journal's run record."""
    with open(os.path.join(run, "journal.jsonl"), encoding="utf-8") as f:
        rec = json.loads(f.readline())
    s = rec["run"]["start"]
    m = re.match(r"(.*T\d\d:\d\d:\d\d)(\.\d+)?(.*)$", s)
    frac = (m.group(2) or ".0")[:7]
    zone = m.group(3).replace("Z", "+00:00")
    return datetime.fromisoformat(m.group(1) + frac + zone).timestamp()


def read_smi(path):
    """nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader,nounits lines."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                parts = [p.strip() for p in line.split(",")]
                if len(parts) < 2:
                    continue
                try:
                    t = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                    out.append((t, float(parts[1])))
                except ValueError:
                    continue
    except OSError:
        pass
    return out


class Checks:
    def __init__(self):
        self.failed = []

    def report(self, name, verdict, text):
        print(f"   {name:<28} {verdict:<4}  {text}")
        if verdict == "FAIL":
            self.failed.append(name)

    def check(self, name, ok, text):
        self.report(name, "PASS" if ok else "FAIL", text)


def check_energy(c, run, info, tel):
    """9. Energy: the GPU's energy counter moved over the run (summary.csv's
    energy_j, read by aegis exec at the start and the end: NVML's counter,
    or on emulated GPUs the power model metering the emulated activity),
    the mean power it implies lies between the idle GPU's and the board
    limit (on a real GPU read by nvidia-smi before the run; emulated, the
    power model's idle and board power), and telemetry.csv's per-second
    power (power_w) lies within the same bounds and agrees with the
    counter."""
    try:
        rows = read_csv(os.path.join(run, "summary.csv"))
    except OSError as e:
        c.check("energy counter moved", False, f"no summary.csv: {e}")
        return
    row = rows[0] if rows else {}
    if "energy_j" not in row:
        c.check("energy counter moved", False, "summary.csv has no energy columns: the telemetry source reads no energy counter")
        return
    if not row["energy_j"]:
        c.check("energy counter moved", False, "energy columns empty: the counter is unsupported or failed (see aegis exec's 'energy:' line)")
        return
    e, w = float(row["energy_j"]), float(row["mean_gpu_power_w"] or 0)
    c.check("energy counter moved", e > 0, f"{e:.0f} J over the run ({float(row['energy_kwh']):.4f} kWh), mean {w:.1f} W per GPU")
    try:
        idle, board = float(info["idle_w"]), float(info["board_w"])
    except (KeyError, ValueError):
        c.report("mean power in bounds", "SKIP", "no idle power or board limit (nvidia-smi, or the emulated type's power model)")
        return
    # The idle reading fluctuates by a few watts: 10 % below it still counts.
    where = info.get("power_source", "nvidia-smi before the run")
    c.check("mean power in bounds", POWER_IDLE_SLACK * idle <= w <= board,
            f"mean {w:.1f} W per GPU; idle {idle:.1f} W, board limit {board:.0f} W ({where})")
    power = [float(r["power_w"]) for r in tel if r.get("power_w")]
    if not power:
        have = "no power_w column" if tel and "power_w" not in tel[0] else "every power_w cell empty"
        c.check("power in telemetry", False, f"telemetry.csv: {have} ({len(tel)} readings; see aegis exec's 'no power reading' line)")
        return
    lo, hi, mean = min(power), max(power), sum(power) / len(power)
    want = (POWER_READING_RANGE[0] * idle, POWER_READING_RANGE[1] * board)
    ok = len(power) >= POWER_COVERAGE_MIN * len(tel) and want[0] <= lo and hi <= want[1]
    c.check("power in telemetry", ok,
            f"{len(power)} of {len(tel)} readings with power (want >= {POWER_COVERAGE_MIN:.0%}), {lo:.1f}-{hi:.1f} W (want within {want[0]:.1f}-{want[1]:.0f} W)")
    # The counter covers the executor's whole session, the readings the
    # seconds the window took: their means agree only roughly.
    c.check("telemetry power = counter", abs(mean - w) <= POWER_AGREE * w,
            f"mean of the readings {mean:.1f} W, the counter's {w:.1f} W per GPU (want within {POWER_AGREE:.0%})")


def attempts(events):
    """Per (job, attempt): start, gpus, shared, active, end, how it ended."""
    out = {}
    for e in events:
        key = (e.get("job"), e.get("attempt"))
        kind = e.get("event")
        if kind == "started":
            out[key] = {"start": float(e["t"]), "gpus": e.get("gpus") or [], "shared": bool(e.get("shared")),
                        "active": None, "end": None, "how": None}
        elif key in out and kind == "active":
            out[key]["active"] = float(e["t"])
        elif key in out and kind in ("finished", "failed", "stopped"):
            out[key]["end"] = float(e["t"])
            out[key]["how"] = e.get("reason") if kind == "failed" else kind
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="aegis exec --out directory")
    ap.add_argument("--trace", help="the trace (job names in order)")
    ap.add_argument("--exec-log", help="aegis exec's output (it names the telemetry source)")
    ap.add_argument("--gpu-info", help="KEY=VALUE lines: name, compute_cap, driver of the GPU")
    ap.add_argument("--smi", help="nvidia-smi memory readings taken during the run")
    ap.add_argument("--emulated", help="the run was on emulated GPUs of this type: hardware checks are skipped")
    args = ap.parse_args()

    try:
        events = read_events(os.path.join(args.run, "events.jsonl"))
    except OSError as e:
        print(f"gpu-check: FAIL: the run wrote no events ({e})")
        return 1
    names = {}
    if args.trace:
        names = {i: r["job_id"] for i, r in enumerate(read_csv(args.trace))}
    name = lambda j: f"{names.get(j, j)}"
    print_decisions(events)
    att = attempts(events)
    try:
        tel = read_csv(os.path.join(args.run, "telemetry.csv"))
    except OSError:
        tel = []
    rows = sorted((int(r["t_s"]), float(r["smact"]), float(r["used_mib"])) for r in tel if r["gpu"] == "0")
    info = read_kv(args.gpu_info) if args.gpu_info else {}
    log = ""
    if args.exec_log:
        with open(args.exec_log, encoding="utf-8", errors="replace") as f:
            log = f.read()

    print("-- checks:")
    c = Checks()
    hw = "SKIP" if args.emulated else None
    emu = f"emulated {args.emulated}: no real GPU"

    # 1. The telemetry source: NVML GPM on Hopper or newer.
    m = re.search(r"telemetry \w+: using ([\w+]+)", log)
    source = m.group(1) if m else "unknown"
    cc = info.get("compute_cap", "")
    if hw:
        c.report("source is NVML GPM", hw, emu)
    elif cc and float(cc) >= 9.0:
        c.check("source is NVML GPM", source == "nvml+gpm",
                f"source {source} on {info.get('name', '?')} (compute capability {cc} >= 9.0: GPM expected); driver {info.get('driver', '?')}")
    else:
        c.report("source is NVML GPM", "SKIP", f"compute capability {cc or '?'} < 9.0: GPM needs Hopper or newer (source {source})")
    pressure = source in ("nvml+gpm", "dcgm") or bool(args.emulated)

    # 2. Pressure readings in most seconds of the run.
    if rows:
        span = rows[-1][0] - rows[0][0] + 1
        cov = len(rows) / span
        if pressure:
            c.check("pressure in most readings", cov >= PRESSURE_COVERAGE_MIN,
                    f"{len(rows)} of {span} seconds have a reading with SMACT/SMOCC/DRAMA ({cov:.0%}; want >= {PRESSURE_COVERAGE_MIN:.0%})")
        else:
            c.check("pressure in most readings", False, f"source {source} gives no pressure signals ({len(rows)} readings of utilization and memory)")
    else:
        c.check("pressure in most readings", False, "telemetry.csv has no reading of GPU 0")

    # 3. SMACT near zero on the idle GPU (before any job shows activity).
    first_active = min((a["active"] for a in att.values() if a["active"] is not None), default=None)
    idle = [r for r in rows if first_active is not None and r[0] + 1 <= first_active]
    if len(idle) >= 2:
        mean = sum(r[1] for r in idle) / len(idle)
        c.check("SMACT ~0 when idle", mean <= IDLE_SMACT_MAX,
                f"mean SMACT {mean:.3f} over {len(idle)} s before the first activity at t={first_active:.1f} s (want <= {IDLE_SMACT_MAX})")
    else:
        c.check("SMACT ~0 when idle", False, f"{len(idle)} readings before the first activity (want >= 2)")

    # 4. SMACT high while the heavy job runs alone.
    heavy = [j for j, n in names.items() if n == "heavy"]
    alone = []
    if heavy:
        a = att.get((heavy[0], 1))
        if a and a["active"] is not None:
            others = [b["start"] for k, b in att.items() if k[0] != heavy[0] and b["start"] > a["start"]]
            stop = min([a["end"] or 1e18] + others)
            alone = [r for r in rows if a["active"] + 2 <= r[0] and r[0] + 1 <= stop]
    if len(alone) >= 3:
        med = sorted(r[1] for r in alone)[len(alone) // 2]
        c.check("SMACT high, heavy alone", med >= HEAVY_SMACT_MIN,
                f"median SMACT {med:.3f} over {len(alone)} s with only heavy on the GPU (want >= {HEAVY_SMACT_MIN})")
    else:
        c.check("SMACT high, heavy alone", False, f"{len(alone)} readings with heavy alone and active (want >= 3)")

    # 5. Memory as nvidia-smi counts it.
    if hw:
        c.report("memory = nvidia-smi", hw, emu)
    else:
        smi = read_smi(args.smi) if args.smi else []
        t0 = run_start(args.run)
        diffs = []
        for sec, _, used in rows:
            at = t0 + sec + 0.5
            near = min(smi, key=lambda x: abs(x[0] - at), default=None)
            if near and abs(near[0] - at) <= 1.0:
                diffs.append(abs(used - near[1]))
        if diffs:
            med = sorted(diffs)[len(diffs) // 2]
            c.check("memory = nvidia-smi", med <= MEM_MEDIAN_MIB,
                    f"median |aegis - nvidia-smi| {med:.0f} MiB over {len(diffs)} readings (want <= {MEM_MEDIAN_MIB} MiB; max {max(diffs):.0f} during ramps)")
        else:
            c.check("memory = nvidia-smi", False, f"no nvidia-smi reading within 1 s of a telemetry reading ({len(smi)} nvidia-smi readings)")
        if idle:
            used = max(r[2] for r in idle)
            c.check("idle memory ~0", used <= IDLE_MEM_MAX_MIB,
                    f"at most {used:.0f} MiB used before the first activity (want <= {IDLE_MEM_MAX_MIB}: the driver's reservation is not counted)")

    # 6. The OOM came from the policy placing two jobs on one GPU.
    ooms = [(k, a) for k, a in att.items() if a["how"] == "oom"]
    if not ooms:
        c.check("OOM from collocation", False, "no attempt failed with an OOM (big-b should, beside big-a)")
    for (j, n), a in ooms:
        beside = [f"{name(k[0])} (started t={b['start']:.1f} s)" for k, b in att.items()
                  if k[0] != j and set(b["gpus"]) & set(a["gpus"]) and b["start"] <= a["end"] and (b["end"] or 1e18) >= a["end"]]
        c.check("OOM from collocation", a["shared"] and bool(beside),
                f"{name(j)} attempt {n} failed OOM at t={a['end']:.1f} s on GPU {a['gpus']}, placed shared={a['shared']} beside {', '.join(beside) or 'nothing'}")

    # 7. The collocated job was seen starting (its process found on the GPU).
    shared = [(k, a) for k, a in att.items() if a["shared"]]
    if not shared:
        c.check("collocated job seen active", False, "no attempt was placed beside another")
    for (j, n), a in shared:
        ok = a["active"] is not None and (a["end"] is None or a["active"] <= a["end"])
        c.check("collocated job seen active", ok,
                f"{name(j)} attempt {n}: placed t={a['start']:.1f} s, active " + (f"t={a['active']:.1f} s" if a["active"] is not None else "never") +
                (f", ended ({a['how']}) t={a['end']:.1f} s" if a["end"] is not None else ""))

    # 8. Recovery and completion.
    for (j, n), a in ooms:
        later = [b for k, b in att.items() if k[0] == j and (k[1] or 0) > (n or 0) and b["how"] == "finished"]
        c.check("OOM job recovered", bool(later), f"{name(j)}: " + (
            f"attempt {n} OOM, finished after a retry started at t={later[0]['start']:.1f} s (shared={later[0]['shared']})" if later else "never finished after its OOM"))
    try:
        jobs = read_csv(os.path.join(args.run, "jobs.csv"))
    except OSError as e:
        jobs = []
        print(f"   no jobs.csv: {e}")
    done = [r for r in jobs if r.get("state") == "done"]
    c.check("every job done", bool(jobs) and len(done) == len(jobs), f"{len(done)} of {len(jobs)} jobs done")
    for path, tail in find_oom_logs(args.run):
        last = [l for l in tail.splitlines() if "out of memory" in l.lower()][-1:]
        print(f"   (OOM message in {os.path.relpath(path, args.run)}: {last[0].strip()[:140] if last else ''})")

    check_energy(c, args.run, info, [r for r in tel if r["gpu"] == "0"])

    if c.failed:
        print(f"gpu-check: FAIL: {', '.join(dict.fromkeys(c.failed))}")
        return 1
    print("gpu-check: PASS" + (f" (emulated {args.emulated}: the hardware checks were skipped)" if args.emulated else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
