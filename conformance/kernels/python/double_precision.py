import wave


@wave.kernel(workgroup=64)
def double_precision(x: f64[:], y: f64[:], out: f64[:], single: f32[:], flags: i32[:], n: u32):
    """f64 buffers and arithmetic in register pairs: a sum of tenths that f32 would round
    away, a division and a square root, comparisons, min, max, abs, negation and floor (built
    from the ISA's f64 instructions, exactly), and conversions from integers and to f32 and
    i32."""
    i = wave.global_id()
    if i >= n:
        return
    a = x[i]
    b = y[i]
    s: f64 = 0.0
    for k in range(u32(10)):
        s += a * f64(0.1) + f64(k)
    out[i] = s - b / f64(3.0)
    out[n + i] = wave.sqrt(abs(a - b)) + min(a, -b) - max(a, b)
    single[i] = f32(a * b)
    flags[i] = (1 if a < b else 0) + (2 if a == b else 0) + (4 if -a >= f64(i) else 0) + 8 * i32(
        wave.floor(a * f64(0.01))
    )
