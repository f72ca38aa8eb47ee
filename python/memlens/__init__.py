"""memlens's Python helper, shipped with the memlens npm package and put on PYTHONPATH by
`memlens record`. Standard library and torch only; it imports torch only after the program has.

From user code (under `memlens record`; elsewhere these do nothing):

    import memlens
    memlens.dump("after_eval")   # cut the current window: write its snapshot now, start a new one
"""

__all__ = ["dump", "recording"]


def dump(name="dump"):
    """Write the memory history recorded since the last window as a snapshot named `name`
    (<out>/<name>_step<N>/torch_memory_rank<R>_pid<P>.pickle) and start a new window. Returns the
    path written, or None when nothing is recorded in this process (no CUDA, or not under record)."""
    from memlens import _record

    recorder = _record.current()
    return None if recorder is None else recorder.dump_named(name)


def recording():
    """Whether this process records CUDA memory history now."""
    from memlens import _record

    recorder = _record.current()
    return recorder is not None and recorder.history is not None
