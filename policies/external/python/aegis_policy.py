"""Write an aegis scheduling policy in Python: the other side of policy
external (protocol version 2, and 1 with an older aegis; docs/own-policy.md).
Standard library only.

A policy is a subclass of Policy with a name, its parameters (PARAMS), the
event kinds it never decides on (SKIP), whether it never acts while no job
is pending (SKIP_EMPTY) and a schedule method that reads a View and returns
actions (place, stop, defer, wake). run(MyPolicy()) speaks
the protocol on standard input and output until aegis closes the input:

    from aegis_policy import Policy, Param, place, run

    class Greedy(Policy):
        NAME = "greedy"
        def schedule(self, v):
            ...
            return [place(job_id, [gpu])]

    if __name__ == "__main__":
        run(Greedy())

The view is kept here from what aegis sends (only what changed since the
last decision): v.now (seconds), v.gpus (GPU), v.jobs (Job by id),
v.queue (pending job ids in submission order), v.failed (pending jobs whose
last attempt failed, in the order they failed), v.pressure, and
v.samples(gpu, n) for a GPU's last n seconds of 1 Hz telemetry. A policy
must be deterministic: no clock, no unseeded randomness. Print nothing to
standard output (it is the protocol); use sys.stderr for messages.
"""

import bisect
import json
import sys

VERSION = 2  # the newest protocol version spoken; MIN_VERSION the oldest
MIN_VERSION = 1

__all__ = ["VERSION", "MIN_VERSION", "Param", "Policy", "View", "Job", "GPU", "place", "stop", "defer", "wake", "run", "ProtocolError"]


class ProtocolError(Exception):
    """Aegis sent something this module does not understand."""


class Param:
    """A parameter the policy declares: its default (its type is the
    parameter's: float, int or str), a line of help, and bounds (lo, hi) or
    the allowed values (choices)."""

    def __init__(self, default, help="", lo=None, hi=None, choices=None):
        self.default, self.help, self.lo, self.hi, self.choices = default, help, lo, hi, choices

    def valid(self):
        kind = {float: "number", int: "whole number", str: "text"}[type(self.default)]
        if self.choices:
            return "|".join(self.choices)
        if self.lo is not None and self.hi is not None:
            return "%s in [%s, %s]" % (kind, _num(self.lo), _num(self.hi))
        return kind

    def read(self, key, text):
        t = type(self.default)
        try:
            x = t(text)
        except ValueError:
            raise ValueError("parameter %s=%r: want a %s" % (key, text, self.valid())) from None
        if self.choices and x not in self.choices:
            raise ValueError("parameter %s=%r: want one of %s" % (key, text, ", ".join(self.choices)))
        if t is not str and ((self.lo is not None and not x >= self.lo) or (self.hi is not None and not x <= self.hi)):
            raise ValueError("parameter %s=%r: want a %s" % (key, text, self.valid()))
        return x


def _num(x):
    return str(int(x)) if float(x).is_integer() else repr(x)


class Policy:
    """Subclass it: NAME, PARAMS ({key: Param}), SKIP (event kinds that never
    call for a decision, e.g. ("started", "active")), TICK (the decision grid
    in seconds if the policy wakes on one, else 0), SKIP_EMPTY (True if
    schedule returns no action while no job is pending: aegis then does not
    ask, and the events of those decisions come with the next one), and
    schedule(view). self.p holds the parameters' values when schedule is
    first called. A policy that does not override observe is sent no events."""

    NAME = "python"
    PARAMS = {}
    SKIP = ()
    TICK = 0
    SKIP_EMPTY = False

    def configure(self, settings):
        """Read the parameters (raises ValueError on a bad or unknown key)."""
        for k in settings:
            if k not in self.PARAMS:
                raise ValueError("unknown parameter %r; valid: %s" % (k, ", ".join(sorted(self.PARAMS)) or "none"))
        self.p = {k: (p.read(k, settings[k]) if k in settings else p.default) for k, p in self.PARAMS.items()}

    def observe(self, event):
        """Called with every event (a dict: kind, t, job, ...) before the
        decision that follows it; override to keep state."""

    def schedule(self, view):
        """Return the actions to take now (a list of place/stop/defer/wake)."""
        return []


