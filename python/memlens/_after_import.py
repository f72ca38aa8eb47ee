"""Run a function right after a module's first import, without importing it: a finder placed first on
sys.meta_path finds the module's spec through the other finders and wraps its loader once."""

import importlib.abc
import importlib.util
import sys


def after_import(name, callback):
    """Call callback(module) once `name` is imported; at once when it already is."""
    module = sys.modules.get(name)
    if module is not None:
        callback(module)
        return
    sys.meta_path.insert(0, _Finder(name, callback))


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, name, callback):
        self.name = name
        self.callback = callback
        self.searching = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or self.searching:
            return None
        self.searching = True  # find_spec below consults sys.meta_path, this finder included
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.searching = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader, self)
        return spec

    def remove(self):
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


class _Loader(importlib.abc.Loader):
    """The module's own loader, followed by the callback; the module keeps its own loader."""

    def __init__(self, inner, finder):
        self.inner = inner
        self.finder = finder

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        # The module's code sees its own loader, as it would without memlens.
        module.__loader__ = self.inner
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.inner
        self.inner.exec_module(module)
        self.finder.remove()
        self.finder.callback(module)

    def __getattr__(self, name):
        return getattr(self.inner, name)
