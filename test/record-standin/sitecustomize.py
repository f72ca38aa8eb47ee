"""TEST-ONLY: a user's own sitecustomize, as memlens record's tests put it on PYTHONPATH.

It proves that memlens's sitecustomize runs the one it shadows (it writes STANDIN_SITE_MARK), and,
when MEMLENS_STANDIN_LOG is set, installs cuda_standin: a stand-in for the few CUDA calls memlens
record makes, because the test machine's torch (Debian's 1.13 CPU build) has no CUDA.
"""

import os

if os.environ.get("STANDIN_SITE_MARK"):
    with open(os.environ["STANDIN_SITE_MARK"], "a") as f:
        f.write("user sitecustomize ran in pid %d\n" % os.getpid())

if os.environ.get("STANDIN_SITE_IMPORT_TORCH"):
    import torch  # noqa: F401  (a sitecustomize that imports torch before memlens's hook is in place)

if os.environ.get("STANDIN_SITE_FAIL"):
    raise RuntimeError("the user's sitecustomize fails on purpose")

if os.environ.get("MEMLENS_STANDIN_LOG"):
    # After the program imports torch, as memlens's own setup does: this finder goes on sys.meta_path
    # first, so memlens's (inserted after this file has run) wraps it and runs after it.
    from memlens._after_import import after_import

    def _install(torch):
        import cuda_standin

        cuda_standin.install()

    after_import("torch", _install)
