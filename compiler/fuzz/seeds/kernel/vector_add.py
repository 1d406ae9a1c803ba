import wave


@wave.kernel(workgroup=64)
def vector_add(a: f32[:], b: f32[:], c: f32[:], n: u32):
    """c[i] = a[i] + b[i] for every i below n; the threads past n store nothing."""
    i = wave.global_id()
    if i < n:
        c[i] = a[i] + b[i]
