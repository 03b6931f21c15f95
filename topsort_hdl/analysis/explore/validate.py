"""A point checked in RTL before it is trusted (``explore --validate``): its kernel generated
and sorted in Verilator at a scaled-down size, every record checked against the golden sort,
and its cycles in each phase compared with the performance model that priced it. Each point's
simulation is a job (:func:`.run_jobs`), on local processes or a Dask cluster's workers."""

import time
from dataclasses import dataclass

from ..jobs import run_jobs
from ..qor.run import MODEL_TOLERANCE, model_errors
from .price import DISTRIBUTIONS

__all__ = ["RECORDS_PER_TREE", "Validation", "validation_records", "validate_points",
           "validation_lines"]

# 4,096 records a tree: a few passes of phase 1 and a full phase 2 on every tree, a few minutes
# of Verilator for an HBM board's kernel (the size the presets' own RTL runs use).
RECORDS_PER_TREE = 4096


@dataclass(frozen=True)
class Validation:
    """A point's RTL run: its ``config``, the ``records`` sorted (ideal memory), the
    simulator's ``rows`` (one per input order: ``records``, ``order``, phase cycles) and the
    ``seconds`` it took."""

    config: object
    records: int
    rows: list
    seconds: float

    def errors(self):
        """``(order, phase, rtl, model, relative error)`` per order and phase."""
        errors = model_errors(self.config, self.rows)
        orders = [row.get("order", "random") for row in self.rows for _ in range(2)]
        return [(order, phase, rtl, model, error) for order, (_, phase, rtl, model, error)
                in zip(orders, errors, strict=True)]

    @property
    def within_tolerance(self):
        return all(abs(error) <= MODEL_TOLERANCE for *_, error in self.errors())


def validation_records(config):
    """Records a point is validated with: :data:`RECORDS_PER_TREE` a tree, at most its
    capacity."""
    return min(config.trees * RECORDS_PER_TREE, config.capacity)


def validate_points(configs, orders=DISTRIBUTIONS, scheduler=None, workers=None, progress=None):
    """A :class:`Validation` of each of ``configs``, in order, each a job (``scheduler``: a
    Dask scheduler's address, else ``workers`` local processes). A sort that is not exact
    raises the simulation's error."""
    progress = progress or (lambda line: None)
    jobs = []
    for index, config in enumerate(configs):
        records = validation_records(config)
        progress(f"validating {config.name} in RTL (Verilator): {records} records, "
                 f"{', '.join(orders)}")
        jobs.append((index, (config, records, tuple(orders))))
    done = {}
    for index, (rows, seconds) in run_jobs(_validation_job, jobs, scheduler, workers):
        config = configs[index]
        done[index] = Validation(config, validation_records(config), rows, seconds)
        progress(f"validated {config.name} in {seconds:.0f} s on "
                 f"{scheduler or 'local processes'}")
    return [done[index] for index in range(len(configs))]


def _validation_job(config, records, orders):
    from ...sim.kernel_sort import simulate_sweep

    start = time.perf_counter()
    rows = simulate_sweep(config, [records], sim="verilator", orders=orders, hierarchical=True)
    return rows, time.perf_counter() - start


def validation_lines(validation):
    """The table of a :class:`Validation`: RTL cycles against the model, per order and
    phase, and the verdict."""
    v = validation
    lines = [f"{v.config.name} in RTL (Verilator, {v.seconds:.0f} s): {v.records} records "
             f"sorted exactly in each order; cycles against the performance model (ideal "
             f"memory)",
             f"{'order':>14} {'phase':>7} {'RTL':>9} {'model':>9} {'error':>7}"]
    for order, phase, rtl, model, error in v.errors():
        lines.append(f"{order:>14} {phase:>7} {rtl:>9} {model:>9} {error:>+7.1%}"
                     + ("" if abs(error) <= MODEL_TOLERANCE else "  out of tolerance"))
    lines.append(f"validated: exact, and the model within {MODEL_TOLERANCE:.0%} of the RTL"
                 if v.within_tolerance else
                 f"NOT VALIDATED: the model is more than {MODEL_TOLERANCE:.0%} off the RTL")
    return lines
