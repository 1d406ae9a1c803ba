import wave


@wave.kernel
def broken(a: f32[:], n: u32, m):
    i = wave.global_id()
    x = a[i] + i
    a = 3
    if i:
        pass
    y = 1 / 2
    z = 7 // 2.0
    a[i] = n
    helper(i)
    w = undefined + 1
    break
    for k in items:
        pass
    q = wave.shuffle(1.0)
    return 5


def not_a_kernel():
    pass


def ping(n: u32) -> u32:
    return pong(n)


def pong(n: u32) -> u32:
    return ping(n)


@wave.kernel
def recursive(out: u32[:]):
    out[0] = ping(1)
