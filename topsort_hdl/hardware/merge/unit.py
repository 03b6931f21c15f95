"""What the streaming merge units (MMS and FLiMS) share: ports and parameters."""

from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from ..block import Block
from ..properties import RunTally, check, runs_sorted, stream_rules
from ..records import (
    MAX_MERGE_RATE,
    BundleLayout,
    RecordLayout,
    check_at_least,
    check_power_of_two,
    check_range,
)
from .run_selector import DEFAULT_INPUT_DEPTH, MIN_FIFO_DEPTH

__all__ = ["StreamMergeUnit"]


class StreamMergeUnit(Block):
    """Base of the merge units that take E-record bundles: two run streams in, one out.

    The contract every such unit keeps: ``a`` and ``b`` carry sorted runs of whole bundles
    (sorted within and across bundles, ``last`` on a run's final bundle), ``o`` the merged
    runs, one output bundle per input bundle; a new input bundle can be taken every cycle and
    runs follow each other without an idle cycle; every port is a plain valid/ready stream;
    equal keys across inputs keep every record (no key value is reserved).

    Subclasses say how many network layers their pipeline spreads ``network_stages`` over
    (``network_layers``) and how many cycles a bundle spends between selection and the output
    FIFO (``pipeline_latency``).

    Parameters
    ----------
    record : RecordLayout
        Record layout.
    rate : int
        Records per bundle ``E``: a power of two up to
        :data:`~topsort_hdl.hardware.records.MAX_MERGE_RATE`.
    network_stages : int or None
        Pipeline registers in the unit's merge network(s); default one per network layer.
    input_depth : int
        Depth of each input FIFO, at least :data:`.run_selector.MIN_FIFO_DEPTH`; default
        :data:`.run_selector.DEFAULT_INPUT_DEPTH`.
    output_depth : int or None
        Depth of the output FIFO; default pipeline latency + 4, enough for full rate.

    Members
    -------
    a, b : In(stream.Signature(BundleLayout(record, rate)))
        Input runs: sorted sequences of whole bundles, ``last`` on the final bundle.
    o : Out(stream.Signature(BundleLayout(record, rate)))
        Merged runs; one output bundle per input bundle, ``last`` on the final one.
    """

    def __init__(self, record, rate, *, network_stages=None, input_depth=DEFAULT_INPUT_DEPTH,
                 output_depth=None):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_power_of_two("rate", rate, MAX_MERGE_RATE)
        check_at_least("input_depth", input_depth, MIN_FIFO_DEPTH)
        layers = self.network_layers(rate)
        if network_stages is None:
            network_stages = layers
        check_range("network_stages", network_stages, 0, layers)
        self._record = record
        self._rate = rate
        self._input_depth = input_depth
        self._network_stages = network_stages
        if output_depth is None:
            output_depth = self.pipeline_latency + 4    # pipeline latency + FIFO round trip
        check_at_least("output_depth", output_depth, MIN_FIFO_DEPTH)
        self._output_depth = output_depth
        self._bundle = BundleLayout(record, rate)
        super().__init__({
            "a": In(stream.Signature(self._bundle)),
            "b": In(stream.Signature(self._bundle)),
            "o": Out(stream.Signature(self._bundle)),
        })

    @staticmethod
    def network_layers(rate):
        """Compare-swap layers the pipeline registers are spread over, at ``rate``."""
        raise NotImplementedError

    @property
    def record(self):
        return self._record

    @property
    def rate(self):
        return self._rate

    @property
    def bundle(self):
        return self._bundle

    @property
    def pipeline_latency(self):
        """Cycles from the selection of a bundle to its output bundle entering the FIFO."""
        raise NotImplementedError

    @property
    def output_depth(self):
        return self._output_depth

    def unit_properties(self, m):
        """The contract, asserted in formal builds (inputs assumed sorted runs): the output
        keeps the stream rules and carries sorted runs; each run leaves with as many bundles
        as its two inputs brought, and any one record value as often as they brought it."""
        stream_rules(m, self.o, "o")
        runs_sorted(m, self.o, "o")
        tally = RunTally(m, self._record, run_bits=5)
        _, a_bundles, a_matches, _ = tally.tally(self.a, "a")
        _, b_bundles, b_matches, _ = tally.tally(self.b, "b")
        o_runs, o_bundles, o_matches, o_here = tally.tally(self.o, "o")
        o = self.o
        with m.If(o.valid & o.ready & o.payload.last & (o_runs == tally.run)):
            check(m, o_bundles + 1 == a_bundles + b_bundles,
                  "o: a run left with other than one bundle per bundle in")
            check(m, o_matches + o_here == a_matches + b_matches,
                  "o: a record of a run was lost or doubled")
