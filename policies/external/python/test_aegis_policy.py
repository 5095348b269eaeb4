"""Tests of aegis_policy and the bestfit example (python3 -m unittest; the Go
test TestPythonModule runs them in make test)."""

import io
import json
import unittest

from aegis_policy import GPU, Job, Param, Policy, View, place, run
from bestfit import BestFit


def converse(policy, *msgs):
    """Run policy on the given messages; return the lines it wrote."""
    out = io.BytesIO()
    run(policy, io.BytesIO("".join(json.dumps(m) + "\n" for m in msgs).encode()), out)
    return [json.loads(l) for l in out.getvalue().splitlines()]


def job_rec(i, state, peak=1000.0, util=10.0, gpus=1, on=(), static=True):
    r = {"id": i, "state": state, "attempts": 0, "ooms": 0, "last_failure": "none", "failed_at": 0,
         "failed_shared": False, "on": list(on), "started": 0, "active": False, "active_at": 0}
    if static:
        r.update({"name": "j%d" % i, "gpus": gpus, "submit": 0, "workload": "w", "solo_s": 1, "peak_mib": peak,
                  "util_pct": util, "smact": 0, "smocc": 0, "drama": 0, "analytical_mib": 0, "faketensor_mib": 0,
                  "gpumemnet_mib": 0, "lucid": 0})
    return r


HELLO = {"v": 2, "msg": "hello", "params": {}}


class Protocol(unittest.TestCase):
    def test_hello_declares_params(self):
        (h,) = converse(BestFit(), HELLO)
        self.assertEqual(h["msg"], "hello")
        self.assertEqual(h["name"], "bestfit")
        self.assertEqual([p["key"] for p in h["params"]], ["util_cap", "guard_mib"])
        self.assertEqual(h["params"][0]["default"], "100")
        self.assertEqual(h["skip"], ["started", "active"])

    def test_versions(self):
        """Version 2 declares skip_empty and events; to an aegis speaking
        version 1 the answer is version 1's, without them."""
        (h,) = converse(BestFit(), HELLO)
        self.assertEqual((h["v"], h["skip_empty"], h["events"]), (2, True, False))
        (h,) = converse(BestFit(), dict(HELLO, v=1))
        self.assertEqual(h["v"], 1)
        self.assertNotIn("skip_empty", h)
        self.assertNotIn("events", h)

        class Observing(Policy):
            def observe(self, e):
                pass

        (h,) = converse(Observing(), HELLO)
        self.assertNotIn("events", h, "a policy that observes gets the events")
        self.assertNotIn("skip_empty", h, "a policy acts with an empty queue unless it says")
        (h,) = converse(Policy(), dict(HELLO, v=3))
        self.assertEqual(h["v"], 2, "the newest version both speak")
        with self.assertRaises(Exception):
            converse(Policy(), dict(HELLO, v=0))

    def test_decide_without_events(self):
        """A policy that declared events false is sent none."""
        d = {"msg": "decide", "now": 1, "n_jobs": 1, "jobs": [job_rec(0, "pending")],
             "gpus": [{"index": 0, "capacity_mib": 40960, "used_mib": 0, "jobs": []}], "failed": [], "queue_len": 1}
        out = converse(BestFit(), HELLO, d)
        self.assertEqual(out[1], {"msg": "actions", "actions": [place(0, [0])]})

    def test_bad_param_is_reported(self):
        with self.assertRaises(ValueError):
            converse(BestFit(), {"v": 1, "msg": "hello", "params": {"util_cap": "7000"}})
        with self.assertRaises(ValueError):
            converse(BestFit(), {"v": 1, "msg": "hello", "params": {"utilcap": "1"}})

    def test_view_is_kept_from_changes(self):
        seen = []

        class Spy(Policy):
            def schedule(self, v):
                seen.append((v.now, list(v.queue), [g.jobs for g in v.gpus], v.failed))
                return []

        d1 = {"msg": "decide", "now": 1, "pressure": True, "events": [], "n_jobs": 3,
              "jobs": [job_rec(0, "pending"), job_rec(2, "pending")],
              "gpus": [{"index": 0, "capacity_mib": 40960, "used_mib": 0, "jobs": []}], "failed": [], "queue_len": 2}
        d2 = {"msg": "decide", "now": 2, "events": [],
              "jobs": [job_rec(0, "running", on=[0], static=False), job_rec(1, "pending")],
              "gpus": [{"index": 0, "capacity_mib": 40960, "used_mib": 5, "jobs": [0]}], "queue_len": 2}
        out = converse(Spy(), HELLO, d1, d2)
        self.assertEqual([o["msg"] for o in out], ["hello", "actions", "actions"])
        self.assertEqual(seen, [(1, [0, 2], [[]], []), (2, [1, 2], [[0]], [])])

    def test_queue_out_of_step_is_an_error(self):
        d = {"msg": "decide", "now": 1, "events": [], "n_jobs": 1, "jobs": [job_rec(0, "pending")], "gpus": [],
             "failed": [], "queue_len": 2}
        with self.assertRaises(Exception):
            converse(Policy(), HELLO, d)


class BestFitRules(unittest.TestCase):
    """The Go table test's cases (policies/bestfit) on hand-built views."""

    def view(self, running, *queued):
        v = View(None)
        for g, js in enumerate(running):
            gpu = GPU(g)
            gpu.capacity_mib = 40960.0
            v.gpus.append(gpu)
            for peak, util in js:
                j = Job(len(v.jobs))
                j.gpus, j.state, j.on, j.peak_mib, j.util_pct = 1, "running", [g], peak, util
                v.jobs.append(j)
                gpu.jobs.append(j.id)
        for peak, util, n in queued:
            j = Job(len(v.jobs))
            j.gpus, j.state, j.peak_mib, j.util_pct = n, "pending", peak, util
            v.jobs.append(j)
            v.queue.append(j.id)
        return v

    def decide(self, v, **params):
        p = BestFit()
        p.configure({k: str(x) for k, x in params.items()})
        return p.schedule(v)

    def test_tightest_fit(self):
        self.assertEqual(self.decide(self.view([[(10000, 30)], [(30000, 30)], []], (8000, 30, 1))), [place(2, [1])])

    def test_memory_guard_and_cap(self):
        v = self.view([[(30500, 10)]], (10000, 10, 1))
        self.assertEqual(self.decide(v)[0]["reason"], "memory")
        self.assertEqual(self.decide(v, guard_mib=0), [place(1, [0])])
        v = self.view([[(1000, 60)]], (1000, 50, 1))
        self.assertEqual(self.decide(v)[0]["reason"], "utilization")

    def test_two_gpus(self):
        self.assertEqual(self.decide(self.view([[(20000, 10)], [], [(30000, 10)]], (5000, 10, 2))), [place(2, [0, 2])])

    def test_param(self):
        self.assertEqual(Param(1.5, lo=0, hi=2).read("k", "2"), 2.0)
        with self.assertRaises(ValueError):
            Param(1.5, lo=0, hi=2).read("k", "3")
        with self.assertRaises(ValueError):
            Param("a", choices=["a", "b"]).read("k", "c")


if __name__ == "__main__":
    unittest.main()
