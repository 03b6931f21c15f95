"""The kernel's plan of passes and memory layout, in plain Python.

The hardware controllers compute exactly this, step by step; the host library and the golden
kernel model use it to lay records out, check intermediate memory and reassemble the result.

Layout. Records are split over the trees: tree i gets ``n_i = N // T + (i < N % T)``, stored
from the start of its buffer's half 0 (channel 2i; half 1 is channel 2i+1; the halves are
separate kernel arguments). A pass reads R runs of length L (the last may be shorter) from one
half and writes R' runs of length a*L (the last may be shorter) to the other, back to back.
The a active leaves are spread over the tree, leaves 0, l/a, 2l/a, ..., so that each subtree
gets its share and a pass with a < l still merges at a records per cycle (the first a leaves
would all sit in one subtree of rate a/2 or less). Active leaf k takes the runs in contiguous
blocks, the *shorter* blocks first, so that the single short run lands in the last group and
every output run but the last is full: it takes ``q + (k >= a - rem)`` runs (``q, rem =
divmod(R, a)``); group g merges run g of every leaf (a leaf with fewer runs, and every inactive
leaf, sends an empty run). Passes use a = l until at most ``F * l`` runs are left; the last
pass uses the smallest power of two a that leaves at most F runs (F = runs per tree).
A tree that starts with at most F records makes no pass: its records are its runs. With the
presort, pass 1 reads runs of a beat (the read engine sorts each beat as it arrives) when that
saves a pass.

Phase 2: reused tree t's leaf j reads run ``j % F`` of tree ``t * S + j // F`` (S = T / r),
and the merged result is written in batches: batch k to write port ``k % r``, the m-th batch
of a port to slot ``m % S`` (the free half of tree ``t * S + slot``) at ``(m // S) * batch``.
"""

from dataclasses import dataclass

from .contract import split_records

__all__ = ["Pass", "TreePlan", "split_records", "presorts", "tree_plan", "tree_plans",
           "leaf_regions",
           "phase2_leaves", "output_bases", "ceil_div"]


def ceil_div(a, b):
    return -(-a // b)


@dataclass(frozen=True)
class Pass:
    """One phase-1 pass: ``runs`` runs of ``run_length`` records from half ``source``,
    merged ``active`` at a time into ``groups`` runs written to the other half."""

    source: int
    run_length: int
    runs: int
    active: int
    groups: int


@dataclass(frozen=True)
class TreePlan:
    records: int
    passes: tuple
    final_half: int       # the half holding the runs phase 2 reads
    final_run_length: int
    final_runs: int


def presorts(records, leaves, final_runs, first_run_length):
    """Whether a tree of ``records`` starts from runs of ``first_run_length`` (a beat, sorted
    as pass 1 reads it): when that saves a pass, that is when the reach of its passes from
    runs of a beat, ``final_runs * leaves**k`` >= ``ceil(records / first_run_length)``, is below
    ``records``. (With as many passes either way, runs of one record leave the last pass at
    least as many active leaves.)"""
    beat_runs = ceil_div(records, first_run_length)
    if first_run_length < 2 or beat_runs <= final_runs:
        return False
    reach = final_runs
    while reach < beat_runs:
        reach *= leaves
    return records > reach


def tree_plan(records, leaves, final_runs, first_run_length=1):
    """The passes one tree makes over ``records`` records. With ``first_run_length`` > 1 (the
    presort: pass 1 sorts each beat as it reads it) pass 1 reads runs of that length when that
    saves a pass (:func:`presorts`); otherwise the tree starts from runs of 1."""
    runs, run_length, half, passes = records, 1, 0, []
    if presorts(records, leaves, final_runs, first_run_length):
        runs, run_length = ceil_div(records, first_run_length), first_run_length
    while runs > final_runs:
        if runs > final_runs * leaves:
            active = leaves
        else:
            active = 1
            while ceil_div(runs, active) > final_runs:
                active *= 2
        groups = ceil_div(runs, active)
        passes.append(Pass(half, run_length, runs, active, groups))
        runs, run_length, half = groups, run_length * active, half ^ 1
    return TreePlan(records, tuple(passes), half, run_length, runs)


def tree_plans(config, records):
    """Every tree's plan for a job of ``records`` records on ``config`` (anything with
    ``trees``, ``leaves``, ``runs_per_tree`` and ``first_run_length``: a configuration, a
    layout descriptor)."""
    return [tree_plan(n, config.leaves, config.runs_per_tree, config.first_run_length)
            for n in split_records(records, config.trees)]


def leaf_regions(records, step, leaves):
    """Per leaf, ``(first record, record count, groups)`` for one pass."""
    q, rem = divmod(step.runs, step.active)
    spread = leaves // step.active
    regions, run = [], 0
    for j in range(leaves):
        k, inactive = divmod(j, spread)
        count = 0 if inactive else q + (k >= step.active - rem)
        first = run * step.run_length
        end = min(records, (run + count) * step.run_length)
        regions.append((first, max(0, end - first), step.groups))
        run += count
    return regions


def phase2_leaves(plans, reuse, leaves):
    """Per reused tree t and leaf j: ``(tree, half, first record, record count)``."""
    trees = len(plans)
    final = reuse * leaves // trees
    group = trees // reuse
    out = []
    for t in range(reuse):
        row = []
        for j in range(leaves):
            tree = t * group + j // final
            plan = plans[tree]
            first = (j % final) * plan.final_run_length
            count = max(0, min(plan.records, first + plan.final_run_length) - first)
            row.append((tree, plan.final_half, first if count else 0, count))
        out.append(row)
    return out


def output_bases(plans, halves, reuse):
    """The phase-2 write engine's bases, ``[port * S + slot]``: the free half of each tree
    (``halves[i]`` holds tree i's two half addresses)."""
    group = len(plans) // reuse
    return [halves[t * group + s][plans[t * group + s].final_half ^ 1]
            for t in range(reuse) for s in range(group)]
