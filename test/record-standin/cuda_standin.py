"""TEST-ONLY STAND-IN for exactly the CUDA calls memlens record makes, on a CPU-only torch:

    torch.cuda.is_available / is_initialized        -> True (so torch.cuda._lazy_call runs at once)
    torch.version.cuda                              -> "stand-in"
    torch.cuda.memory._record_memory_history        -> logs the call (2.1+ signature)
    torch.cuda.memory._dump_snapshot(path)          -> writes a small, real snapshot pickle
    torch._C._cuda_attach_out_of_memory_observer    -> keeps the observer; raise_oom() calls it

Every call is appended to $MEMLENS_STANDIN_LOG as one JSON line, so tests can check the sequence
(e.g. that the history is cleared after each window). Set MEMLENS_STANDIN_DUMP_FAILS=1 to make the
dump raise (a helper failure), MEMLENS_STANDIN_NO_LAZY_CALL=1 to remove torch.cuda._lazy_call. The snapshot holds one segment with one live block whose size grows
by 1 MiB with each dump of the process, and the trace holds that block's allocation (plus an 'oom'
entry in a dump made from the OOM observer), so memlens reads each window end to end.
"""

import json
import os
import pickle
import sys
import time

import torch

MiB = 1 << 20
_observers = []
_state = {"dumps": 0, "oom": None}


def _log(**entry):
    entry["pid"] = os.getpid()
    with open(os.environ["MEMLENS_STANDIN_LOG"], "a") as f:
        f.write(json.dumps(entry) + "\n")


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None):
    _log(call="record", enabled=enabled, context=context, stacks=stacks, max_entries=max_entries)


def _dump_snapshot(filename="dump_snapshot.pickle"):
    if os.environ.get("MEMLENS_STANDIN_DUMP_FAILS"):
        raise OSError("stand-in dump fails on purpose")
    _state["dumps"] += 1
    size = _state["dumps"] * MiB
    address = 0x7F0000000000
    total = 32 * MiB
    now = int(time.time() * 1e6)
    frames = [{"filename": "train.py", "line": 10, "name": "step"}]
    trace = [{"action": "alloc", "addr": address, "size": size, "stream": 0, "time_us": now, "frames": frames}]
    if _state["oom"] is not None:
        trace.append({"action": "oom", "device_free": 0, "size": _state["oom"], "stream": 0, "time_us": now + 1})
    segment = {
        "device": 0, "address": address, "total_size": total, "allocated_size": size, "active_size": size,
        "requested_size": size, "stream": 0, "segment_type": "large", "frames": [],
        "blocks": [
            {"address": address, "size": size, "requested_size": size, "state": "active_allocated", "frames": frames},
            {"address": address + size, "size": total - size, "requested_size": 0, "state": "inactive", "frames": []},
        ],
    }
    with open(filename, "wb") as f:
        pickle.dump({"segments": [segment], "device_traces": [trace]}, f)
    _log(call="dump", path=filename)


def _attach_oom_observer(observer):
    _observers.append(observer)
    _log(call="attach_oom_observer")


def raise_oom(requested):
    """What the caching allocator does when a request fails: observers first, then the error."""
    _log(call="oom", requested=requested)
    _state["oom"] = requested
    for observer in _observers:
        observer(0, requested, 0, 0)
    _state["oom"] = None
    raise RuntimeError("CUDA out of memory (stand-in). Tried to allocate %d bytes" % requested)


def install():
    if os.environ.get("MEMLENS_STANDIN_NO_LAZY_CALL"):
        del torch.cuda._lazy_call  # a PyTorch without the queue of calls for CUDA's initialisation
    torch.version.cuda = "stand-in"
    torch.cuda.is_available = lambda: True
    torch.cuda.is_initialized = lambda: True
    torch.cuda.memory._record_memory_history = _record_memory_history
    torch.cuda.memory._dump_snapshot = _dump_snapshot
    torch._C._cuda_attach_out_of_memory_observer = _attach_oom_observer
