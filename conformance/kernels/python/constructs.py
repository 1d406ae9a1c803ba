import math

import wave

TILE = 8
HALF: f32 = 0.5


def clamp_index(x: u32, n: u32) -> u32:
    if x >= n:
        return n - 1
    return x


@wave.kernel(workgroup=64)
def constructs(data: u8[:], out: f32[:], bits: u32[:], exact: f32[:], h: f16, n: u32):
    """The constructs of issue 22 on one dispatch: module constants, a u8 buffer, an f16
    parameter, tuple assignment, an early-returning helper, a 2D local array, exp, log,
    tanh, pow and **, bit counts, and float wave reductions in full and partial waves."""
    i = wave.global_id()
    t = wave.thread_id()
    tile = wave.local_array(u32, (8, TILE))
    tile[t // TILE, t % TILE] = data[i]
    wave.barrier()
    if i >= n:
        return
    x = f32(data[clamp_index(i + 1, n)]) / 32.0 - 4.0
    a, b = x, HALF
    out[4 * i] = math.exp(a) * b
    out[4 * i + 1] = math.log(abs(x) + 0.25)
    out[4 * i + 2] = math.tanh(x)
    out[4 * i + 3] = (abs(x) + 1.0) ** 1.5 + f32(h)
    g = f32(i // 64)
    exact[i] = wave.reduce_max(g) + wave.reduce_add(g) / f32(wave.wave_width()) + wave.prefix_sum(1.0) - f32(wave.lane_id()) + f32(i % 4) ** 3
    same = u32(0)
    if t % 3 == 0:
        same = 1 if wave.reduce_add(1.0) == f32(wave.reduce_add(1)) else 0
    bits[i] = wave.popcount(data[i]) + wave.clz(i) * 16 + wave.ctz(i + 1) * 1024 + tile[t % 8][t // 8] * 65536 + same * 1073741824
