"""Bundle-level model of the MMS merge unit (the paper's MMS).

The model follows the hardware's mechanism: a selector on the smallest keys of the two head
bundles (ties alternate sides), registers RA/RB holding the last bundle taken from each side,
BML = upper half of (RA u RB), BMS = lower half of (X u held), a dummy first output per run that
is dropped and one flush bundle per run. It asserts the invariant that removes the feedback path
(the upper half of X u held is exactly what BML holds after the step) on *record identities*.

Records are ordered by a strict total order: key, then the step at which their bundle was
selected, then their index in the bundle. The hardware realises the same order (its networks'
tie breaks), so the model predicts the exact position of every record, equal keys included.
"""

from dataclasses import dataclass

from ..params import MAX_MERGE_RATE, check_power_of_two

__all__ = ["MmsModel"]


@dataclass(frozen=True)
class _Tagged:
    rank: tuple  # (class, key, step, index): class 0 is minus infinity, 1 a real record
    record: tuple


_MINUS_INFINITY = tuple(_Tagged((0, 0, -1, i), None) for i in range(64))


class MmsModel:
    """Predict the output bundles of an E-rate MMS merge unit.

    State that outlives a run (the side preferred on the next tie) is kept between calls, as
    the hardware keeps it between runs: feed runs in the order the hardware sees them.

    Parameters
    ----------
    rate : int
        Records per bundle, a power of two.
    """

    def __init__(self, rate):
        self._rate = check_power_of_two("rate", rate, MAX_MERGE_RATE)
        self.prefer_b = False  # side taken on the next tie of smallest keys
        self.ties = 0

    @property
    def rate(self):
        return self._rate

    def select(self, a_head, b_head):
        """Return ``"a"`` or ``"b"``: the head bundle with the smaller first key."""
        if a_head[0][0] != b_head[0][0]:
            return "a" if a_head[0][0] < b_head[0][0] else "b"
        side = "b" if self.prefer_b else "a"
        self.prefer_b = not self.prefer_b
        self.ties += 1
        return side

    def merge_run(self, a_run, b_run):
        """Merge one run from each input.

        Parameters
        ----------
        a_run, b_run : list of bundles
            At least one bundle each; a bundle is a list of ``rate`` ``(key, value)`` records
            sorted by key, and each run is sorted across its bundles.

        Returns
        -------
        list of (bundle, last)
            ``len(a_run) + len(b_run)`` output bundles, ``last`` set on the final one.
        """
        e = self._rate
        for name, run in (("a_run", a_run), ("b_run", b_run)):
            if not run:
                raise ValueError(f"{name} must hold at least one bundle")
            if any(len(bundle) != e for bundle in run):
                raise ValueError(f"every bundle of {name} must hold {e} records")
        registers = {"a": _MINUS_INFINITY[:e], "b": _MINUS_INFINITY[e : 2 * e]}
        position = {"a": 0, "b": 0}
        runs = {"a": a_run, "b": b_run}
        outputs = []
        for step in range(len(a_run) + len(b_run)):
            if position["a"] == len(a_run):
                side = "b"
            elif position["b"] == len(b_run):
                side = "a"
            else:
                side = self.select(a_run[position["a"]], b_run[position["b"]])
            bundle = runs[side][position[side]]
            position[side] += 1
            x = tuple(_Tagged((1, key, step, i), (key, value)) for i, (key, value) in
                      enumerate(bundle))
            held = _upper(registers["a"] + registers["b"], e)  # BML
            merged = sorted(x + held, key=lambda t: t.rank)  # BMS
            output, kept = merged[:e], merged[e:]
            registers[side] = x
            if set(kept) != set(_upper(registers["a"] + registers["b"], e)):
                raise AssertionError(f"MMS invariant broken at step {step}")
            if step > 0:  # the first output of a run is the dummy made of minus infinity
                outputs.append(([t.record for t in output], False))
        flush = _upper(registers["a"] + registers["b"], e)
        outputs.append(([t.record for t in flush], True))
        return outputs

    def merge(self, runs):
        """Merge a sequence of ``(a_run, b_run)`` pairs; return every output bundle in order."""
        outputs = []
        for a_run, b_run in runs:
            outputs.extend(self.merge_run(a_run, b_run))
        return outputs


def _upper(records, count):
    return tuple(sorted(records, key=lambda t: t.rank)[-count:])
