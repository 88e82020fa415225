"""numba's default ``np.argsort`` (its quicksort), as ranx ranks every list before fusing: the one
implementation is :mod:`ragrade.kernels.tie_orders` (shared with the ``ranx`` evaluation profile); this
module keeps the names the fusion code uses.

ranx's fused values read the positions this sort gives equal scores (rank normalisation, RRF, ISR, RBC,
Borda, the trained methods), so reproducing them exactly needs this very sort, applied to the same input
order.
"""

from __future__ import annotations

import numpy as np

from ragrade.kernels.tie_orders import SMALL, argsort_segments, numba_argsort

__all__ = ["SMALL", "argsort_segments", "quicksort_argsort"]


def quicksort_argsort(keys: list[float] | np.ndarray) -> list[int]:
    """The permutation numba's ``np.argsort(keys)`` returns (ascending)."""
    return [int(i) for i in numba_argsort(np.asarray(keys, dtype=np.float64))]
