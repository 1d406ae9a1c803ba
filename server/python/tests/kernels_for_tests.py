"""Kernels written as a user would, in a module of their own: `import wave_gpu as wave` and
names imported from the package."""

import wave_gpu as wave
from wave_gpu import f32, f64, i32, u32


@wave.kernel(workgroup=64)
def saxpy(x: f32[:], y: f32[:], a: f32, n: u32):
    i = wave.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]


def clamp(v: i32, lo: i32, hi: i32) -> i32:
    return wave.min(wave.max(v, lo), hi)


@wave.kernel(workgroup=(8, 8))
def clamp_2d(a: i32[:], out: i32[:], width: u32, height: u32, lo: i32, hi: i32):
    x = wave.global_id(0)
    y = wave.global_id(1)
    if x < width and y < height:
        out[y * width + x] = clamp(a[y * width + x], lo, hi)


@wave.kernel(workgroup=64)
def histogram(values: u32[:], bins: u32[:], n: u32):
    i = wave.global_id()
    if i < n:
        wave.atomic_add(bins, values[i] % 16, 1)


@wave.kernel(workgroup=64)
def out_of_bounds(a: f32[:], n: u32):
    i = wave.global_id()
    a[i + n] = 1.0


@wave.kernel(workgroup=32)
def spin(flag: u32[:]):
    i: u32 = 0
    while flag[0] == 0:
        i = i + 1
    flag[1] = i


@wave.kernel(workgroup=64)
def halves(a: wave.f16[:], b: wave.f64[:], n: u32):
    i = wave.global_id()
    if i < n:
        b[i] = f64(f32(a[i]) * 2.0)
