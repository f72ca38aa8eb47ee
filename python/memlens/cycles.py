"""Reference cycles that hold tensors: a gc-callback observer for ``memlens record --cycles``.

Entry point (called by the bootstrap when MEMLENS_RECORD_CYCLES=1; safe before torch is imported)::

    install(out_dir: str, device: str = "cuda", rank: int = 0, max_graphs: int = 100,
            max_nodes: int = 1000, step: Callable[[], Optional[int]] = lambda: None,
            log: Callable[[str], None] = <writes "memlens: ..." to stderr>) -> None
    uninstall() -> None          # removes the observer (tests; install() calls it first)

After each garbage collection that found garbage holding tensors on ``device`` ("cuda", "cpu" or
"cuda:1"), one JSON file ``<out_dir>/cycles/rank<R>_pid<P>_gc<N>.json`` describes that garbage's
object graph (schema: docs/cycles-format.md). It works like PyTorch's torch.utils.viz._cycles:

- on 'start' the collector is told to save its garbage (gc.DEBUG_SAVEALL, on top of the program's
  own debug flags, which are restored on 'stop'); the collector still runs __del__ methods and
  weakref callbacks exactly as usual, it only keeps the objects in gc.garbage instead of clearing
  them;
- on 'stop' the objects this pass appended to gc.garbage are examined (_graph.py), taken out of
  gc.garbage again (the program's own entries stay), and one more collection of the generation the
  survivors were moved to frees them. A collection cannot run inside a gc callback, so that
  follow-up is a pending call (Py_AddPendingCall, through ctypes): the main thread runs it at its
  next safe point between bytecodes, where signal handlers run, i.e. as soon as the program is back
  in Python code. The call is queued by a C-level gc callback (_ARM) appended after every other
  one, so that no Python code of the collection can reach a safe point after it and run the
  follow-up too early (inside the collection, where gc.collect does nothing). A one-shot
  sys.setprofile hook, as PyTorch's tool uses, crashes CPython 3.11 when set from a collection
  that an allocation triggered in the middle of a bytecode, and displaces the program's profiler.
  Where ctypes cannot reach the C API, collections
  are not observed: the saved garbage could not be freed in time.

The observer never raises into the program: a failure is logged once and the observer turns itself
off (the collection in progress still has its flags restored and its garbage freed).
"""

import atexit
import ctypes
import functools
import gc
import json
import os
import socket
import sys
import time

from . import _graph

__all__ = ["install", "uninstall"]


def _stderr_log(message):
    try:
        sys.stderr.write("memlens: " + message + "\n")
    except Exception:
        pass


def _no_step():
    return None