def place(job, gpus):
    """Launch pending job on the GPUs (as many as it needs)."""
    return {"kind": "place", "job": job, "gpus": list(gpus)}


def stop(job, reason=""):
    """Give up a pending job."""
    return {"kind": "stop", "job": job, "reason": reason}


def defer(job, gpu, reason):
    """Record that job could not go on gpu (-1: no single GPU) and why."""
    return {"kind": "defer", "job": job, "gpu": gpu, "reason": reason}


def wake(at):
    """Ask for a decision at time at (seconds, after now) even if nothing happens."""
    return {"kind": "wake", "at": at}


class Job:
    """A job as the policy sees it (fields as in aegis's policies.Job)."""

    __slots__ = ("id", "name", "gpus", "submit", "workload", "solo_s", "peak_mib", "util_pct", "smact", "smocc",
                 "drama", "analytical_mib", "faketensor_mib", "gpumemnet_mib", "lucid", "state", "attempts", "ooms",
                 "last_failure", "failed_at", "failed_shared", "on", "started", "active", "active_at")

    def __init__(self, id):
        self.id, self.name, self.gpus, self.submit, self.workload = id, "", 0, 0.0, ""
        self.solo_s = self.peak_mib = self.util_pct = self.smact = self.smocc = self.drama = 0.0
        self.analytical_mib = self.faketensor_mib = self.gpumemnet_mib = 0.0
        self.lucid, self.state, self.attempts, self.ooms = 0, "waiting", 0, 0
        self.last_failure, self.failed_at, self.failed_shared = "none", 0.0, False
        self.on, self.started, self.active, self.active_at = [], 0.0, False, 0.0

    def __repr__(self):
        return "Job(%d %s %s)" % (self.id, self.name, self.state)


_FLOATS = ("solo_s", "peak_mib", "util_pct", "smact", "smocc", "drama", "analytical_mib", "faketensor_mib",
           "gpumemnet_mib")


class GPU:
    """A GPU as the policy sees it: capacity and last measured memory (MiB),
    and the ids of the jobs running on it."""

    __slots__ = ("index", "capacity_mib", "used_mib", "jobs")

    def __init__(self, index):
        self.index, self.capacity_mib, self.used_mib, self.jobs = index, 0.0, 0.0, []

    def free_mib(self):
        return self.capacity_mib - self.used_mib


class View:
    """The world the policy decides on; read it, never change it."""

    def __init__(self, conn):
        self.now, self.pressure = 0.0, False
        self.gpus, self.jobs, self.queue, self.failed = [], [], [], []
        self._conn = conn

    def samples(self, gpu, n):
        """GPU gpu's samples of the last n whole seconds, oldest first: dicts
        with at, smact, smocc, drama (fractions), util_pct and used_mib."""
        return self._conn.query(gpu, n)

    def idle_gpus(self, taken, n):
        """The n lowest-indexed GPUs that run no job and are not in taken, or None."""
        out = [g.index for g in self.gpus if not g.jobs and g.index not in taken]
        return out[:n] if len(out) >= n else None


class _Conn:
    def __init__(self, stdin, stdout):
        # Bytes, not text: a line is parsed without decoding it first.
        self.r = getattr(stdin, "buffer", stdin)
        self.w = getattr(stdout, "buffer", stdout)

    def send(self, obj):
        self.w.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        self.w.flush()

    def read(self):
        line = self.r.readline()
        if not line:
            return None
        return json.loads(line)

    def query(self, gpu, n):
        self.send({"msg": "samples", "gpu": gpu, "n": n})
        m = self.read()
        if m is None or m.get("msg") != "samples":
            raise ProtocolError("want samples, got %r" % (m,))
        return m["samples"]


