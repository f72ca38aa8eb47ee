"""The object graph of one collection's garbage, as cycles.py writes it (docs/cycles-format.md).

Rules (the same as PyTorch's torch.utils.viz._cycles, written independently):
- roots are the tensors on the chosen device among the garbage; without one there is no graph;
- nodes are the garbage objects from which a root can be reached (what keeps it alive), edges the
  references between them found by gc.get_referents, each labelled by how the referrer holds it;
- nodes on a strongly connected component (size > 1, or a self-reference) form the cycle.

Two kinds of object are folded into their owner instead of being nodes, so that a graph reads the
same on every Python version: an instance's own __dict__ (Python 3.11+ usually has none, its
attributes being stored inline) and a function's __closure__ tuple. Each is folded only when its
owner is its sole referrer among the garbage.

Everything here is careful not to run the program's code: attributes are read through the type's
C-level descriptors, never getattr on the object (no __getattr__, properties or __torch_function__),
and nothing calls repr() on an object other than short dict keys of builtin scalar types.
"""

import gc
import os
import sys
import types

LABEL_MAX = 80
_CELL = type((lambda x: lambda: x)(0).__closure__[0])
_SCALAR_KEYS = (str, int, float, bool, type(None), bytes)


def describe_garbage(objects, device, max_nodes):
    """The graph dict (nodes, edges, cycle, truncated, tensor_bytes) of `objects`, or None when no
    tensor on `device` is among them."""
    torch = sys.modules.get("torch")
    tensor_type = getattr(torch, "Tensor", None) if torch is not None else None
    if tensor_type is None:
        return None
    with _no_torch_function(torch):
        roots = [i for i, obj in enumerate(objects) if _is_device_tensor(obj, tensor_type, device)]
        if not roots:
            return None
        return _Builder(objects, tensor_type).build(roots, max_nodes)


class _no_torch_function:
    """Tensor subclasses may override attribute access through __torch_function__."""

    def __init__(self, torch):
        kind = getattr(torch._C, "DisableTorchFunctionSubclass", None) or getattr(
            torch._C, "DisableTorchFunction", None
        )
        self.guard = kind() if kind is not None else None

    def __enter__(self):
        if self.guard is not None:
            self.guard.__enter__()

    def __exit__(self, *exc):
        if self.guard is not None:
            self.guard.__exit__(*exc)


def _is_device_tensor(obj, tensor_type, device):
    if not issubclass(type(obj), tensor_type):
        return False
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    if fake is not None and issubclass(type(obj), getattr(fake, "FakeTensor", ())):
        return False  # claims a device, holds no memory
    try:
        where = tensor_type.device.__get__(obj)
        return (str(where) if ":" in device else where.type) == device
    except Exception:
        return False


