"""The board files (``*.toml``): installed as the package data of ``topsort_hdl.platform_data``
(see pyproject.toml) and read by :mod:`topsort_hdl.core.boards`."""
