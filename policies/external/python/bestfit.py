"""bestfit: the example policy of docs/own-policy.md in Python, the same
policy as aegis's policies/bestfit (a test holds the two to identical
results). Strict FIFO; each job goes on the GPUs it fits most tightly by
profiled memory, with a cap on the summed profiled utilization of a shared
GPU. Run it with

    aegis simulate --policy external --set command="python3 policies/external/python/bestfit.py"
"""

from aegis_policy import Param, Policy, defer, place, run, stop


class BestFit(Policy):
    NAME = "bestfit"
    PARAMS = {
        "util_cap": Param(100.0, "most summed profiled utilization (percent) of a shared GPU", lo=1, hi=1000),
        "guard_mib": Param(512.0, "memory kept free on a shared GPU beyond the summed profiled peaks", lo=0, hi=1 << 20),
    }
    # A job's start (our own placement) and its first activity change
    # nothing this policy reads: aegis need not ask. It never wakes, but a
    # 1 s grid counts deferrals in seconds, so skipped decisions change no
    # output.
    SKIP = ("started", "active")
    TICK = 1
    # With no job pending it has nothing to do: aegis need not ask.
    SKIP_EMPTY = True

    def schedule(self, v):
        if not v.queue:
            return []
        jobs, gpus = v.jobs, v.gpus
        mem = [0.0] * len(gpus)  # profiled peaks placed on each GPU
        util = [0.0] * len(gpus)  # profiled utilization placed on each GPU
        taken = [False] * len(gpus)  # given a job in this decision
        for g in gpus:
            for i in g.jobs:
                mem[g.index] += jobs[i].peak_mib
                util[g.index] += jobs[i].util_pct
        acts = []
        for i in v.queue:
            j = jobs[i]
            if j.last_failure != "none" and (j.last_failure != "oom" or not j.failed_shared):
                acts.append(stop(i, "failed alone: " + j.last_failure))
                continue
            chosen, defers = self.fit(v, j, mem, util, taken)
            if chosen is None:
                return acts + defers  # head-of-line blocking
            for g in chosen:
                mem[g] += j.peak_mib
                util[g] += j.util_pct
                taken[g] = True
            acts.append(place(i, chosen))
        return acts

    def fit(self, v, j, mem, util, taken):
        """The GPUs for j, or None and a deferral for each GPU that refused it."""
        fits, defers = [], []
        for g in v.gpus:
            k = g.index
            if not g.jobs and not taken[k]:
                reason = ""  # an idle GPU takes any job
            elif j.last_failure != "none":
                reason = "exclusive"
            elif mem[k] + j.peak_mib + self.p["guard_mib"] > g.capacity_mib:
                reason = "memory"
            elif util[k] + j.util_pct > self.p["util_cap"]:
                reason = "utilization"
            else:
                reason = ""
            if reason:
                defers.append(defer(j.id, k, reason))
            else:
                fits.append(k)
        if len(fits) < j.gpus:
            return None, defers
        fits.sort(key=lambda k: (v.gpus[k].capacity_mib - (mem[k] + j.peak_mib), k))  # tightest first
        return sorted(fits[:j.gpus]), None


if __name__ == "__main__":
    run(BestFit())
