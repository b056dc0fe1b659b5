"""Let a module double as the public function it is named after (``goldset.evaluate``, ``goldset.generate``).

``goldset/__init__.py`` exports the *functions* ``evaluate`` and ``generate`` lazily, but once the submodule of the
same name is imported, Python sets the package attribute to the *module*, so ``goldset.evaluate(...)`` would work
or fail depending on import order. Making the module callable keeps both spellings working.
"""

from __future__ import annotations

import sys
import types
from typing import Any


def make_module_callable(module_name: str, function_name: str) -> None:
    """Calling module ``module_name`` calls its attribute ``function_name``."""

    class _CallableModule(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return getattr(self, function_name)(*args, **kwargs)

    sys.modules[module_name].__class__ = _CallableModule