class _Builder:
    def __init__(self, objects, tensor_type):
        self.objects = objects
        self.tensor_type = tensor_type
        self.index = {id(obj): i for i, obj in enumerate(objects)}

    def build(self, roots, max_nodes):
        objects, index = self.objects, self.index
        # Referents within the garbage, for every object: what reaches the roots is only known
        # once all of them are.
        succ = []
        pred = [[] for _ in objects]
        for i, obj in enumerate(objects):
            targets = []
            distinct = set()
            for ref in gc.get_referents(obj):
                j = index.get(id(ref))
                if j is not None and j not in distinct:
                    distinct.add(j)
                    targets.append(j)
                    pred[j].append(i)
            succ.append(targets)

        # What keeps a root alive: everything that reaches one, nearest first.
        order = list(roots)
        seen = set(roots)
        for i in order:
            for j in pred[i]:
                if j not in seen:
                    seen.add(j)
                    order.append(j)

        folded = self._folded(order, pred)
        kept = [i for i in order if i not in folded]
        truncated = len(kept) > max_nodes
        if truncated:
            kept = self._most_telling(roots, order, kept, succ, pred, folded, max_nodes)
        node_id = {i: n for n, i in enumerate(kept)}

        nodes = [self._node(n, objects[i]) for n, i in enumerate(kept)]
        edges = []
        for i in kept:
            for label, kind, j in self._edges(i, succ, folded):
                if j in node_id:
                    edges.append(
                        {"from": node_id[i], "to": node_id[j], "label": label, "kind": kind}
                    )
        # Views of one storage share its memory: count each data_ptr once, at its largest view.
        tensor_bytes = {}
        for n, node in enumerate(nodes):
            tensor = node.get("tensor")
            if tensor is not None:
                key = tensor["data_ptr"] or ("no storage", n)
                tensor_bytes[key] = max(tensor_bytes.get(key, 0), tensor["bytes"])
        return {
            "truncated": truncated,
            "nodes": nodes,
            "edges": edges,
            "cycle": _on_cycle(len(nodes), edges),
            "tensor_bytes": sum(tensor_bytes.values()),
        }

    def _most_telling(self, roots, order, kept, succ, pred, folded, max_nodes):
        """At most max_nodes of `kept`: for each tensor, largest first, the shortest chain of
        holders from it up to a cycle and one shortest round of that cycle; then the nearest of
        the rest. Without this a bound smaller than the tensor count would keep tensors only."""
        local = {i: n for n, i in enumerate(order)}
        cyclic, component = _cyclic([[local[j] for j in succ[i] if j in local] for i in order])
        chosen = []
        taken = set()

        def take(i):
            if len(chosen) < max_nodes and i not in folded and i not in taken:
                taken.add(i)
                chosen.append(i)

        def size(i):
            try:
                tensor, base = self.objects[i], self.tensor_type
                return -int(base.numel(tensor)) * int(base.element_size(tensor))
            except Exception:
                return 0

        for root in sorted(roots, key=size):
            if len(chosen) >= max_nodes:
                break
            parent = {root: None}
            queue = [root]
            entry = None
            for i in queue:
                if local[i] in cyclic:
                    entry = i
                    break
                for j in pred[i]:
                    if j in local and j not in parent:
                        parent[j] = i
                        queue.append(j)
            chain = []
            at = entry if entry is not None else root
            while at is not None:
                chain.append(at)
                at = parent[at]
            for i in reversed(chain):  # the tensor first, then its holders
                take(i)
            if entry is not None:
                for i in _round_trip(entry, succ, lambda j: j in local and
                                     component[local[j]] == component[local[entry]]):
                    take(i)
        for i in kept:
            take(i)
        return chosen

    # -- folding ---------------------------------------------------------------------------

    def _folded(self, order, pred):
        """{index of a folded object: index of its owner}."""
        folded = {}
        for i in order:
            obj = self.objects[i]
            for part in (_instance_dict(obj), _closure(obj)):
                if part is None:
                    continue
                j = self.index.get(id(part))
                if j is not None and pred[j] == [i]:
                    folded[j] = i
        return folded

    # -- edges -----------------------------------------------------------------------------

    def _edges(self, i, succ, folded):
        """(label, kind, target index) for each reference object i holds to another garbage
        object, references through a folded part included."""
        obj = self.objects[i]
        labels = _safe_references(obj)
        out = []
        for j in succ[i]:
            if folded.get(j) == i:
                part = self.objects[j]
                closure = type(part) is tuple
                inner = _safe_references(part, instance_dict=not closure)
                for k in succ[j]:
                    for label, kind in inner.get(id(self.objects[k]), (("?", "other"),)):
                        if closure:  # the closure tuple's "[0]" is the function's __closure__[0]
                            label, kind = "__closure__" + label, "closure"
                        out.append((label, kind, k))
                continue
            for label, kind in labels.get(id(self.objects[j]), (("?", "other"),)):
                out.append((label, kind, j))
        return out

    # -- nodes -----------------------------------------------------------------------------

    def _node(self, n, obj):
        kind = type(obj)
        try:
            label = _label(obj)
        except Exception:
            label = kind.__name__  # an odd object: its type still says what it is
        node = {"id": n, "type": _short(kind.__name__), "label": _short(label)}
        if issubclass(kind, self.tensor_type):
            node["tensor"] = _tensor(obj, self.tensor_type)
            node["label"] = _short(_tensor_label(kind, node["tensor"]))
        return node


