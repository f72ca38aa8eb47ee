"""Garbage shapes for test/cli/record/cycles.test.ts, observed by memlens.cycles with real gc and real
(CPU) torch. Usage: /usr/bin/python3 scenarios.py OUT_DIR [NAME...]

Each scenario runs with the observer installed on OUT_DIR/<name> (device cpu unless it says
otherwise), makes its garbage, collects, and reports what the program itself could see afterwards
(weakrefs, __del__ calls, refcounts, gc state). Prints one JSON object {name: facts}.
"""

import gc
import json
import os
import sys
import weakref

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python"))

import torch  # noqa: E402

from memlens import cycles  # noqa: E402

OUT = sys.argv[1]
LOGS = []


def observe(name, **options):
    LOGS.clear()
    options.setdefault("device", "cpu")
    cycles.install(os.path.join(OUT, name), log=LOGS.append, **options)


def collect():
    """One explicit collection, then one Python call: the follow-up that frees the saved garbage
    runs at the thread's next Python event, as it would in the program."""
    found = gc.collect()
    _ = len([])
    return found


def finish(facts):
    cycles.uninstall()
    facts["logs"] = list(LOGS)
    facts["profile_hook_left"] = sys.getprofile() is not None
    # Anything the observer kept alive would be found now.
    facts["left_for_next_collection"] = gc.collect()
    return facts


class Node:
    """Seed 001's simple leak: a node with a tensor and a link."""

    def __init__(self, size):
        self.tensor = torch.zeros(size)
        self.link = None


def plain():
    observe("plain")
    a, b = Node(256), Node(512)
    a.link, b.link = b, a
    alive = weakref.ref(a)
    del a, b
    collect()
    return finish({"weakref_dead": alive() is None})


def make_state():
    state = {"tensor": torch.ones(100, dtype=torch.float64)}

    def on_done():
        return state

    state["callback"] = on_done  # dict -> function -> cell -> dict


def closure():
    observe("closure")
    make_state()
    collect()
    return finish({})


class Holder:
    def __init__(self):
        self.tensor = torch.zeros(64, dtype=torch.int16)
        self.callback = self.done

    def done(self):
        return self.tensor


def bound_method():
    observe("bound_method")
    Holder()
    collect()
    return finish({})


class AwaitableTensor:
    """Seed 001's talk: the tensor appears when waited on."""

    def __init__(self, tensor_size):
        self._tensor_size = tensor_size
        self._tensor = None

    def wait(self):
        self._tensor = torch.randn(self._tensor_size)
        return self._tensor


class AwaitableTensorWithViewCallback:
    def __init__(self, tensor_awaitable, view_dim):
        self._tensor_awaitable = tensor_awaitable
        self._view_dim = view_dim
        # The hidden cycle: the lambda's closure holds self.
        self._callback = lambda ret: ret.view(-1, self._view_dim)

    def wait(self):
        return self._callback(self._tensor_awaitable.wait())


class AwaitableTensorWithMethodCallback(AwaitableTensorWithViewCallback):
    def __init__(self, tensor_awaitable, view_dim):
        super().__init__(tensor_awaitable, view_dim)
        self._callback = self.view  # the same cycle through a bound method

    def view(self, ret):
        return ret.view(-1, self._view_dim)


def awaitable_closure():
    observe("awaitable_closure")
    for _ in range(3):
        AwaitableTensorWithViewCallback(AwaitableTensor((1, 512, 1024)), 1024).wait()
    collect()
    return finish({})


def awaitable_method():
    observe("awaitable_method")
    AwaitableTensorWithMethodCallback(AwaitableTensor((1, 512, 1024)), 1024).wait()
    collect()
    return finish({})


class Value:
    """Seed 003's hand-written framework: a value node of the graph with its data and its op."""

    def __init__(self, op, inputs, data):
        self.op = op
        self.inputs = inputs
        self.cached_data = data


class Op:
    def __call__(self, *inputs):
        out = Value(self, list(inputs), self.compute(*[x.cached_data for x in inputs]))
        self.output = out  # the op remembers its output: Output -> Op -> Output
        return out


class MatMul(Op):
    def compute(self, a, b):
        return a @ b


class Relu(Op):
    def compute(self, a):
        return a.clamp(min=0)


def graph_nodes():
    observe("graph_nodes", step=lambda: 41)
    weight = Value(None, [], torch.ones(32, 32))  # the model's: stays alive
    for _ in range(2):
        x = Value(None, [], torch.ones(8, 32))
        h = Relu()(MatMul()(x, weight))
        del x, h  # the loop drops the batch; only gc.collect() frees its graph
    collect()
    return finish({"weight_alive": weight.cached_data.shape[0] == 32})


