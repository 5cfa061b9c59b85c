"""Every core test runs on both backends: the compiled core (``linear_layouts.core._ccore._ext``) and pure Python.

The ``backend`` fixture is autouse and module-scoped (Hypothesis forbids function-scoped fixtures under
``@given``): each test module runs once with ``"c"`` and once with ``"python"``. Where the extension is not
built, the ``"c"`` runs are skipped with the reason (``pip install -e .`` builds it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from linear_layouts.core import _ccore


@pytest.fixture(scope="module", params=["c", "python"], autouse=True)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The active backend for the tests of this module: ``"c"`` or ``"python"``."""
    if request.param == "c" and not _ccore.available():
        pytest.skip("the C extension linear_layouts.core._ccore._ext is not built (pip install -e . builds it)")
    with _ccore.using(request.param):
        yield request.param
