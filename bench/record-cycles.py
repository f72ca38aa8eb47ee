"""Cost of `memlens record --cycles`'s observer (python/memlens/cycles.py).

Usage: /usr/bin/python3 bench/record-cycles.py [--steps 1000] [--repeats 3]

1. Per collection: gc.collect() of each shape of garbage (CPU time, median of 10 x --repeats),
   without the observer and with it
   (device cpu, so that CPU tensors count as the device's and graphs are written; device cuda on
   the same CPU tensors pays for observing and freeing but writes nothing).
2. A CPU training loop (small MLP, SGD, the collector's own collections) of --steps steps, clean
   and with seed 001's leak (an awaitable tensor whose callback closes over its owner) each step,
   without the observer and with it: CPU seconds of the loop (less sensitive than wall time to a
   loaded machine) and CPU time inside collections (follow-ups and the observer's work included).
   Median of --repeats runs, each in a fresh process.
Prints a Markdown table for bench/RESULTS.md.
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def per_collection(repeats):
    import torch

    from memlens import cycles

    class Node:
        def __init__(self, tensor):
            self.tensor = tensor
            self.link = None

    def make(pairs, with_tensor):
        for _ in range(pairs):
            a = Node(torch.zeros(16) if with_tensor else None)
            b = Node(torch.zeros(16) if with_tensor else None)
            a.link, b.link = b, a

    def timed(shape, observer, generation=2):
        samples = []
        for _ in range(repeats * 10):
            gc.collect()
            make(*shape)
            start = time.process_time()
            gc.collect(generation)
            _ = len([])  # the follow-up runs at the next safe point: count it
            samples.append(time.process_time() - start)
        return statistics.median(samples)

    rows = []
    out = tempfile.mkdtemp(prefix="memlens-cycles-bench-")
    gc.disable()
    for label, shape, generation in (
        ("generation 0, no garbage", (0, False), 0),
        ("generation 0, 100 cyclic pairs without tensors", (100, False), 0),
        ("generation 0, 100 pairs with tensors (graph written)", (100, True), 0),
        ("full, no garbage", (0, False), 2),
        ("full, 1,000 cyclic pairs without tensors", (1000, False), 2),
        ("full, 10 pairs with tensors (graph written)", (10, True), 2),
        ("full, 1,000 pairs with tensors (graph of 1,000 nodes written)", (1000, True), 2),
    ):
        base = timed(shape, None, generation)
        cycles.install(out, device="cpu", max_graphs=10 ** 9, log=lambda m: None)
        observed = timed(shape, "cpu", generation)
        cycles.uninstall()
        cycles.install(out, device="cuda", max_graphs=10 ** 9, log=lambda m: None)
        other = timed(shape, "cuda", generation)
        cycles.uninstall()
        rows.append((label, base, observed, other))
    gc.enable()
    written = os.path.join(out, "cycles")
    sizes = [os.path.getsize(os.path.join(written, name)) for name in os.listdir(written)]
    return rows, max(sizes) if sizes else 0


TRAIN = r"""
import gc, json, os, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "..", "python"))
import torch
mode, leak, steps, out = sys.argv[2], sys.argv[3] == "leak", int(sys.argv[4]), sys.argv[5]
if mode != "off":
    from memlens import cycles
    cycles.install(out, device=mode, log=lambda m: None)

# Time inside collections, the follow-ups included: appended after the observer's callback, the
# clock stops after the observer's 'stop' work (describing, writing). Freeing the garbage is
# counted either way: in the collection without the observer, in the follow-up with it.
in_gc = [0.0, 0.0]
collections = []
def clock(phase, info):
    if phase == "start":
        in_gc[1] = time.process_time()
    else:
        in_gc[0] += time.process_time() - in_gc[1]
        collections.append(info["generation"])
gc.callbacks.append(clock)

class AwaitableTensor:
    def __init__(self, size):
        self._size = size
        self._tensor = None
    def wait(self):
        self._tensor = torch.randn(self._size)
        return self._tensor

class WithViewCallback:
    def __init__(self, awaitable, dim):
        self._awaitable = awaitable
        self._dim = dim
        self._callback = lambda ret: ret.view(-1, self._dim)
    def wait(self):
        return self._callback(self._awaitable.wait())

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(128, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                            torch.nn.ReLU(), torch.nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(32, 128), torch.randint(0, 10, (32,))
start = time.process_time()
for step in range(steps):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if leak:
        WithViewCallback(AwaitableTensor((32, 128)), 128).wait()
elapsed = time.process_time() - start
written = os.path.join(out, "cycles")
files = len(os.listdir(written)) if os.path.isdir(written) else 0
print(json.dumps({"seconds": elapsed, "collections": len(collections), "files": files,
                  "in_gc": in_gc[0]}))
"""


def training(steps, repeats):
    results = {}
    for leak in ("clean", "leak"):
        for mode in ("off", "cuda", "cpu"):
            runs = []
            for _ in range(repeats):
                out = tempfile.mkdtemp(prefix="memlens-cycles-train-")
                done = subprocess.run(
                    [sys.executable, "-c", TRAIN, HERE, mode, leak, str(steps), out],
                    check=True, capture_output=True, text=True,
                )
                runs.append(json.loads(done.stdout))
            runs.sort(key=lambda r: r["seconds"])
            results[(leak, mode)] = runs[len(runs) // 2]
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=["collections", "training"])
    args = parser.parse_args()
    import torch

    print("Python %s, torch %s, %d CPUs, load %s" % (
        sys.version.split()[0], torch.__version__, os.cpu_count(), os.getloadavg()))
    print()
    if args.only != "training":
        collections_table(args.repeats)
    if args.only != "collections":
        training_table(args.steps, args.repeats)


def collections_table(repeats):
    rows, biggest = per_collection(repeats)
    print("| collection | without | observed, device cpu | observed, device cuda (no match) |")
    print("|---|---:|---:|---:|")
    for label, base, observed, other in rows:
        print("| %s | %.1f µs | %.1f µs | %.1f µs |"
              % (label, base * 1e6, observed * 1e6, other * 1e6))
    print()
    print("largest graph file: %d bytes" % biggest)
    print()


def training_table(steps, repeats):
    results = training(steps, repeats)
    print("| %d steps | without | --cycles, device cuda (no match) | --cycles, device cpu |"
          % steps)
    print("|---|---:|---:|---:|")
    for leak in ("clean", "leak"):
        base = results[(leak, "off")]["seconds"]
        cells = []
        for mode in ("off", "cuda", "cpu"):
            r = results[(leak, mode)]
            off = results[(leak, "off")]["in_gc"]
            extra = "" if mode == "off" else " (%+.1f %%)" % ((r["seconds"] / base - 1) * 100)
            gc_cost = "" if mode == "off" else " (%+.1f ms = %+.2f %% of the loop)" % (
                (r["in_gc"] - off) * 1e3, (r["in_gc"] - off) / base * 100)
            cells.append("%.2f CPU s%s; in collections %.1f ms%s; %d collections, %d files" % (
                r["seconds"], extra, r["in_gc"] * 1e3, gc_cost, r["collections"], r["files"]))
        print("| %s | %s |" % (leak, " | ".join(cells)))


main()
