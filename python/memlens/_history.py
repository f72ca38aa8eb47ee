"""torch.cuda.memory's history calls as the running PyTorch spells them.

- 2.1 and later: _record_memory_history(enabled="all", context="all", stacks=..., max_entries=N);
  enabled=None stops, and stopping empties the trace ring buffer; _dump_snapshot(path) writes the
  pickle.
- 2.0: _record_memory_history(enabled: bool, record_context, trace_alloc_max_entries,
  trace_alloc_record_context, device, record_context_cpp); every call resets the ring buffer;
  no _dump_snapshot (pickle _snapshot() ourselves).
- 1.13: _record_memory_history(enabled: bool, device): block histories only, no trace to clear.
"""

import inspect
import pickle


class History:
    def __init__(self, torch, max_entries, stacks):
        self.memory = torch.cuda.memory
        self.record = self.memory._record_memory_history
        self.max_entries = max_entries
        self.stacks = stacks
        self.params = _parameters(self.record)
        self.api = _api(self.params)

    def start(self):
        if self.api == "2.1":
            self.record(enabled="all", context="all", stacks=self.stacks, max_entries=self.max_entries)
        elif self.api == "2.0":
            extra = {"record_context_cpp": True} if self.stacks == "all" and "record_context_cpp" in self.params else {}
            self.record(
                True,
                record_context=True,
                trace_alloc_max_entries=self.max_entries,
                trace_alloc_record_context=True,
                **extra
            )
        else:
            self.record(True)

    def stop(self):
        if self.api == "2.1":
            self.record(enabled=None)
        else:
            self.record(False)

    def clear(self):
        """Start a new window: the trace holds nothing recorded before this call."""
        if self.api == "1.13":
            return
        self.stop()
        self.start()

    def dump(self, path):
        dump_snapshot = getattr(self.memory, "_dump_snapshot", None)
        if dump_snapshot is not None:
            dump_snapshot(path)
            return
        with open(path, "wb") as f:
            pickle.dump(self.memory._snapshot(), f)


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def _api(params):
    if "trace_alloc_max_entries" in params:
        return "2.0"
    first = next(iter(params.values()), None)
    if first is not None and isinstance(first.default, str):
        return "2.1"  # (enabled="all", *args, **kwargs)
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()) or "max_entries" in params:
        return "2.1"
    return "1.13"
