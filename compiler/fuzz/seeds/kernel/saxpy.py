import wave


@wave.kernel(workgroup=64)
def saxpy(alpha: f32, x: f32[:], y: f32[:], n: u32):
    """y[i] = alpha * x[i] + y[i] for every i below n."""
    i = wave.global_id()
    if i >= n:
        return
    y[i] = alpha * x[i] + y[i]
