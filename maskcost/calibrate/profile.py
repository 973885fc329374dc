"""The profile contract now lives at the bottom of the package, in maskcost/profile.py; this name stays
for the as-run validation scripts under validation/, which import it from here."""
from ..profile import *  # noqa: F401,F403
from ..profile import _rounded  # noqa: F401
