"""memlens record's entry point: Python imports this at start-up in every process of a run, because
`memlens record` puts this directory first on PYTHONPATH.

It (1) runs the sitecustomize that would have run without memlens (the next one on sys.path), and
(2) only when MEMLENS_RECORD_OUT is set, arranges for the recorder to start right after the program
imports torch. It never imports torch itself: that would change the program's start-up.
"""

import os
import sys


def _chain_next_sitecustomize():
    """Import the sitecustomize later on sys.path (a venv's, the distribution's, the user's) under its
    own name, as site.py would have, reporting its errors the way site.py does."""
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.realpath(__file__))
    rest = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    mine = sys.modules.get("sitecustomize")
    sys.modules["sitecustomize"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # site.py's own behaviour for a failing sitecustomize
        if mine is not None:
            sys.modules["sitecustomize"] = mine
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write(
                "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                % (err.__class__.__name__, err)
            )


def _start_recorder():
    try:
        from memlens import _record

        _record.install()
    except Exception as err:  # the program must run whatever happens here
        sys.stderr.write("memlens record: helper failed to start: %s: %s\n" % (type(err).__name__, err))


_chain_next_sitecustomize()
if os.environ.get("MEMLENS_RECORD_OUT"):
    _start_recorder()
