"""memlens record's helper against each PyTorch version's spelling of the calls it makes, with
stand-in functions of those versions' signatures (taken from PyTorch's torch/cuda/memory.py and
torch/optim/optimizer.py of 1.13, 2.0 and 2.1+): which calls start, clear and stop the history, and
how optimizer steps are counted. Prints one JSON document of what was called; the test checks it.
Run with /usr/bin/python3 (torch 1.13, CPU) from the repository root.
"""

import json
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))

import torch  # noqa: E402

from memlens import _history, _steps  # noqa: E402

calls = []


def memory_module(record):
    def snapshot():
        calls.append("_snapshot()")
        return {"segments": [], "device_traces": [[]]}

    return types.SimpleNamespace(_record_memory_history=record, _snapshot=snapshot)


# 2.1 and later: the first argument is "all" | "state" | None; a bool goes to the legacy call.
def record_21(enabled="all", *args, **kwargs):
    calls.append("record(%r, %s)" % (enabled, ", ".join("%s=%r" % kv for kv in sorted(kwargs.items()))))


# 2.0
def record_20(enabled, record_context=True, trace_alloc_max_entries=1, trace_alloc_record_context=False,
              device=None, record_context_cpp=False):
    calls.append("record(%r, record_context=%r, trace_alloc_max_entries=%r, trace_alloc_record_context=%r, "
                 "record_context_cpp=%r)" % (enabled, record_context, trace_alloc_max_entries,
                                             trace_alloc_record_context, record_context_cpp))


# 1.13
def record_113(enabled, device=None):
    calls.append("record(%r)" % (enabled,))


results = {}
for version, record in (("2.1", record_21), ("2.0", record_20), ("1.13", record_113)):
    for stacks in ("python", "all"):
        del calls[:]
        fake = types.SimpleNamespace(cuda=types.SimpleNamespace(memory=memory_module(record)))
        history = _history.History(fake, 5000, stacks)
        history.start()
        calls.append("-- clear")
        history.clear()
        calls.append("-- dump")
        history.dump(os.devnull)
        results["%s %s" % (version, stacks)] = {"api": history.api, "calls": list(calls)}

# Optimizer steps on the running torch (1.13: no global hook, so Optimizer.step is wrapped).
counted = []
how = _steps.on_optimizer_step(torch, lambda optimizer: counted.append(type(optimizer).__name__))


class Clipped(torch.optim.SGD):
    """An optimizer whose step calls its parent's (wrapped too): one step, counted once."""

    def step(self, closure=None):
        return super().step(closure)


w = torch.zeros(2, requires_grad=True)
for cls in (torch.optim.SGD, Clipped, torch.optim.Adam):
    opt = cls([w], lr=0.1)
    w.grad = torch.ones(2)
    opt.step()
    opt.step()
results["steps"] = {"how": how, "counted": counted}

# 2.0 and later: the global post-step hook, called as hook(optimizer, args, kwargs).
import importlib  # noqa: E402

optimizer_module = importlib.import_module("torch.optim.optimizer")
hooks = []
optimizer_module.register_optimizer_step_post_hook = hooks.append
global_counted = []
fake_torch = types.SimpleNamespace(optim=types.SimpleNamespace())
results["global_hook"] = {
    "how": _steps.on_optimizer_step(fake_torch, lambda optimizer: global_counted.append(optimizer)),
}
hooks[0]("the optimizer", (), {})
results["global_hook"]["counted"] = global_counted
print(json.dumps(results, indent=1))