def _round_trip(start, succ, inside):
    """The nodes of a shortest path start -> ... -> start through nodes where inside() holds."""
    previous = {start: None}
    queue = [start]
    last = None
    for i in queue:
        for j in succ[i]:
            if j == start:
                last = i
                break
            if inside(j) and j not in previous:
                previous[j] = i
                queue.append(j)
        if last is not None:
            break
    path = []
    while last is not None:
        path.append(last)
        last = previous[last]
    return list(reversed(path))


# -- references held by one object ----------------------------------------------------------


def _safe_references(obj, instance_dict=False):
    """_references, or none named (every edge "?") for an object that cannot be read."""
    try:
        return _references(obj, instance_dict)
    except Exception:
        return {}


def _references(obj, instance_dict=False):
    """{id(referent): [(label, kind), ...]} for the references of `obj` that can be named.
    instance_dict: `obj` is an instance's own __dict__, its entries are that instance's attributes."""
    refs = {}

    def add(target, label, kind):
        refs.setdefault(id(target), []).append((_short(label), kind))

    kind = type(obj)
    if kind is types.FunctionType:
        closure = obj.__closure__
        if closure is not None:
            add(closure, "__closure__", "closure")
        for name in ("__defaults__", "__kwdefaults__", "__globals__", "__code__", "__module__",
                     "__name__", "__qualname__", "__doc__"):
            add(getattr(obj, name), name, "other")
    elif kind is types.MethodType:
        add(obj.__self__, "__self__", "self")
        add(obj.__func__, "__func__", "other")
    elif kind is _CELL:
        try:
            add(obj.cell_contents, "cell_contents", "closure")
        except ValueError:
            pass  # an empty cell
    elif kind is types.FrameType:
        _frame_references(obj, add)
    elif kind is types.TracebackType:
        add(obj.tb_frame, "tb_frame", "other")
        if obj.tb_next is not None:
            add(obj.tb_next, "tb_next", "other")
    elif issubclass(kind, dict):
        for key, value in dict.items(obj):
            if instance_dict:
                add(value, _attribute_label(key), "attribute")
            else:
                add(value, "[%s]" % _key_text(key), "key")
            add(key, "key", "other")
    elif issubclass(kind, (list, tuple)):
        items = list.__iter__(obj) if issubclass(kind, list) else tuple.__iter__(obj)
        for position, item in enumerate(items):
            add(item, "[%d]" % position, "index")
    elif issubclass(kind, (set, frozenset)):
        for item in (set.__iter__(obj) if issubclass(kind, set) else frozenset.__iter__(obj)):
            add(item, "element", "other")
    elif issubclass(kind, BaseException):
        for name in ("__traceback__", "__context__", "__cause__", "args"):
            add(BaseException.__dict__[name].__get__(obj, kind), name, "other")

    own = _instance_dict(obj)
    if own is not None:
        add(own, "__dict__", "attribute")
        # Python 3.11+ keeps attributes inline: the object refers to each value itself.
        for key, value in dict.items(own):
            add(value, _attribute_label(key), "attribute")
    for name, value in _slot_values(obj):
        add(value, name, "attribute")
    add(kind, "__class__", "other")
    return refs


def _frame_references(frame, add):
    code = frame.f_code
    # Read the locals before anything else: f_locals is a snapshot (<= 3.12) or a live view.
    try:
        names = code.co_varnames + code.co_cellvars + code.co_freevars
        local_values = frame.f_locals
        for name in names:
            if name in local_values:
                add(local_values[name], name, "local")
    except Exception:
        pass
    if frame.f_back is not None:
        add(frame.f_back, "f_back", "other")
    add(frame.f_globals, "f_globals", "other")
    add(frame.f_builtins, "f_builtins", "other")
    add(code, "f_code", "other")


