#!/usr/bin/env python3
"""A tiny PyTorch training job for `make gpu-check`.

Trains a small MLP on random data on the one GPU CUDA_VISIBLE_DEVICES gives
it, for --seconds of wall time, printing a line every few seconds. With
--mem-frac F it first holds F x the GPU's total memory (measured with
torch.cuda.mem_get_info, so it scales to any GPU), ramping up over a few
seconds the way a real job's memory grows: two such jobs with F > 0.5 on one
GPU cannot both fit, and the second one fails with PyTorch's "CUDA out of
memory" error, which the executor classifies as OOM.

--duty D < 1 sleeps between steps so the job computes only D of the time
(low SM activity: a job the AEGIS policy is willing to collocate with).

Exit codes: 0 done, 2 bad arguments, 1 any other failure (an OOM prints PyTorch's message to stderr).
"""

import argparse
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="training wall time")
    ap.add_argument("--hidden", type=int, default=2048, help="MLP width")
    ap.add_argument("--batch", type=int, default=512, help="batch size")
    ap.add_argument("--mem-frac", type=float, default=0.0,
                    help="fraction of the GPU's total memory to hold while training")
    ap.add_argument("--ramp", type=float, default=4.0, help="seconds over which the memory is taken")
    ap.add_argument("--duty", type=float, default=1.0,
                    help="fraction of wall time spent computing (the rest sleeps): lower means less SM activity")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (0.0 <= args.mem_frac < 1.0):
        print(f"--mem-frac {args.mem_frac}: want 0 <= f < 1", file=sys.stderr)
        return 2
    if not (0.0 < args.duty <= 1.0):
        print(f"--duty {args.duty}: want 0 < d <= 1", file=sys.stderr)
        return 2

    import torch

    if not torch.cuda.is_available():
        print("train.py: CUDA is not available to this process", file=sys.stderr)
        return 1
    torch.manual_seed(args.seed)
    dev = torch.device("cuda")
    free, total = torch.cuda.mem_get_info(dev)
    print(f"train.py: GPU {torch.cuda.get_device_name(dev)}: {free / 2**20:.0f} MiB free of "
          f"{total / 2**20:.0f} MiB; holding {args.mem_frac:.2f} x total", flush=True)

    model = torch.nn.Sequential(
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
        torch.nn.Linear(args.hidden, 10),
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    # Memory held on purpose, taken in steps over --ramp seconds while training.
    want = int(args.mem_frac * total)
    steps = 8
    chunk = want // steps if want else 0
    held = []

    start = time.monotonic()
    last = start
    it = 0
    while True:
        now = time.monotonic()
        if now - start >= args.seconds:
            break
        if chunk and len(held) < steps and now - start >= len(held) * args.ramp / steps:
            # Raises torch.cuda.OutOfMemoryError ("CUDA out of memory") when
            # the GPU is full: the traceback on stderr is the OOM signal.
            held.append(torch.empty(chunk, dtype=torch.uint8, device=dev))
            held[-1].fill_(1)
        x = torch.randn(args.batch, args.hidden, device=dev)
        y = torch.randint(0, 10, (args.batch,), device=dev)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        it += 1
        if args.duty < 1.0:
            torch.cuda.synchronize()
            busy = time.monotonic() - now
            time.sleep(busy * (1.0 - args.duty) / args.duty)
        if now - last >= 5:
            torch.cuda.synchronize()
            print(f"train.py: {now - start:5.1f}s iter {it} loss {loss.item():.4f} "
                  f"allocated {torch.cuda.memory_allocated(dev) / 2**20:.0f} MiB", flush=True)
            last = now
    torch.cuda.synchronize()
    print(f"train.py: done after {it} iterations, {time.monotonic() - start:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