def frame_local():
    observe("frame_local")

    def step():
        activations = torch.zeros(16, 16)
        try:
            raise ValueError("bad batch")
        except ValueError as error:
            kept = error  # error -> traceback -> this frame -> kept -> error
        return activations.sum() + (kept is not None)

    step()
    collect()
    return finish({})


def views():
    """Two views of one storage: each node says its own bytes, the graph's total counts the
    memory once."""
    observe("views")
    a, b = Node(1), Node(1)
    a.tensor = torch.zeros(1000)
    b.tensor = a.tensor[:250]  # same data_ptr, a quarter of the elements
    a.link, b.link = b, a
    del a, b
    collect()
    return finish({})


def materialized_dict():
    """Attributes in a real dict object (vars() was called; Python <= 3.10 always has one) read
    as on 3.11+'s inline attributes. A dict that something else in the garbage holds too stays."""
    observe("materialized_dict")
    a, b = Node(16), Node(16)
    a.link, b.link = b, a
    vars(a), vars(b)
    shared = Node(8)
    shared.me = shared
    shared.alias = vars(shared)  # the dict holds itself: not only its owner does
    del a, b, shared
    collect()
    return finish({})


def no_tensor():
    observe("no_tensor")
    a, b = Node(1), Node(1)
    a.tensor = b.tensor = None
    a.link, b.link = b, a
    del a, b
    collect()
    return finish({})


def other_device():
    observe("other_device", device="cuda")  # CPU tensors in the garbage, looking for CUDA ones
    a, b = Node(8), Node(8)
    a.link, b.link = b, a
    del a, b
    collect()
    return finish({})


def max_graphs():
    observe("max_graphs", max_graphs=2)
    for _ in range(4):
        a, b = Node(4), Node(4)
        a.link, b.link = b, a
        del a, b
        collect()
    return finish({})


def max_nodes():
    """20 pairs, the last one the largest: 10 nodes keep that pair's tensors and its cycle."""
    observe("max_nodes", max_nodes=10)
    for k in range(1, 21):
        a, b = Node(2 * k), Node(2 * k + 1)
        a.link, b.link = b, a
    del a, b
    collect()
    return finish({})


def max_nodes_ring():
    """A 30-node ring cannot fit in 10: the largest tensor and the chain of holders above it."""
    observe("max_nodes_ring", max_nodes=10)
    ring = [Node(1) for _ in range(30)]
    ring[12].tensor = torch.zeros(1000)
    for here, there in zip(ring, ring[1:] + ring[:1]):
        here.link = there
    del ring, here, there
    collect()
    return finish({})


class Finalized:
    deleted = 0

    def __init__(self, payload):
        self.me = self
        self.tensor = torch.zeros(10)
        self.payload = payload

    def __del__(self):
        Finalized.deleted += 1


def behaviour():
    """What the program can see is what it would see without the observer."""
    marker = ["program's own uncollectable"]
    gc.garbage.append(marker)
    program_flags = gc.DEBUG_UNCOLLECTABLE
    gc.set_debug(program_flags)
    observe("behaviour")
    payload = object()
    before = sys.getrefcount(payload)
    calls = []
    obj = Finalized(payload)
    watch = weakref.ref(obj, lambda ref: calls.append("weakref callback"))
    del obj
    found = collect()
    facts = {
        "found": found,
        "weakref_dead": watch() is None,
        "weakref_callbacks": len(calls),
        "del_calls": Finalized.deleted,
        # The cycle held payload; freed at once, the count is back to what it was.
        "payload_refs_extra": sys.getrefcount(payload) - before,
        "flags_restored": gc.get_debug() == program_flags,
        "garbage_kept": gc.garbage == [marker],
    }
    gc.set_debug(0)
    gc.garbage[:] = [item for item in gc.garbage if item is not marker]
    return finish(facts)


def automatic():
    """The collector's own collections (gen 0 mostly), not gc.collect(): the garbage is freed as
    it comes. Each node holds `payload`, so its reference count says how many are not freed yet
    (a weakref would not: weakrefs to garbage are cleared before the garbage is saved)."""
    observe("automatic")
    payload = object()
    base = sys.getrefcount(payload)
    most = 0
    gc.enable()
    gc.set_threshold(100, 10, 10)
    try:
        for _ in range(3000):
            a, b = Node(4), Node(4)
            a.link, b.link = b, a
            a.payload = payload
            del a, b
            most = max(most, sys.getrefcount(payload) - base)
    finally:
        gc.disable()
        gc.set_threshold(700, 10, 10)
    collect()
    return finish({"most_unfreed": most, "unfreed_after": sys.getrefcount(payload) - base})


