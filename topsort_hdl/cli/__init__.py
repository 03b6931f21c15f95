"""The ``topsort-hdl`` command line (also ``python -m topsort_hdl``): :func:`main` and the
parser in :mod:`.main`, one module per subcommand, shared options in :mod:`.options`, result
formatting in :mod:`.format`.

User mistakes end with one line on standard error and exit status 2, never a traceback.
"""

from .main import main

__all__ = ["main"]
