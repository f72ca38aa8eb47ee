"""Call a function after every optimizer step, whatever the optimizer.

PyTorch 2.0 and later have a global post-step hook (torch.optim.optimizer.
register_optimizer_step_post_hook). Older versions get each Optimizer subclass's step wrapped once,
when its first instance is built; a step that calls a wrapped parent's step counts once.
"""

import functools
import importlib
import threading


def on_optimizer_step(torch, callback):
    """callback(optimizer) after each optimizer.step(); returns how it is hooked."""
    # torch.optim deletes its submodules' names; the module is loaded (torch imports it).
    optimizer_module = importlib.import_module("torch.optim.optimizer")
    register = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(lambda optimizer, args, kwargs: callback(optimizer))
        return "register_optimizer_step_post_hook"
    _wrap_steps(optimizer_module.Optimizer, callback)
    return "Optimizer.step wrapper"


def _wrap_steps(base, callback):
    depth = threading.local()
    original_init = base.__init__

    def wrap(cls):
        step = cls.step
        if getattr(step, "_memlens_step", False):
            return

        @functools.wraps(step)
        def counted_step(self, *args, **kwargs):
            depth.n = getattr(depth, "n", 0) + 1
            try:
                out = step(self, *args, **kwargs)
            finally:
                depth.n -= 1
            if depth.n == 0:
                callback(self)
            return out

        counted_step._memlens_step = True
        cls.step = counted_step

    @functools.wraps(original_init)
    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        wrap(type(self))

    base.__init__ = init