def _type_descriptor(kind, name):
    for klass in kind.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            return klass, found
    return None, None


def _instance_dict(obj):
    """The object's own attribute dict, read through the C descriptor (no user code), or None."""
    if type(obj) is types.FunctionType:
        return None  # a function's __dict__ is rare in cycles and always materialized
    _, descriptor = _type_descriptor(type(obj), "__dict__")
    if type(descriptor) is not types.GetSetDescriptorType:
        return None
    try:
        value = descriptor.__get__(obj, type(obj))
    except Exception:
        return None
    return value if type(value) is dict else None


def _closure(obj):
    return obj.__closure__ if type(obj) is types.FunctionType else None


def _slot_values(obj):
    out = []
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__")
        if slots is None:
            continue
        for name in (slots,) if type(slots) is str else tuple(slots):
            if type(name) is not str or name in ("__dict__", "__weakref__"):
                continue
            stored = name
            if name.startswith("__") and not name.endswith("__"):
                stored = "_%s%s" % (klass.__name__.lstrip("_"), name)
            descriptor = klass.__dict__.get(stored)
            if type(descriptor) is not types.MemberDescriptorType:
                continue
            try:
                out.append((name, descriptor.__get__(obj, klass)))
            except AttributeError:
                pass  # slot never set
    return out


# -- labels ----------------------------------------------------------------------------------


def _short(text):
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 3] + "..."


def _attribute_label(key):
    return key if type(key) is str else "[%s]" % _key_text(key)


def _key_text(key):
    if type(key) in _SCALAR_KEYS:
        return _short(repr(key))
    return "<%s>" % type(key).__name__


def _counted(name, n, unit):
    """'list (1 item)', 'dict (3 keys)'."""
    return "%s (%d %s%s)" % (name, n, unit, "" if n == 1 else "s")


def _label(obj):
    kind = type(obj)
    if kind is types.FunctionType:
        return "function %s" % obj.__name__
    if kind is types.MethodType:
        func = obj.__func__
        name = func.__qualname__ if type(func) is types.FunctionType else type(func).__name__
        return "method %s" % name
    if kind is _CELL:
        return "cell"
    if kind is types.FrameType:
        code = obj.f_code
        return "frame %s (%s:%s)" % (code.co_name, os.path.basename(code.co_filename), obj.f_lineno)
    if kind is types.TracebackType:
        code = obj.tb_frame.f_code
        return "traceback %s (%s:%s)" % (
            code.co_name, os.path.basename(code.co_filename), obj.tb_lineno)
    if kind is types.CodeType:
        return "code %s" % obj.co_name
    if kind is types.ModuleType:
        return "module %s" % obj.__name__
    if issubclass(kind, type):
        return "class %s" % type.__dict__["__name__"].__get__(obj)
    if issubclass(kind, dict):
        return _counted(kind.__name__, dict.__len__(obj), "key")
    if issubclass(kind, list):
        return _counted(kind.__name__, list.__len__(obj), "item")
    if issubclass(kind, tuple):
        return _counted(kind.__name__, tuple.__len__(obj), "item")
    if issubclass(kind, set):
        return _counted(kind.__name__, set.__len__(obj), "item")
    if issubclass(kind, frozenset):
        return _counted(kind.__name__, frozenset.__len__(obj), "item")
    return kind.__name__


