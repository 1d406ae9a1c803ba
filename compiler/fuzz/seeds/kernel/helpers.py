import wave


def square(x: f32) -> f32:
    return x * x


def triangle(n: u32) -> u32:
    s: u32 = 0
    for k in range(n + 1):
        s += k
    return min(s, 100)


def put(buf: f32[:], i: u32, v: f32):
    buf[i] = square(v) + 1.0


@wave.kernel(workgroup=32)
def helpers(out: f32[:], counts: u32[:]):
    lane = wave.lane_id()
    counts[lane] = triangle(lane)
    if lane == 0:
        put(out, lane, 2.0)
    elif triangle(lane) > 50:
        put(out, lane, square(f32(lane)))
