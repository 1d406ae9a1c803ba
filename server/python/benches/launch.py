"""Launch overhead from Python against Rust, the cached compile, and the MLP's epoch time.

    python server/python/benches/launch.py [--device cuda]

Prints each figure with its target; the Rust baseline is measured in the same process, on
the same kernel, arguments and device, so the difference is the Python layer's cost.
"""

import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

import wave_gpu
from wave_gpu import _native

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "examples"))

TINY = """import wave_gpu as wave
from wave_gpu import f32, u32

@wave.kernel(workgroup=32)
def tiny(x: f32[:], y: f32[:], a: f32, n: u32):
    i = wave.global_id()
    if i < n:
        y[i] = a * x[i] + y[i]
"""


def best_of(f, repeats=7):
    return min(f() for _ in range(repeats))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="emulator")
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--epochs", type=int, default=5)
    a = parser.parse_args()
    wave_gpu.set_device(a.device)
    n = a.iterations
    program = wave_gpu.Program.compile(TINY, "python", "tiny.py")
    tiny = program["tiny"]
    x = np.arange(32, dtype=np.float32)
    y = np.zeros(32, dtype=np.float32)
    launcher = tiny[1]
    launcher(x, y, 1.0, 32)  # compile, open the device

    def python_launches():
        began = time.perf_counter()
        for _ in range(n):
            launcher(x, y, 1.0, 32)
        return (time.perf_counter() - began) / n

    device, _ = wave_gpu._device(a.device)
    args = [("host_ro", x.view(np.uint8)), ("host", y.view(np.uint8)), ("f32", 1.0), ("u32", 32)]

    def rust_launches():
        return _native.bench_rust_launch(device, program._native, "tiny", (1, 1, 1), None, args, n)

    py = best_of(python_launches) * 1e6
    rs = best_of(rust_launches) * 1e6
    print(f"launch of a tiny kernel on {a.device} ({device.description}):")
    print(f"  from Rust   {rs:8.2f} us")
    print(f"  from Python {py:8.2f} us   ratio {py / rs:.2f}, difference {py - rs:.2f} us "
          f"(target: under 20 us) {'met' if py - rs < 20 else 'MISSED'}")

    text = (HERE.parent / "tests" / "kernels_for_tests.py").read_text()
    wave_gpu.Program.compile(text, "python", "cached.py")

    def cached_compiles():
        began = time.perf_counter()
        for _ in range(1000):
            wave_gpu.Program.compile(text, "python", "cached.py")
        return (time.perf_counter() - began) / 1000

    def kernel_compiles():
        began = time.perf_counter()
        for _ in range(1000):
            tiny.compile()
        return (time.perf_counter() - began) / 1000

    # A text no cache has seen: a real compile.
    began = time.perf_counter()
    wave_gpu.Program.compile(text + f"\n# {time.time_ns()}\n", "python", "fresh.py")
    fresh = time.perf_counter() - began
    cached = best_of(cached_compiles) * 1e3
    print(f"compile of a {len(text)}-byte kernel file: first {fresh * 1e3:.2f} ms; cached "
          f"{cached:.4f} ms (target: under 0.1 ms) {'met' if cached < 0.1 else 'MISSED'}; "
          f"a kernel's own {best_of(kernel_compiles) * 1e3:.4f} ms")

    import mlp_digits
    _, accuracy, epoch_s = mlp_digits.train(device=a.device, epochs=a.epochs, log=lambda s: None)
    print(f"MLP 64-128-10 on the digits, batch 32: median epoch {epoch_s:.3f} s on {a.device} "
          f"(test accuracy {accuracy:.4f} after {a.epochs} epochs)")


if __name__ == "__main__":
    main()
