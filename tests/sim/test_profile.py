"""The kernel profiler (``topsort_hdl/sim/profile.py``): a tiny run in Icarus, rows checked
against the plan."""

import json

from topsort_hdl.core.config import config_from
from topsort_hdl.core.plan import split_records, tree_plan
from topsort_hdl.sim.profile import main, profile_table
from topsort_hdl.sim.runner import SIM_BUILD


def test_profile_rows_follow_the_plan(capsys):
    records, tree = 1000, 1
    main(["--config", "tiny", "--records", str(records), "--tree", str(tree), "--sim", "icarus"])
    config = config_from("tiny")
    stats = json.loads((SIM_BUILD / "profile_tiny_icarus" / "profile.json").read_text())
    mine = split_records(records, config.trees)[tree]
    plan = tree_plan(mine, config.leaves, config.runs_per_tree, config.first_run_length)
    rows = stats["passes"]
    assert [r["pass"] for r in rows] == [*range(len(plan.passes)), "phase 2"]
    beat_records = config.data_width // 64
    for row in rows[:-1]:
        assert row["w"] == -(-mine // beat_records)      # the tree's records, written once
        assert row["root"] == row["w"]
        assert row["r"] >= row["w"]                       # regions may share a boundary beat
        assert 0 < row["first_root"] < row["cycles"]
        assert row["root_stall"] >= 0 and row["tail"] > 0
    assert sum(r["cycles"] for r in rows[:-1]) <= stats["phase1_cycles"]
    assert abs(rows[-1]["cycles"] - stats["phase2_cycles"]) <= 1   # the window holds DONE
    assert rows[-1]["root"] == -(-records // (beat_records * config.reuse))
    out = capsys.readouterr().out
    assert out.splitlines()[-len(rows) - 2:] == profile_table(config, stats)
