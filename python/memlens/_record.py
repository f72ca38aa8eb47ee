"""The recorder `memlens record` starts in every Python process of a run (see sitecustomize.py).

Once the program imports torch, it hooks optimizer steps, SIGUSR1 and exit, and, when CUDA is
initialised (never before: initialising CUDA in a parent breaks forked children), starts the memory
history and attaches the OOM observer. Windows are cut every K optimizer steps, on memlens.dump()
and SIGUSR1; each window's snapshot is written to a temporary name and renamed, and the history is
cleared after it so windows never mix. Layout (verl's, read by `memlens run`):

    <out>/step<N>/torch_memory_rank<R>_pid<P>.pickle          window ending at optimizer step N
    <out>/<name>_step<N>/torch_memory_rank<R>_pid<P>.pickle   memlens.dump(name), sigusr1, exit
    <out>/oom_<stamp>/torch_memory_oom_rank<R>_pid<P>.pickle  at an OOM (the window goes on)
    <out>/.memlens/proc_<pid>.json                            this process: what it did, its errors

A failure here is said once on stderr and stops recording in this process; the program goes on.
"""

import atexit
import datetime
import json
import os
import re
import signal
import socket
import sys
import threading
import time
import weakref

from memlens._after_import import after_import

_RECORDER = None


def current():
    return _RECORDER


def install():
    global _RECORDER
    if _RECORDER is None:
        _RECORDER = Recorder(Options(os.environ))
        after_import("torch", _RECORDER.on_torch)
    return _RECORDER


class Options:
    """What `memlens record` passed in MEMLENS_RECORD_* variables."""

    def __init__(self, env):
        self.out = env["MEMLENS_RECORD_OUT"]
        self.every = int(env.get("MEMLENS_RECORD_EVERY", "1"))
        self.max_entries = int(env.get("MEMLENS_RECORD_MAX_ENTRIES", "100000"))
        self.stacks = env.get("MEMLENS_RECORD_STACKS", "python")
        self.max_bytes = int(env.get("MEMLENS_RECORD_MAX_BYTES", "0"))  # 0: no bound
        self.cycles = env.get("MEMLENS_RECORD_CYCLES", "0") == "1"
        self.cycles_device = env.get("MEMLENS_RECORD_CYCLES_DEVICE", "cuda")
        self.cycles_max_graphs = int(env.get("MEMLENS_RECORD_CYCLES_MAX_GRAPHS", "100"))
        self.cycles_max_nodes = int(env.get("MEMLENS_RECORD_CYCLES_MAX_NODES", "1000"))


#: Drops said on stderr per process; the rest are in run.json.
_DROPS_SAID = 3
#: Seconds between rewrites of the process record after step windows: its file list grows with the
#: run, and rewriting it at every step of a long run would cost O(steps^2). Files written since are
#: still found on disk by `memlens record`; exit, OOM and failures rewrite it at once.
_PROC_EVERY_S = 5.0