def _tensor(tensor, tensor_type):
    """Shape, dtype, bytes (elements x element size of this tensor, not its whole storage),
    data_ptr and device, read through torch.Tensor's own descriptors and methods so that a
    subclass's overrides do not run. Never the data. A field that cannot be read is 0, [] or "?"
    (data_ptr 0: no single storage, as for sparse tensors; torch says 0 for empty ones too)."""
    base = tensor_type
    info = {}
    for field, read, otherwise in (
        ("shape", lambda: [int(size) for size in base.shape.__get__(tensor)], []),
        ("dtype", lambda: str(base.dtype.__get__(tensor)).replace("torch.", "", 1), "?"),
        ("bytes", lambda: int(base.numel(tensor)) * int(base.element_size(tensor)), 0),
        ("data_ptr", lambda: int(base.data_ptr(tensor)), 0),
        ("device", lambda: str(base.device.__get__(tensor)), "?"),
    ):
        try:
            info[field] = read()
        except Exception:
            info[field] = otherwise
    info["stack"] = None
    return info


def _tensor_label(kind, info):
    return "%s %s[%s]" % (kind.__name__, info["dtype"], ", ".join(str(s) for s in info["shape"]))


# -- cycles ----------------------------------------------------------------------------------


def _on_cycle(count, edges):
    """Ids of the nodes on a strongly connected component of size > 1 or with a self-reference."""
    succ = [[] for _ in range(count)]
    for edge in edges:
        succ[edge["from"]].append(edge["to"])
    return sorted(_cyclic(succ)[0])


def _cyclic(succ):
    """(set of the nodes on a cycle, component id of each node) of the graph given by adjacency
    lists: Tarjan's algorithm, iterative (graphs can be deep)."""
    count = len(succ)
    index = [None] * count
    low = [0] * count
    component = [None] * count
    on_stack = [False] * count
    stack = []
    cyclic = set(v for v in range(count) if v in succ[v])
    counter = 0
    components = 0
    for start in range(count):
        if index[start] is not None:
            continue
        work = [(start, 0)]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        while work:
            v, position = work[-1]
            if position < len(succ[v]):
                work[-1] = (v, position + 1)
                w = succ[v][position]
                if index[w] is None:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                members = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component[w] = components
                    members.append(w)
                    if w == v:
                        break
                components += 1
                if len(members) > 1:
                    cyclic.update(members)
    return cyclic, component


# -- allocation stacks (CUDA, when memory history is recorded) ------------------------------


def stack_lookup(snapshot):
    """A function data_ptr -> the allocation's frames ([{filename, line, name}], as the snapshot
    lists them: innermost first) or None, over the active blocks of a torch.cuda.memory._snapshot()
    (2.1+: block["frames"]; 2.0: the last block["history"] entry's "frames")."""
    import bisect

    starts, ends, stacks = [], [], []
    blocks = []
    for segment in snapshot.get("segments", ()):
        address = segment.get("address", 0)
        for block in segment.get("blocks", ()):
            size = block.get("size", 0)
            if block.get("state") == "active_allocated":
                frames = block.get("frames")
                if not frames and block.get("history"):
                    frames = block["history"][-1].get("frames")
                if frames:
                    blocks.append((address, address + size, frames))
            address += size
    blocks.sort(key=lambda b: b[0])
    for start, end, frames in blocks:
        starts.append(start)
        ends.append(end)
        stacks.append(
            [{"filename": str(f.get("filename", "?")), "line": int(f.get("line", 0) or 0),
              "name": str(f.get("name", "?"))} for f in frames]
        )

    def lookup(data_ptr):
        at = bisect.bisect_right(starts, data_ptr) - 1
        if at >= 0 and data_ptr < ends[at]:
            return stacks[at]
        return None

    return lookup


def add_cuda_stacks(graph, torch):
    """Fill each CUDA tensor's "stack" from one snapshot of the allocator; leaves them null when
    history is not recorded (blocks carry no frames) or the snapshot cannot be taken."""
    tensors = [node["tensor"] for node in graph["nodes"]
               if "tensor" in node and node["tensor"]["device"].startswith("cuda")
               and node["tensor"]["data_ptr"]]
    if not tensors:
        return
    try:
        lookup = stack_lookup(torch.cuda.memory._snapshot())
    except Exception:
        return
    for tensor in tensors:
        tensor["stack"] = lookup(tensor["data_ptr"])
