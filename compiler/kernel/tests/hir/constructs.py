# The constructs of issue 22, as Python writes them (see tests/constructs.rs for them run).
import math
import wave

TILE = 8
SCALE: f32 = 0.5


def first_divisor(x: u32) -> u32:
    if x < 4:
        return 1
    for k in range(2, 16):
        if x % k == 0:
            return k
    return 0


@wave.kernel(workgroup=32)
def constructs(inp: u8[:], out: f32[:], bits: u16[:], h: f16):
    i = wave.global_id()
    t = wave.thread_id()
    tile = wave.local_array(f32, (4, TILE))
    x = f32(inp[i]) * SCALE
    a, b = x, -x
    a, b = b, a
    c = d = 0.0
    tile[t // TILE, t % TILE] = math.exp(a) + math.log(x + 1.0) + math.tanh(b)
    wave.barrier()
    c = tile[t % 4][t // 4] ** 2 + pow(x, 1.5) + math.pi
    d = wave.reduce_max(c) + wave.prefix_sum(c) + f32(h)
    bits[i] = wave.popcount(inp[i]) + wave.clz(i) + wave.ctz(i) + first_divisor(i)
    out[i] = min(c, d, x) + max(a, b, 1.0)
