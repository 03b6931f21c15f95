"""Golden model of the whole kernel: which runs sit where after every pass, and the output.

Merges are modelled by key only (the hardware's order among equal keys is its own), so the
model's memory is compared with the RTL's as sorted-run structure: the same runs, each with the
same keys in order and the same (key, value) multiset. Keys are ordered as a job's key type
and order say (:mod:`.order`): the model merges the keys ``T`` gives, as the hardware does, and
its memory holds the host's keys. A configuration that orders equal keys by value
(``equal_keys="by_value"``) merges by the whole record, the key first: then the model's memory
and output are exactly the hardware's.
"""

from ..contract import place_records
from ..plan import leaf_regions, output_bases, phase2_leaves, tree_plan
from .order import order_keys, restore_keys

__all__ = ["KernelModel"]


def _merge(runs, by_value=False):
    return sorted((record for run in runs for record in run),
                  key=(lambda r: r) if by_value else (lambda r: r[0]))


class KernelModel:
    """Run a configuration's plan on ``(key, value)`` records.

    After :meth:`run`: ``plans`` (per tree), ``halves[i][h]`` (the records of tree i's half h
    after phase 1, as a list), ``passes[i]`` (per pass, the list of output runs), ``output``
    (the sorted records) and ``chunks`` (``(stream offset, address, bytes)`` of the phase-2
    output for the given ``addresses``, ``addresses[i] = (half 0, half 1)`` of tree i).
    """

    def __init__(self, config, key_type="unsigned", descending=False):
        self.config = config
        self.order = dict(key_type=key_type, key_bits=config.key_bits, descending=descending)
        order_keys([], **self.order)        # (checks the order)
        self.by_value = config.equal_keys == "by_value"

    def _map(self, records, transform):
        keys = transform([k for k, _ in records], **self.order).tolist()
        return [(k, v) for k, (_, v) in zip(keys, records, strict=True)]

    def run(self, records, addresses=None):
        """Sort the job ``records``, placed in the trees as the configuration's hosts place
        them (``placement``)."""
        return self.run_trees(place_records(records, self.config.trees, self.config.placement),
                              addresses)

    def run_trees(self, inputs, addresses=None):
        """Sort the job whose tree i holds ``inputs[i]`` (its half 0, in order)."""
        c = self.config
        self.plans, self.halves, self.passes = [], [], []
        total = sum(len(part) for part in inputs)
        for tree, part in enumerate(inputs):
            count = len(part)
            plan = tree_plan(count, c.leaves, c.runs_per_tree, c.first_run_length)
            halves = [self._map(list(part), order_keys), []]
            history = []
            for step in plan.passes:
                source = halves[step.source]
                leaf_runs = []
                for first, length, groups in leaf_regions(count, step, c.leaves):
                    region = source[first:first + length]
                    leaf_runs.append([region[k * step.run_length:(k + 1) * step.run_length]
                                      for k in range(groups)])
                out_runs = [_merge((leaf[g] for leaf in leaf_runs), self.by_value)
                            for g in range(step.groups)]
                expected = [step.run_length * step.active] * (step.groups - 1)
                lengths = [len(r) for r in out_runs]
                assert lengths[:-1] == expected, (tree, step, lengths)  # regular layout
                halves[step.source ^ 1] = [r for run in out_runs for r in run]
                history.append(out_runs)
            self.plans.append(plan)
            self.halves.append(halves)
            self.passes.append(history)
        leaves = phase2_leaves(self.plans, c.reuse, c.leaves)
        runs = [self.halves[tree][half][first:first + count]
                for row in leaves for tree, half, first, count in row]
        self.output = self._map(_merge(runs, self.by_value), restore_keys)
        self.halves = [[self._map(half, restore_keys) for half in pair] for pair in self.halves]
        self.passes = [[[self._map(run, restore_keys) for run in step] for step in history]
                       for history in self.passes]
        if addresses is not None:
            from .memory import batch_chunks

            bases = output_bases(self.plans, addresses, c.reuse)
            self.chunks = list(batch_chunks(total * c.record_bytes, bases,
                                            c.batch_bytes, c.group))
        return self.output
