"""Random-number conventions: every random procedure takes ``rng`` and records its seed."""

from __future__ import annotations

import numpy as np

RngLike = "int | np.random.Generator | None"


def resolve_rng(rng: int | np.random.Generator | None) -> tuple[np.random.Generator, int | None]:
    """Return ``(generator, seed)``.

    An int seeds a fresh generator and is returned as the seed to record. ``None`` draws a
    fresh seed from the OS entropy pool and records it, so a run can always be reproduced.
    A Generator is used as is; its seed is unknown (``None``).
    """
    if isinstance(rng, np.random.Generator):
        return rng, None
    if rng is None:
        seed = int(np.random.SeedSequence().entropy % (2**32))
        return np.random.default_rng(seed), seed
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng)), int(rng)
    raise TypeError(f"rng must be an int seed, a numpy Generator or None, not {type(rng).__name__}")
