"""The shapes every engine returns, whatever the engine: what engines/base.py speaks in.

A flag catalog and the choice of one (flags.py), the settings a server changed
(differences.py), a /metrics scrape and the window between two (metrics.py).
Each engine maps its own facts into these; nothing here knows an engine.
"""

from sgwatch.engines.shapes.differences import Difference
from sgwatch.engines.shapes.flags import Catalog, FlagOption, Problem, Selection
from sgwatch.engines.shapes.metrics import MetricsError, MetricsPage, MetricsWindow

__all__ = [
    "Catalog",
    "Difference",
    "FlagOption",
    "MetricsError",
    "MetricsPage",
    "MetricsWindow",
    "Problem",
    "Selection",
]
