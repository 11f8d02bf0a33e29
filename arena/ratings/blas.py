"""The fit's dense linear algebra on one BLAS thread (issue 29).

numpy's OpenBLAS starts a thread per core and, between calls, its threads spin waiting for
work. The ML fit's solves are small (a field of 1,000 bots: a 1,000 x 1,000 system, tens of
milliseconds on one core), and the arena shares its machine with the bots it plays: on a
loaded machine the spinning threads fight for cores, and at 1M matches and 1,000 bots the
fit took 17 s of wall time for 3.4 s of CPU. ``one_blas_thread`` holds the BLAS libraries
numpy loaded to one thread for the duration of a call, and gives them back their count after,
inside this process only (threadpoolctl: the library made for this). An environment
variable (``OPENBLAS_NUM_THREADS``) would have to be set before numpy loads and would pass to
every process the arena starts, bots included.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@functools.cache
def _blas() -> Any:
    """threadpoolctl's controller of the BLAS libraries this process had loaded at its first
    fit, made once.

    Finding them walks every shared library the process has loaded (``dl_iterate_phdr``, a
    Python callback each): 0.4 ms in a small process and more in a large one, at every fit,
    where the fit of a small field takes about as long. The fit's BLAS is numpy's, loaded when
    ``ml`` imported numpy, so it is among them; a library loaded later (another package's) is
    not the fit's."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread(fit: Callable[P, R]) -> Callable[P, R]:
    """``fit`` run with the BLAS libraries loaded in this process on one thread each."""

    @functools.wraps(fit)
    def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        # entered as a context: on leaving, threadpoolctl lets the next thread set the count
        # (OpenBLAS's is the process's, and only the thread that set it last may change it)
        with _blas().limit(limits=1, user_api="blas"):
            return fit(*args, **kwargs)

    return limited
