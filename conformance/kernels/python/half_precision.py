import wave


@wave.kernel(workgroup=64)
def half_precision(x: f16[:], y: f16[:], out: f16[:], flags: i32[:], n: u32):
    """f16 buffers and arithmetic: multiply and add in half precision (hmul, hadd), a
    division, negation and comparisons (through f32, rounded back), and conversions to and
    from integers and f32."""
    i = wave.global_id()
    if i >= n:
        return
    a = x[i]
    b = y[i]
    s = a * b + a
    if s > b:
        s = s / f16(3.0)
    t = -s + f16(0.5)
    out[i] = t
    out[n + i] = f16(f32(t) * 0.25) - max(a, b)
    flags[i] = i32(a) * 2 + (1 if a < b else 0)
