"""Analysis: the performance model (:mod:`.perf`), quality of results (:mod:`.qor`) and the
golden figures' file format and policy that ``make bench`` and ``make qor`` check against
(:mod:`.regression`).
"""