def other_callbacks():
    """The program's own gc callbacks, one before the observer and one after it, both running
    Python code during the collector's own collections (CPython 3.11 crashed here when the
    follow-up was scheduled with sys.setprofile)."""
    seen = []
    before = lambda phase, info: seen.append((phase, info["generation"]))  # noqa: E731
    gc.callbacks.append(before)
    observe("other_callbacks", max_graphs=5)
    after = lambda phase, info: seen.append((phase, info.get("collected")))  # noqa: E731
    gc.callbacks.append(after)
    payload = object()
    base = sys.getrefcount(payload)
    gc.enable()
    gc.set_threshold(100, 10, 10)
    try:
        for _ in range(1000):
            a, b = Node(4), Node(4)
            a.link, b.link = b, a
            a.payload = payload
            del a, b
    finally:
        gc.disable()
        gc.set_threshold(700, 10, 10)
    collect()
    gc.callbacks.remove(before)
    gc.callbacks.remove(after)
    return finish({"callback_calls": len(seen), "unfreed_after": sys.getrefcount(payload) - base})


def worker_thread():
    """A collection in another thread: the graph is written there, and the garbage is freed once
    the main thread runs Python code again (the follow-up is a main-thread pending call)."""
    import threading

    observe("worker_thread")
    payload = object()
    before = sys.getrefcount(payload)
    found = []

    def work():
        a, b = Node(4), Node(4)
        a.link, b.link = b, a
        a.payload = payload
        del a, b
        found.append(gc.collect())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    _ = len([])
    return finish({"found": found, "payload_refs_extra": sys.getrefcount(payload) - before})


def program_saveall():
    """A program that asked for DEBUG_SAVEALL keeps its gc.garbage; the graph is still written."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    observe("program_saveall")
    a, b = Node(4), Node(4)
    a.link, b.link = b, a
    del a, b
    collect()
    facts = {"garbage_len": len(gc.garbage), "flags": gc.get_debug() == gc.DEBUG_SAVEALL}
    gc.set_debug(0)
    gc.garbage.clear()
    return finish(facts)


def program_profiler():
    """The program's own profile function stays in place and sees its events; the collection is
    observed and freed as usual."""
    observe("program_profiler")
    events = []

    def profiler(frame, event, arg):
        events.append(event)

    payload = object()
    before = sys.getrefcount(payload)
    sys.setprofile(profiler)
    a, b = Node(4), Node(4)
    a.link, b.link = b, a
    a.payload = payload
    del a, b
    collect()
    still_set = sys.getprofile() is profiler
    sys.setprofile(None)
    return finish({"still_set": still_set, "profiler_saw_calls": events.count("call") > 0,
                   "payload_refs_extra": sys.getrefcount(payload) - before})


def failure():
    """The output directory cannot be made: logged once, observer off, garbage still freed."""
    blocker = os.path.join(OUT, "failure_blocker")
    with open(blocker, "w") as out:
        out.write("a file where the directory should be\n")
    cycles.install(blocker, device="cpu", log=LOGS.append)
    LOGS.clear()
    payload = object()
    before = sys.getrefcount(payload)
    for _ in range(2):
        a, b = Node(4), Node(4)
        a.link, b.link = b, a
        a.payload = payload
        del a, b
        collect()
    return finish({"payload_refs_extra": sys.getrefcount(payload) - before})


class Guarded(torch.Tensor):
    """Runs program code on any torch function and attribute read: the observer must not."""

    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Guarded.calls.append(getattr(func, "__name__", "?"))
        return super().__torch_function__(func, types, args, kwargs or {})


class Touchy:
    def __getattribute__(self, name):
        Guarded.calls.append("Touchy." + name)
        return object.__getattribute__(self, name)


def no_program_code():
    observe("no_program_code")
    tensor = torch.zeros(12).as_subclass(Guarded)
    holder = Touchy()
    object.__setattr__(holder, "tensor", tensor)
    object.__setattr__(holder, "me", holder)
    del tensor, holder
    Guarded.calls.clear()
    collect()
    calls = list(Guarded.calls)
    return finish({"program_code_calls": calls})


SCENARIOS = [
    plain, closure, bound_method, awaitable_closure, awaitable_method, graph_nodes, frame_local,
    views, materialized_dict, no_tensor, other_device, max_graphs, max_nodes, max_nodes_ring,
    behaviour, automatic, other_callbacks, worker_thread, program_saveall, program_profiler,
    failure, no_program_code,
]


def main():
    wanted = set(sys.argv[2:])
    gc.disable()  # collections happen where a scenario says, so each sees only its own garbage
    results = {}
    for scenario in SCENARIOS:
        if wanted and scenario.__name__ not in wanted:
            continue
        gc.collect()
        results[scenario.__name__] = scenario()
    print(json.dumps(results))


main()
