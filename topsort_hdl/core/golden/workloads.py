"""Random and adversarial inputs for models, testbenches and benchmarks.

Values are serial numbers (unique when values are wide enough), so a lost or duplicated record
shows in a multiset comparison even when its key has equal twins.
"""

import itertools

__all__ = ["KEY_PATTERNS", "make_keys", "make_run_pair", "make_runs", "special_keys",
           "INPUT_ORDERS", "make_input"]

FLOAT_FRACTION_BITS = {32: 23, 64: 52}     # IEEE 754 binary32, binary64


def special_keys(key_type, key_bits):
    """The keys a ``key_type`` key of ``key_bits`` gets wrong first, each once: 0, 1 and
    all-ones, and the type's edges: for signed keys the extremes and -1; for floats NaNs of both
    signs and several payloads (quiet and signalling), +-0, +-inf, subnormals, the smallest
    normals, the largest finite values and +-1.0."""
    top, sign = (1 << key_bits) - 1, 1 << (key_bits - 1)
    keys = [0, 1, top, sign - 1, sign, sign + 1]        # (signed: 0, 1, -1, max, min, min + 1)
    if key_type == "float":
        fraction = FLOAT_FRACTION_BITS[key_bits]
        infinity = (sign - 1) ^ ((1 << fraction) - 1)
        quiet = 1 << (fraction - 1)
        one = ((1 << (key_bits - fraction - 2)) - 1) << fraction
        nans = [infinity | quiet, infinity | 1, infinity | quiet | 5, infinity | 2]
        keys += nans + [n | sign for n in nans] + [
            infinity, infinity | sign,                      # +-inf
            quiet, quiet | sign,                            # subnormals (1 and 1 | sign above)
            1 << fraction, (1 << fraction) | sign,          # smallest normals
            infinity - 1, (infinity - 1) | sign,            # largest finite
            one, one | sign]                                # +-1.0
    return keys


def _uniform(rng, count, max_key):
    return [rng.randint(0, max_key) for _ in range(count)]


def _few(rng, count, max_key):
    choices = [0, 1, max_key // 2, max_key]
    return [rng.choice(choices) for _ in range(count)]


def _equal(rng, count, max_key):
    return [rng.choice([0, max_key, rng.randint(0, max_key)])] * count


def _extremes(rng, count, max_key):
    return [rng.choice([0, max_key]) for _ in range(count)]


KEY_PATTERNS = {
    "uniform": _uniform,  # shuffled keys over the whole range
    "few": _few,  # four distinct keys, 0 and all-ones among them
    "equal": _equal,  # every key of the run the same
    "extremes": _extremes,  # only 0 and all-ones
    "disjoint": _uniform,  # make_run_pair puts every key of b below every key of a
    "twins": _uniform,  # make_run_pair gives b the keys of a (equal keys across inputs)
}


def make_keys(rng, count, pattern, max_key=2**32 - 1):
    """Return ``count`` keys drawn by ``pattern``, unsorted."""
    return KEY_PATTERNS[pattern](rng, count, max_key)


_serial = itertools.count()


def _bundles(keys, rate, max_value):
    records = [(key, next(_serial) % (max_value + 1)) for key in sorted(keys)]
    return [records[i : i + rate] for i in range(0, len(records), rate)]


def _length(rng, max_bundles):
    # Short runs (one bundle) are where run boundaries bite: give them extra weight.
    return rng.choice([1, 1, 2, rng.randint(1, max_bundles), rng.randint(1, max_bundles)])


def make_run_pair(rng, rate, pattern, max_bundles=8, max_key=2**32 - 1, max_value=2**32 - 1):
    """Return ``(a_run, b_run)``: two sorted runs of whole bundles for a merge unit."""
    n_a, n_b = _length(rng, max_bundles), _length(rng, max_bundles)
    a_keys = make_keys(rng, n_a * rate, pattern, max_key)
    if pattern == "twins":
        b_keys = (a_keys * (n_b // n_a + 1))[: n_b * rate]
    else:
        b_keys = make_keys(rng, n_b * rate, pattern, max_key)
    if pattern == "disjoint":
        split = rng.randint(1, max_key)
        a_keys = [split + key % (max_key - split + 1) for key in a_keys]
        b_keys = [key % split for key in b_keys]
    return _bundles(a_keys, rate, max_value), _bundles(b_keys, rate, max_value)


def make_runs(rng, rate, count, patterns=None, max_bundles=8, max_key=2**32 - 1,
              max_value=2**32 - 1):
    """Return ``count`` run pairs with patterns drawn from ``patterns`` (default: all)."""
    patterns = list(patterns or KEY_PATTERNS)
    return [make_run_pair(rng, rate, rng.choice(patterns), max_bundles, max_key, max_value)
            for _ in range(count)]


GROUP_PATTERNS = ("uniform", "few", "equal", "extremes", "figure7")


def make_group(rng, leaves, pattern="uniform", max_records=40, lengths=None,
               max_key=2**32 - 1, max_value=2**32 - 1):
    """Return one group for a merge tree: ``leaves`` sorted runs of ``(key, value)``.

    Run lengths are random from 0 to ``max_records`` (empty and one-record runs favoured)
    unless ``lengths`` gives them. ``"figure7"`` gives leaf i the i-th range of keys (the
    leaves' runs are already ordered relative to each other, the paper's Figure 7).
    """
    if lengths is None:
        lengths = [rng.choice([0, 1, 2, rng.randint(0, max_records),
                               rng.randint(0, max_records)]) for _ in range(leaves)]
    if pattern == "figure7":
        keys = sorted(make_keys(rng, sum(lengths), "uniform", max_key))
        starts = [sum(lengths[:i]) for i in range(leaves)]
        key_runs = [keys[start:start + n] for start, n in zip(starts, lengths, strict=True)]
    else:
        key_runs = [sorted(make_keys(rng, n, pattern, max_key)) for n in lengths]
    return [[(key, next(_serial) % (max_value + 1)) for key in run] for run in key_runs]


# How a whole job's input is ordered (``topsort-hdl model --distribution``, the profile and the
# throughput tests): the orders a merge sorter meets in practice and where merge trees differ.
NEARLY_SORTED_FRACTION = 0.01    # of the keys replaced at random positions
FEW_DISTINCT_KEYS = 16
INPUT_ORDERS = ("random", "sorted", "reversed", "nearly-sorted", "few-distinct")


def make_input(rng, count, order="random", key_bits=32):
    """Return ``count`` records ``(key, serial)`` of unsigned ``key_bits``-bit keys in one of
    ``INPUT_ORDERS``: uniform keys shuffled, ascending, descending; ascending with
    ``NEARLY_SORTED_FRACTION`` of the positions given uniform keys; or ``FEW_DISTINCT_KEYS``
    distinct keys (0 and all-ones among them) shuffled."""
    if order not in INPUT_ORDERS:
        raise ValueError(f"order must be one of {', '.join(INPUT_ORDERS)}, not {order!r}")
    top = (1 << key_bits) - 1
    if order == "few-distinct":
        choices = [0, top] + [rng.randint(1, top - 1) for _ in range(FEW_DISTINCT_KEYS - 2)]
        keys = [rng.choice(choices) for _ in range(count)]
    else:
        keys = [rng.randint(0, top) for _ in range(count)]
    if order in ("sorted", "nearly-sorted"):
        keys.sort()
    elif order == "reversed":
        keys.sort(reverse=True)
    if order == "nearly-sorted":
        for i in rng.sample(range(count), round(count * NEARLY_SORTED_FRACTION)):
            keys[i] = rng.randint(0, top)
    return [(key, i) for i, key in enumerate(keys)]
