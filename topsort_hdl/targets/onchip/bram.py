"""Block RAM with a registered read: the memory's data goes through a register of its own,
which on ECP5 is the block RAM's output register (``REGMODE = "OUTREG"``)."""

from amaranth.hdl import ClockSignal, Const, Instance, Module
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ...hardware.records import check_at_least

__all__ = ["RegisteredReadRam", "DP16KD_WORDS", "DP16KD_BYTES"]

# An ECP5 DP16KD block in its 1024 x 18 mode: two 9-bit byte lanes, the data bytes in bits
# 0-7 and 9-16, written under byte enables on address bits 0 and 1; the word address on bits
# 4-13 (Lattice TN1264, "ECP5 Memory Usage Guide").
DP16KD_WORDS = 1024
DP16KD_BYTES = 2


class RegisteredReadRam(wiring.Component):
    """``words`` words of ``width`` bits (whole bytes): one write port with byte enables and
    one read port whose data reaches ``r_data`` two cycles after its address.

    The read has two steps, each with its own enable: ``r_en`` reads ``r_addr`` into the RAM's
    output (held while ``r_en`` is low), ``r_reg_en`` moves that output into the read register
    ``r_data``. A write and a read of one word in the same cycle read the old data.

    On an ECP5 (``platform.family == "ecp5"``) with at most :data:`DP16KD_WORDS` words the
    memory is built from DP16KD blocks with their output registers on: the RAM's clock-to-data
    (5.8 ns at speed 6 in nextpnr's timing data) then ends inside the block, and what leaves
    it is a register's (1 ns). Yosys does not map a register after a block RAM into that
    register; elsewhere the memory is inferred and the register is a flip-flop after it, with
    the same behaviour.

    Members
    -------
    w_addr : In(range(words))
    w_data : In(width)
    w_en : In(width // 8)
        One enable per byte; no write while 0.
    r_addr : In(range(words))
    r_en : In(1)
    r_reg_en : In(1)
    r_data : Out(width)
    """

    def __init__(self, words, width):
        check_at_least("words", words, 1)
        if width < 8 or width % 8:
            raise ValueError(f"width must be a positive multiple of 8 bits, not {width}")
        self.words = words
        self.width = width
        self.mem = None     # the inferred memory once elaborated without blocks (simulation)
        super().__init__({
            "w_addr": In(range(words)),
            "w_data": In(width),
            "w_en": In(width // 8),
            "r_addr": In(range(words)),
            "r_en": In(1),
            "r_reg_en": In(1),
            "r_data": Out(width),
        })

    def _ecp5_blocks(self, platform):
        return (getattr(platform, "family", None) == "ecp5" and self.words <= DP16KD_WORDS
                and self.width % (8 * DP16KD_BYTES) == 0)

    def elaborate(self, platform):
        m = Module()
        if self._ecp5_blocks(platform):
            for index in range(self.width // (8 * DP16KD_BYTES)):
                m.submodules[f"block{index}"] = self._dp16kd(index)
            return m
        mem = self.mem = m.submodules.mem = memory.Memory(
            shape=self.width, depth=self.words, init=[])
        rd = mem.read_port(transparent_for=())
        wr = mem.write_port(granularity=8)
        m.d.comb += [
            rd.addr.eq(self.r_addr), rd.en.eq(self.r_en),
            wr.addr.eq(self.w_addr), wr.data.eq(self.w_data), wr.en.eq(self.w_en),
        ]
        with m.If(self.r_reg_en):
            m.d.sync += self.r_data.eq(rd.data)
        return m

    def _dp16kd(self, index):
        """Block ``index``: bytes ``2 * index`` and ``2 * index + 1``; writes on port A,
        reads on port B through its output register."""
        bits = 8 * DP16KD_BYTES
        data_in = self.w_data[index * bits:(index + 1) * bits]
        data_out = self.r_data[index * bits:(index + 1) * bits]
        enables = self.w_en[index * DP16KD_BYTES:(index + 1) * DP16KD_BYTES]
        zero = Const(0, 1)
        clock = ClockSignal("sync")
        ports = {
            "i_CLKA": clock, "i_CEA": 1, "i_OCEA": 1, "i_RSTA": 0,
            "i_WEA": enables.any(),
            "i_CLKB": clock, "i_CEB": self.r_en, "i_OCEB": self.r_reg_en, "i_RSTB": 0,
            "i_WEB": 0,
        }
        for pin in range(3):
            ports[f"i_CSA{pin}"] = zero
            ports[f"i_CSB{pin}"] = zero
        # Address bits: byte enables (A) or 0 (B) on 0-1, 0 on 2-3, the word on 4-13.
        for pin in range(14):
            word_bit = pin - 4
            ports[f"i_ADA{pin}"] = (enables[pin] if pin < DP16KD_BYTES else
                                    self.w_addr[word_bit] if 0 <= word_bit < len(self.w_addr)
                                    else zero)
            ports[f"i_ADB{pin}"] = (self.r_addr[word_bit]
                                    if 0 <= word_bit < len(self.r_addr) else zero)
        # Data bits: byte b at 9b .. 9b + 7; bits 8 and 17 unused.
        for pin in range(18):
            lane, bit = divmod(pin, 9)
            if bit < 8:
                ports[f"i_DIA{pin}"] = data_in[8 * lane + bit]
                ports[f"o_DOB{pin}"] = data_out[8 * lane + bit]
            else:
                ports[f"i_DIA{pin}"] = zero
            ports[f"i_DIB{pin}"] = zero
        return Instance(
            "DP16KD",
            p_DATA_WIDTH_A=18, p_DATA_WIDTH_B=18,
            p_REGMODE_A="NOREG", p_REGMODE_B="OUTREG",
            p_RESETMODE="SYNC", p_ASYNC_RESET_RELEASE="SYNC",
            p_CSDECODE_A="0b000", p_CSDECODE_B="0b000",
            p_WRITEMODE_A="NORMAL", p_WRITEMODE_B="NORMAL",
            p_GSR="AUTO",
            **ports,
        )