class _Observer:
    def __init__(self, out_dir, device, rank, max_graphs, max_nodes, step, log):
        self.cycles_dir = os.path.join(out_dir, "cycles")
        self.device = device
        self.rank = rank
        self.max_graphs = max_graphs
        self.max_nodes = max_nodes
        self.step = step
        self.log = log
        self.hostname = socket.gethostname()
        self.enabled = True
        self.observing = False  # this collection runs with DEBUG_SAVEALL set by us
        self.program_flags = 0
        self.garbage_start = 0
        self.pending = None  # generation the follow-up collection must collect, or None
        self.in_followup = False
        self.followup_ran = False
        self.collections = 0  # observed collections in this process (file name's N)
        self.graphs = 0  # files written by this process

    # -- gc callback -------------------------------------------------------------------------

    def callback(self, phase, info):
        if self.in_followup:
            if phase == "start":
                self.followup_ran = True
            return
        if phase == "start":
            self._start(info)
        elif self.observing:
            self._stop(info)

    def _start(self, info):
        if self.pending is not None and info.get("generation", 0) >= self.pending:
            # This collection frees the saved garbage itself; the follow-up has nothing left to do.
            self.pending = None
        if not self.enabled or self.pending is not None:
            return
        torch = sys.modules.get("torch")
        if torch is None or getattr(torch, "Tensor", None) is None:
            return  # no tensor can exist yet: nothing to look for, nothing to pay
        try:
            self.program_flags = gc.get_debug()
            self.garbage_start = len(gc.garbage)
            gc.set_debug(self.program_flags | gc.DEBUG_SAVEALL)
            self.observing = True
        except Exception as error:
            self._fail("could not start observing a collection", error)

    def _stop(self, info):
        self.observing = False
        garbage = gc.garbage
        start = self.garbage_start
        found = garbage[start:]
        try:
            self.collections += 1
            if found and self.enabled:
                self._report(found, info)
        except Exception as error:
            self._fail("could not describe a collection's garbage", error)  # a bug of ours
        finally:
            gc.set_debug(self.program_flags)
            keep = self.program_flags & gc.DEBUG_SAVEALL  # the program asked for gc.garbage itself
            if found and not keep:
                del garbage[start:]
                del found
                self._schedule_followup(min(info.get("generation", 2) + 1, 2))

    # -- freeing the saved garbage -------------------------------------------------------------

    def _schedule_followup(self, generation):
        global _followup_owner
        _followup_owner = self
        self.pending = generation
        if _ARM not in gc.callbacks:
            gc.callbacks.append(_ARM)  # called at the end of this very round of callbacks

    def run_followup(self):
        while _ARM in gc.callbacks:
            gc.callbacks.remove(_ARM)
        generation = self.pending
        if generation is None:
            return
        self.in_followup = True
        self.followup_ran = False
        flags = gc.get_debug()
        try:
            gc.set_debug(0)
            gc.collect(generation)
        except Exception as error:
            self._fail("could not free a collection's saved garbage", error)
        finally:
            gc.set_debug(flags)
            self.in_followup = False
        if self.followup_ran or self.callback not in gc.callbacks:
            self.pending = None  # (uninstalled meanwhile: ran or not, nobody would notice)
        else:
            # Still inside a collection (a callback appended after _ARM ran Python code): queue
            # again, at the end of that round of callbacks.
            self._schedule_followup(generation)

    # -- reporting -----------------------------------------------------------------------------

    def _report(self, found, info):
        graph = _graph.describe_garbage(found, self.device, self.max_nodes)
        if graph is None:
            return
        if self.device.startswith("cuda"):
            _graph.add_cuda_stacks(graph, sys.modules["torch"])
        doc = {
            "memlens_cycles": 1,
            "rank": self.rank,
            "pid": os.getpid(),
            "hostname": self.hostname,
            "collection": self.collections,
            "generation": info.get("generation"),
            "time_us": time.time_ns() // 1000,
            "step": self._step(),
            "device": self.device,
        }
        doc.update(graph)
        try:
            self._write(doc)
        except OSError as error:
            self._fail("could not write a cycle graph", error)
            return
        self.graphs += 1
        if self.graphs >= self.max_graphs:
            self.enabled = False
            self.log(
                "cycles: wrote %d graphs (the limit); later collections are not observed"
                % self.graphs
            )

    def _step(self):
        try:
            value = self.step()
        except Exception:
            return None
        return value if type(value) is int else None

    def _write(self, doc):
        os.makedirs(self.cycles_dir, exist_ok=True)
        name = "rank%d_pid%d_gc%d.json" % (self.rank, doc["pid"], doc["collection"])
        path = os.path.join(self.cycles_dir, name)
        temp = os.path.join(self.cycles_dir, "." + name + ".tmp")
        try:
            with open(temp, "w", encoding="utf-8") as out:
                out.write(json.dumps(doc, separators=(",", ":")))
            os.replace(temp, path)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise

    def _fail(self, what, error):
        if self.enabled:
            self.enabled = False
            self.log("cycles: %s (%s: %s); cycle graphs are off for this process"
                     % (what, type(error).__name__, error))

    def after_fork_in_child(self):
        self.collections = 0
        self.graphs = 0


_observer = None
_followup_owner = None  # the observer whose follow-up is queued (it may be uninstalled since)


def _pending_followup(_arg):
    # Called by the interpreter, not by Python code: nothing may escape, and 0 means "no error".
    try:
        if _followup_owner is not None:
            _followup_owner.run_followup()
    except BaseException:
        pass
    return 0


class _Ignored(ctypes.c_void_p):
    """The gc's (phase, info) arguments, passed on to Py_AddPendingCall as unused NULLs."""

    @classmethod
    def from_param(cls, value):
        return None


try:
    _PENDING_CALL_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
    _FOLLOWUP_CALL = _PENDING_CALL_TYPE(_pending_followup)
    _ADD_PENDING_CALL = ctypes.PYFUNCTYPE(
        ctypes.c_int, _PENDING_CALL_TYPE, ctypes.c_void_p, _Ignored, _Ignored
    )(("Py_AddPendingCall", ctypes.pythonapi))
    # A gc callback with no Python frame: queuing from it reaches no safe point before the
    # collection ends.
    _ARM = functools.partial(_ADD_PENDING_CALL, _FOLLOWUP_CALL, None)
except (AttributeError, OSError):  # not CPython, or its C API is not exported
    _ADD_PENDING_CALL = _ARM = None


def install(out_dir, device="cuda", rank=0, max_graphs=100, max_nodes=1000, step=_no_step,
            log=_stderr_log):
    """Observe every garbage collection of this process; see the module docstring."""
    global _observer
    uninstall()
    if _ARM is None:
        log("cycles: this Python's C API is out of reach (ctypes.pythonapi); "
            "cycles are not recorded")
        return
    _observer = _Observer(out_dir, device, rank, max_graphs, max_nodes, step, log)
    gc.callbacks.append(_observer.callback)


def uninstall():
    """Stop observing. A follow-up collection already scheduled still runs."""
    global _observer
    observer = _observer
    _observer = None
    if observer is None:
        return
    observer.enabled = False
    try:
        gc.callbacks.remove(observer.callback)
    except ValueError:
        pass


def _at_exit():
    # Collections during interpreter shutdown see half-torn-down modules: stop before them.
    if _observer is not None:
        _observer.enabled = False


def _after_fork_in_child():
    if _observer is not None:
        _observer.after_fork_in_child()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
