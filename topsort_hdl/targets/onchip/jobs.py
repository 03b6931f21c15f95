"""The self test's jobs in plain Python: what it sorts (a job's record count and key masks), the
generator that makes the records, where the sorted result lands and the checksum that checks
it. The hardware (:mod:`.selftest`) is built from these constants; tests use these functions to
reason about what the hardware does.
"""

from dataclasses import dataclass

from ...core.params import check_int
from ...core.plan import ceil_div, split_records, tree_plan

__all__ = ["BistJob", "xorshift64", "job_records", "free_halves", "output_words",
           "multiset_checksum", "mix", "ERROR_BITS", "INJECTIONS", "SEED", "MASK32", "MASK64",
           "MIX_KEY", "MIX_VALUE"]

SEED = 0x2545_F491_4F6C_DD1D
MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
MIX_KEY, MIX_VALUE = 0x9E37_79B9, 0x85EB_CA6B   # the checksum's key-value mix
# A job's error bits, as the report prints them (e=...) and the LEDs show them.
ERROR_BITS = {"status": 0, "order": 1, "checksum": 2, "stray": 3}
# Faults the self test can inject, to show that its checks fail: a corrupted input word
# (the checksum must catch it) and two output records swapped (the order check must).
INJECTIONS = (None, "input", "output")


@dataclass(frozen=True)
class BistJob:
    """One sort of the self test: ``records`` records whose keys are the generator's bits
    ANDed with ``key_mask`` and ORed with ``key_set`` (narrow masks give many equal keys;
    a set mask pushes keys up to all-ones)."""

    records: int
    key_mask: int = MASK32
    key_set: int = 0

    def __post_init__(self):
        check_int("records", self.records)
        for name in ("key_mask", "key_set"):
            value = getattr(self, name)
            check_int(name, value)
            if not 0 <= value <= MASK32:
                raise ValueError(f"{name} must be a 32-bit value, not {value:#x}")

    def key(self, bits):
        return bits & self.key_mask | self.key_set


def xorshift64(state):
    """Marsaglia's xorshift64 (a linear feedback generator over GF(2)): the next state."""
    state ^= (state << 13) & MASK64
    state ^= state >> 7
    state ^= (state << 17) & MASK64
    return state


def job_records(state, job, trees, rate):
    """The records the self test writes for ``job`` from generator ``state``, in order: tree
    by tree (split as the host library splits them), one record per generator step (key and
    value from the high and low halves), ``rate`` steps per memory word, so the unused slots of
    a tree's last word advance the generator too. Returns ``(records, next state)``."""
    records = []
    for count in split_records(job.records, trees):
        for index in range(ceil_div(count, rate) * rate):
            state = xorshift64(state)
            if index < count:
                records.append((job.key(state >> 32), state & MASK32))
    return records, state


def free_halves(config, counts):
    """Per tree holding ``counts[i]`` records, the half phase 2 writes to: the one its last
    phase-1 pass did not."""
    return [tree_plan(n, config.leaves, config.runs_per_tree, config.first_run_length)
            .final_half ^ 1 for n in counts]


def output_words(config, job):
    """Where the self test reads the sorted result, in order: ``(tree, word)`` per memory word
    of ``config.rate`` records (phase 2 writes batches round robin over the reused trees'
    free halves; word 0 of half 1 is word ``channel_bytes / beat_bytes``)."""
    free = free_halves(config, split_records(job.records, config.trees))
    half_words = config.channel_bytes // config.axi.beat_bytes
    batch_words = config.batch_bytes // config.axi.beat_bytes
    out = []
    for word in range(ceil_div(job.records, config.rate)):
        batch, offset = divmod(word, batch_words)
        tree = batch % config.reuse
        out.append((tree, free[tree] * half_words + batch // config.reuse * batch_words
                    + offset))
    return out


def mix(key, value):
    return ((key ^ MIX_KEY) * (value ^ MIX_VALUE)) & MASK32


def multiset_checksum(records):
    """Order-independent checksum of ``(key, value)`` records: the sum of the 64-bit records
    and the sum of a key-value product (a plain sum cannot see two records trade values)."""
    total = sum((k << 32) | v for k, v in records) & MASK64
    return total, sum(mix(k, v) for k, v in records) & MASK32
