"""Allocation stacks for CUDA tensors, checked without a GPU: torch.cuda.memory._snapshot is
replaced by a minimal stand-in returning a snapshot in 2.1's shape (block "frames") and one in
2.0's (block "history"), and the graph holds CUDA tensor entries as the observer would write them.
Prints the stacks found, as JSON."""

import json
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))

from memlens import _graph  # noqa: E402

FRAMES = [{"filename": "train.py", "line": 41, "name": "forward"},
          {"filename": "train.py", "line": 90, "name": "main"}]
SNAPSHOT_21 = {"segments": [{"address": 1000, "blocks": [
    {"size": 512, "state": "active_allocated", "frames": FRAMES},
    {"size": 512, "state": "inactive", "frames": FRAMES},
    {"size": 1024, "state": "active_allocated", "frames": [FRAMES[1]]},
]}]}
SNAPSHOT_20 = {"segments": [{"address": 1000, "blocks": [
    {"size": 512, "state": "active_allocated",
     "history": [{"addr": 1000, "real_size": 500, "frames": [FRAMES[1]]},
                 {"addr": 1000, "real_size": 512, "frames": FRAMES}]},
]}]}


def graph(*pointers):
    return {"nodes": [{"id": i, "type": "Tensor", "label": "Tensor", "tensor": {
        "shape": [1], "dtype": "float32", "bytes": 4, "data_ptr": ptr, "device": "cuda:0",
        "stack": None}} for i, ptr in enumerate(pointers)]}


def stacks(take_snapshot, *pointers):
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(memory=types.SimpleNamespace(
        _snapshot=take_snapshot)))
    g = graph(*pointers)
    _graph.add_cuda_stacks(g, torch)
    return [node["tensor"]["stack"] for node in g["nodes"]]


def no_cuda():
    raise RuntimeError("CUDA is not available")


print(json.dumps({
    # first block start, inside it, the inactive block, the third block's end - 1, past the end
    "v21": stacks(lambda: SNAPSHOT_21, 1000, 1200, 1600, 3047, 3048),
    "v20": stacks(lambda: SNAPSHOT_20, 1100),
    "no_history": stacks(lambda: {"segments": [{"address": 1000, "blocks": [
        {"size": 512, "state": "active_allocated"}]}]}, 1000),
    "snapshot_fails": stacks(no_cuda, 1000),
}))
