import wave


@wave.kernel(workgroup=64)
def guarded_and(data: f32[:], out: f32[:], n: u32):
    """`and` reads data[i] only where i < n: the last threads would fault."""
    i = wave.global_id()
    r: f32 = 0.0
    if i < n and data[i] > 0.0:
        r = 1.0
    out[i] = r


@wave.kernel(workgroup=64)
def guarded_or(data: f32[:], out: f32[:], n: u32):
    """`or` reads data[i] only where i < n."""
    i = wave.global_id()
    r: f32 = 0.0
    if i >= n or data[i] > 0.0:
        r = 1.0
    out[i] = r


@wave.kernel(workgroup=64)
def guarded_select(data: f32[:], out: f32[:], n: u32):
    """A conditional expression evaluates only the side it picks."""
    i = wave.global_id()
    out[i] = data[i] if i < n else -1.0


@wave.kernel(workgroup=8)
def wave_op_in_select(out: u32[:]):
    """The wave operation runs only in the lanes that pick it: 4 lanes, at every width."""
    lane = wave.lane_id()
    out[lane] = wave.reduce_add(u32(1)) if lane < 4 else 0
