# Mistakes with the constructs of issue 22, and what each says.
import wave

TILE = 16
BAD = wave.thread_id()


def mixed(x: u32) -> u32:
    if x > 2:
        return 1.5
    return x


@wave.kernel(workgroup=32)
def errors(a: u32[:], b: f32[:], n: u32, small: u8):
    i = wave.global_id()
    t = wave.local_array(u32, (4, 8))
    a[i] = a[i] ** n
    a[i] = TILE(3)
    a[i] = t[i]
    a[i] = BAD
    a[i] = mixed(i)
    b[i] = wave.popcount(b[i])
    for k in range(0, n, i):
        a[k] = 0
    wave.atomic_add(a, i, 1) if False else 0