def _job(view, rec, pending="pending"):
    j = view.jobs[rec["id"]]
    if "name" in rec:
        j.name, j.gpus, j.submit, j.workload, j.lucid = rec["name"], rec["gpus"], float(rec["submit"]), rec["workload"], rec["lucid"]
        for k in _FLOATS:
            setattr(j, k, float(rec[k]))
    was = j.state == pending
    # Changing fields that are zero (false, "none", empty) are left out.
    g = rec.get
    j.state, j.attempts, j.ooms = rec["state"], g("attempts", 0), g("ooms", 0)
    j.on, j.started = g("on") or [], g("started", 0.0)
    if "last_failure" in rec:
        j.last_failure, j.failed_at, j.failed_shared = rec["last_failure"], rec["failed_at"], rec["failed_shared"]
    else:
        j.last_failure, j.failed_at, j.failed_shared = "none", 0.0, False
    if "active" in rec:
        j.active, j.active_at = rec["active"], rec["active_at"]
    else:
        j.active, j.active_at = False, 0.0
    now = j.state == pending
    if now != was:
        q = view.queue
        i = bisect.bisect_left(q, j.id)
        if now and (i == len(q) or q[i] != j.id):
            q.insert(i, j.id)
        elif not now and i < len(q) and q[i] == j.id:
            del q[i]


def _update(view, m):
    view.now = m["now"]
    if "pressure" in m:
        view.pressure = m["pressure"]
    n = m.get("n_jobs")
    if n is not None:
        view.jobs.extend(Job(i) for i in range(len(view.jobs), n))
    for rec in m["jobs"]:
        _job(view, rec)
    gpus = view.gpus
    for rec in m["gpus"]:
        i = rec["index"]
        while len(gpus) <= i:
            gpus.append(GPU(len(gpus)))
        g = gpus[i]
        g.capacity_mib, g.used_mib, g.jobs = float(rec["capacity_mib"]), float(rec["used_mib"]), rec["jobs"]
    if "failed" in m:
        view.failed = m["failed"]
    if len(view.queue) != m["queue_len"]:
        raise ProtocolError("at t=%s the queue kept here has %d jobs, aegis's %d" % (view.now, len(view.queue), m["queue_len"]))


def _observes(policy):
    return type(policy).observe is not Policy.observe


def _hello(policy, conn, m):
    """Answer aegis's hello in the newest version both speak; False at the
    end of input."""
    if m is None:
        return False
    v = m.get("v")
    if m.get("msg") != "hello" or not isinstance(v, int) or v < MIN_VERSION:
        raise ProtocolError("want hello of version %d to %d first, got %r" % (MIN_VERSION, VERSION, m))
    v = min(v, VERSION)
    policy.configure(m.get("params") or {})
    params = []
    for k, p in policy.PARAMS.items():
        d = {"key": k, "default": p.default if isinstance(p.default, str) else _num(p.default), "valid": p.valid(), "help": p.help}
        if p.choices:
            d["choices"] = list(p.choices)
        params.append(d)
    h = {"v": v, "msg": "hello", "name": policy.NAME, "params": params, "skip": list(policy.SKIP), "tick": policy.TICK}
    if v >= 2:
        if policy.SKIP_EMPTY:
            h["skip_empty"] = True
        if not _observes(policy):
            h["events"] = False
    conn.send(h)
    return True


def run(policy, stdin=None, stdout=None):
    """Serve policy over the protocol until aegis closes the input. An error
    (a bad parameter, an exception in schedule) is reported to aegis, which
    stops the run and shows it, then re-raised."""
    conn = _Conn(stdin or sys.stdin, stdout or sys.stdout)
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    view = View(conn)
    try:
        if not _hello(policy, conn, conn.read()):
            return
        observe = _observes(policy)
        readline, loads, write, flush = conn.r.readline, json.loads, conn.w.write, conn.w.flush
        schedule = policy.schedule
        while True:
            line = readline()
            if not line:
                return
            m = loads(line)
            if m.get("msg") != "decide":
                raise ProtocolError("want decide, got %r" % (m.get("msg"),))
            _update(view, m)
            if observe:
                for e in m["events"]:
                    policy.observe(e)
            acts = schedule(view)
            if acts:
                write(b'{"msg":"actions","actions":' + dumps(acts).encode() + b"}\n")
            else:
                write(b'{"msg":"actions","actions":[]}\n')
            flush()
    except BrokenPipeError:
        return
    except Exception as e:
        try:
            conn.send({"msg": "error", "error": "%s: %s" % (type(e).__name__, e)})
        except OSError:
            pass
        raise