class Recorder:
    def __init__(self, options):
        self.options = options
        self.pid = os.getpid()
        self.started = _now()
        self.ended = None
        self.torch = None
        self.history = None
        self.cuda = "torch not imported"
        self.step = 0
        self.step_counts = weakref.WeakKeyDictionary()
        self.step_hook = None
        self.cycles = None
        self.allocator = _allocator_env()
        self.files = []
        self.dropped = []
        self.errors = []
        self.failed = False
        self.cutting = False
        self.proc_written = 0.0
        self.lock = threading.RLock()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)

    # --- start ---------------------------------------------------------------------------------

    def on_torch(self, torch):
        try:
            self.torch = torch
            self.step_hook = _steps().on_optimizer_step(torch, self._on_step)
            if self.options.cycles:
                self._install_cycles()
            if getattr(torch.version, "cuda", None) or getattr(torch.version, "hip", None):
                self.cuda = "not initialised"
                # Run at CUDA's initialisation (or now, if it has happened); without the queue, the
                # first optimizer step after CUDA starts begins the recording (see _on_step).
                lazy_call = getattr(torch.cuda, "_lazy_call", None)
                if lazy_call is not None:
                    lazy_call(self._on_cuda_init)
            else:
                self.cuda = "cpu-only build"
            self._install_sigusr1()
            atexit.register(self._at_exit)
            self.write_proc()
        except Exception as err:
            self.fail("setup after importing torch", err)

    def _on_cuda_init(self):
        # Runs inside torch.cuda's lazy initialisation: it must never raise.
        try:
            if self.history is not None or self.failed or os.getpid() != self.pid:
                return
            from memlens._history import History

            history = History(self.torch, self.options.max_entries, self.options.stacks)
            history.start()
            self.history = history
            self.cuda = "recording"
            attach = getattr(self.torch._C, "_cuda_attach_out_of_memory_observer", None)
            if attach is not None:
                attach(self._on_oom)
            backend = getattr(self.torch.cuda, "get_allocator_backend", None)
            if backend is not None:
                self.allocator["backend"] = backend()
            self.write_proc()
        except Exception as err:
            self.fail("starting the memory history", err)

    def _install_cycles(self):
        try:
            from memlens import cycles
        except ImportError as err:
            self.fail("loading the reference-cycle observer", err)
            return
        # The rank as torch is imported: torchrun's RANK (torch.distributed is not initialised yet).
        cycles.install(
            out_dir=self.options.out,
            device=self.options.cycles_device,
            rank=self.rank(),
            max_graphs=self.options.cycles_max_graphs,
            max_nodes=self.options.cycles_max_nodes,
            step=lambda: self.step,
            log=_say,
        )
        self.cycles = "observing"

    def _install_sigusr1(self):
        if not hasattr(signal, "SIGUSR1") or threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGUSR1)
        if previous is None:
            return  # a handler installed outside Python: leave it alone

        def on_sigusr1(signum, frame):
            if not self.cutting:
                self.dump_named("sigusr1")
            if callable(previous):
                previous(signum, frame)

        signal.signal(signal.SIGUSR1, on_sigusr1)

    # --- windows -------------------------------------------------------------------------------

    def _on_step(self, optimizer):
        if self.failed:
            return
        try:
            n = self.step_counts.get(optimizer, 0) + 1
            self.step_counts[optimizer] = n
            if n <= self.step:
                return  # another optimizer of the same training step
            self.step = n
            if self.history is None and self.cuda == "not initialised" and self.torch.cuda.is_initialized():
                self._on_cuda_init()  # a PyTorch without the lazy-call queue
            elif self.options.every > 0 and n % self.options.every == 0:
                self._cut("step%d" % n, "step", None, clear=True)
        except Exception as err:
            self.fail("cutting the window at optimizer step %d" % self.step, err)

    def dump_named(self, name, clear=True, kind="named"):
        try:
            return self._cut(self._named_dir(name), kind, name, clear=clear)
        except Exception as err:
            self.fail("dumping %r" % name, err)
            return None

    def _on_oom(self, device, requested, device_allocated, device_free):
        try:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
            self._cut("oom_" + stamp, "oom", None, clear=False, extra={"device": device, "requested": requested})
        except Exception as err:
            self.fail("dumping at an OOM", err)

    def _at_exit(self):
        if os.getpid() != self.pid:
            return
        if self.history is not None:
            self.dump_named("exit", clear=False, kind="exit")
        if self.history is None and self.cuda == "not initialised":
            try:
                self.cuda = "not initialised" if self.torch.cuda.is_available() else "no device"
            except Exception:
                self.cuda = "no device"
        self.ended = _now()
        self.write_proc()

    def _cut(self, dirname, kind, name, clear, extra=None):
        with self.lock:
            if self.history is None or self.failed or os.getpid() != self.pid:
                return None
            self.cutting = True
            try:
                directory = os.path.join(self.options.out, dirname)
                os.makedirs(directory, exist_ok=True)
                prefix = "torch_memory_oom_" if kind == "oom" else "torch_memory_"
                path = os.path.join(directory, "%srank%d_pid%d.pickle" % (prefix, self.rank(), self.pid))
                temporary = path + ".tmp"
                self.history.dump(temporary)
                os.replace(temporary, path)
                if clear:
                    self.history.clear()
                entry = {
                    "path": os.path.relpath(path, self.options.out).replace(os.sep, "/"),
                    "kind": kind,
                    "step": self.step,
                    "name": name,
                    "bytes": os.path.getsize(path),
                    "time": _now(),
                }
                if extra:
                    entry.update(extra)
                self.files.append(entry)
                if kind == "step":
                    self._bound_disk()
                self.write_proc(force=kind != "step")
                return path
            finally:
                self.cutting = False

    def _named_dir(self, name):
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)).strip("._")[:64] or "dump"
        base = "%s_step%d" % (safe, self.step)
        candidate, k = base, 1
        taken = set(f["path"].split("/")[0] for f in self.files)
        while candidate in taken:
            k += 1
            candidate = "%s_%d" % (base, k)
        return candidate

    def _bound_disk(self):
        """Over --max-bytes: drop this process's oldest step windows (never OOM or named dumps, never
        the window just written). Every rank does the same, so the same windows go."""
        limit = self.options.max_bytes
        if limit <= 0:
            return
        total = _snapshot_bytes(self.options.out)
        own = [f for f in self.files if f["kind"] == "step" and not f.get("dropped")]
        while total > limit and len(own) > 1:
            oldest = own.pop(0)
            path = os.path.join(self.options.out, oldest["path"])
            try:
                size = os.path.getsize(path)
                os.remove(path)
            except OSError:
                size = 0
            try:
                os.rmdir(os.path.dirname(path))
            except OSError:
                pass  # other ranks' files are still there
            total -= size
            oldest["dropped"] = True
            self.dropped.append({"path": oldest["path"], "step": oldest["step"], "bytes": size, "time": _now()})
            if len(self.dropped) <= _DROPS_SAID:
                more = " (further drops are listed in run.json)" if len(self.dropped) == _DROPS_SAID else ""
                _say(
                    "dropped %s (%s, the oldest window) to keep %s under --max-bytes %s%s"
                    % (oldest["path"], _size(size), self.options.out, _size(limit), more)
                )

    # --- facts ---------------------------------------------------------------------------------

    def rank(self):
        try:
            distributed = self.torch.distributed
            if distributed.is_available() and distributed.is_initialized():
                return int(distributed.get_rank())
        except Exception:
            pass
        for variable in ("RANK", "LOCAL_RANK"):
            value = os.environ.get(variable, "")
            if value.isdigit():
                return int(value)
        return 0

    def fail(self, where, err):
        self.errors.append({"where": where, "error": "%s: %s" % (type(err).__name__, err), "time": _now()})
        if not self.failed:
            _say(
                "%s failed in pid %d (%s: %s); recording in this process stops, the program goes on"
                % (where, os.getpid(), type(err).__name__, err)
            )
        self.failed = True
        try:
            self.write_proc()
        except Exception:
            pass

    def write_proc(self, force=True):
        if not force and time.monotonic() - self.proc_written < _PROC_EVERY_S:
            return
        self.proc_written = time.monotonic()
        torch = self.torch
        record = {
            "memlens_proc": 1,
            "pid": self.pid,
            "ppid": os.getppid(),
            "rank": self.rank() if torch is not None else None,
            "hostname": socket.gethostname(),
            "argv": list(sys.argv),
            "python": sys.version.split()[0],
            "torch": str(torch.__version__) if torch is not None else None,
            "cuda": self.cuda,
            "history_api": self.history.api if self.history is not None else None,
            "step_hook": self.step_hook,
            "cycles": self.cycles,
            "allocator": self.allocator,
            "options": vars(self.options),
            "started": self.started,
            "ended": self.ended,
            "steps": self.step,
            "files": [f for f in self.files if not f.get("dropped")],
            "dropped": self.dropped,
            "errors": self.errors,
        }
        directory = os.path.join(self.options.out, ".memlens")
        os.makedirs(directory, exist_ok=True)
        _write_json(os.path.join(directory, "proc_%d.json" % self.pid), record)

    def _forked(self):
        # A forked child cannot use its parent's CUDA context: it records nothing of its own.
        self.pid = os.getpid()
        self.history = None
        self.files, self.dropped, self.errors = [], [], []
        self.started, self.ended = _now(), None


def _steps():
    from memlens import _steps

    return _steps


def _allocator_env():
    names = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING")
    return {name: os.environ[name] for name in names if name in os.environ}


def _snapshot_bytes(root):
    total = 0
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if not d.startswith(".")]
        for name in names:
            if name.endswith(".pickle"):
                try:
                    total += os.path.getsize(os.path.join(directory, name))
                except OSError:
                    pass
    return total


def _write_json(path, value):
    temporary = "%s.%d.tmp" % (path, os.getpid())
    with open(temporary, "w") as f:
        json.dump(value, f, indent=1)
    os.replace(temporary, path)


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return ("%d %s" if unit == "B" else "%.1f %s") % (n, unit)
        n /= 1024.0


def _say(message):
    try:
        sys.stderr.write("memlens record: %s\n" % message)
        sys.stderr.flush()
    except Exception:
        pass


