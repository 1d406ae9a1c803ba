"""The wave_gpu package: kernels called on numpy arrays, launch shapes, devices, errors."""

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import wave_gpu
import kernels_for_tests as k

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def test_the_reference_sdks_readme_example_runs_unchanged(device, tmp_path):
    # Its README's program, verbatim, as a script of its own in a fresh interpreter (on the
    # device of this run).
    script = tmp_path / "readme.py"
    script.write_text((ROOT / "examples" / "readme_vector_add.py").read_text())
    env = dict(os.environ, WAVE_DEVICE=device)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[6.0, 8.0, 10.0, 12.0]"


def test_a_kernel_without_source_says_what_to_do():
    program = ("import wave_gpu\n@wave_gpu.kernel\ndef k(a: wave_gpu.f32[:]):\n    a[0] = 1.0\n"
               "k(wave_gpu.zeros(1))\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 1
    assert "wave_gpu.WaveError: the source of kernel `k` cannot be read" in out.stderr
    assert "Program.compile(text)" in out.stderr


def test_a_kernel_defined_inside_a_function(device):
    # As the reference SDK's own test writes it: the kernel is nested and indented.
    a = wave_gpu.array([1.0, 2.0, 3.0, 4.0])
    b = wave_gpu.array([5.0, 6.0, 7.0, 8.0])
    out = wave_gpu.zeros(4)

    @wave_gpu.kernel
    def vector_add(
        a: wave_gpu.f32[:],
        b: wave_gpu.f32[:],
        out: wave_gpu.f32[:],
        n: wave_gpu.u32,
    ):
        gid = wave_gpu.thread_id()
        if gid < n:
            out[gid] = a[gid] + b[gid]

    vector_add(a, b, out, len(a))
    assert out.to_list() == [6.0, 8.0, 10.0, 12.0]


def test_launch_shapes(device):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    want = 2.0 * x + 1.0
    # k[grid]: workgroups of the declared 64 threads.
    y = np.ones(n, np.float32)
    k.saxpy[16](x, y, 2.0, n)
    np.testing.assert_array_equal(y, want)
    # k[grid, workgroup], the Numba convention, with at most the declared 64 threads.
    y = np.ones(n, np.float32)
    k.saxpy[32, 32](x, y, 2.0, n)
    np.testing.assert_array_equal(y, want)
    with pytest.raises(wave_gpu.LaunchError, match=r"declares workgroups of \(64, 1, 1\)"):
        k.saxpy[8, 128](x, y, 2.0, n)
    # Keywords, and the default: one thread per element of the largest array.
    y = np.ones(n, np.float32)
    k.saxpy(x, y, 2.0, n, grid=(16,), workgroup=64)
    np.testing.assert_array_equal(y, want)
    y = np.ones(n, np.float32)
    k.saxpy(x, y, np.float32(2.0), np.uint32(n))
    np.testing.assert_array_equal(y, want)
    # Too small a grid covers only part.
    y = np.ones(n, np.float32)
    k.saxpy[1](x, y, 2.0, n)
    np.testing.assert_array_equal(y[:64], want[:64])
    assert (y[64:] == 1.0).all()


def test_two_dimensions_helpers_and_signed_scalars(device):
    w, h = 19, 13
    a = np.arange(w * h, dtype=np.int32).reshape(h, w) - 100
    out = np.zeros_like(a)
    k.clamp_2d[(3, 2), (8, 8)](a, out, w, h, -50, 50)
    np.testing.assert_array_equal(out, np.clip(a, -50, 50))
    with pytest.raises(wave_gpu.LaunchError, match=r"give the grid of a 2- or 3-dimensional"):
        k.clamp_2d(a, out, w, h, -50, 50)


def test_atomics_and_in_place_updates(device):
    values = np.arange(4096, dtype=np.uint32)
    bins = np.zeros(16, np.uint32)
    k.histogram(values, bins, len(values))
    np.testing.assert_array_equal(bins, np.full(16, 256, np.uint32))


def test_f16_and_f64_buffers(device):
    a = np.array([0.5, 1.5, -2.25, 65504.0], np.float16)
    b = np.zeros(4, np.float64)
    k.halves(a, b, 4)
    np.testing.assert_array_equal(b, a.astype(np.float64) * 2.0)


def test_an_array_passed_twice_is_one_buffer(device):
    x = np.arange(100, dtype=np.float32)
    k.saxpy(x, x, 3.0, 100)  # y is x: x = 3x + x
    np.testing.assert_array_equal(x, 4.0 * np.arange(100, dtype=np.float32))


def test_two_views_of_one_memory_are_refused():
    x = np.arange(8, dtype=np.float32)
    with pytest.raises(TypeError, match="argument 2 is a view of memory that another array"):
        k.saxpy(x, x[:], 1.0, 8)


def test_a_strided_array_is_written_back(device):
    base = np.zeros((100, 2), np.float32)
    y = base[:, 0]  # not contiguous
    x = np.ones(100, np.float32)
    k.saxpy(x, y, 1.0, 100)
    np.testing.assert_array_equal(base[:, 0], np.ones(100))
    np.testing.assert_array_equal(base[:, 1], np.zeros(100))


def test_a_list_may_be_an_input():
    y = np.zeros(3, np.float32)
    k.saxpy([1.0, 2.0, 3.0], y, 1.0, 3)
    assert y.tolist() == [1.0, 2.0, 3.0]


def test_wrong_dtype_is_a_type_error_naming_the_parameter():
    x = np.ones(10, np.float64)
    y = np.ones(10, np.float32)
    with pytest.raises(TypeError, match=r"`x: f32\[:\]` takes float32 elements, got a float64 array"):
        k.saxpy(x, y, 1.0, 10)
    with pytest.raises(TypeError, match=r"`a: f32` takes a f32 value, got an array"):
        k.saxpy(y, y, y, 10)
    with pytest.raises(TypeError, match=r"`x: f32\[:\]` takes an array, got str"):
        k.saxpy("x", y, 1.0, 10)
    with pytest.raises(TypeError, match=r"`n: u32` takes a u32 value, got float"):
        k.saxpy(y, y, 1.0, 10.0)
    with pytest.raises(OverflowError, match=r"`n: u32` takes 0 to 2\*\*32 - 1, got -1"):
        k.saxpy(y, y, 1.0, -1)
    with pytest.raises(TypeError, match=r"may be written by the kernel: pass a numpy array"):
        k.saxpy(y, [1.0] * 10, 1.0, 10)
    ro = np.ones(10, np.float32)
    ro.flags.writeable = False
    with pytest.raises(TypeError, match=r"`y` may be written by the kernel, and the array is read-only"):
        k.saxpy(y, ro, 1.0, 10)
    k.saxpy(ro, y, 1.0, 10)  # a read-only input is fine


def test_wrong_argument_count_is_a_type_error():
    y = np.ones(10, np.float32)
    with pytest.raises(TypeError, match=r"saxpy\(x, y, a, n\) takes 4 arguments, 3 given"):
        k.saxpy(y, y, 1.0)
    with pytest.raises(ValueError, match=r"grid dimensions are between 1"):
        k.saxpy[0](y, y, 1.0, 10)
    for bad in (float("nan"), -1.0, 0.0):
        with pytest.raises(ValueError, match="timeout must be a positive number"):
            k.saxpy(y, y, 1.0, 10, timeout=bad)


def test_a_compile_error_is_a_compile_error_with_its_place(tmp_path):
    src = tmp_path / "bad_kernel.py"
    src.write_text(
        "import wave_gpu as wave\n"
        "from wave_gpu import f32, u32\n"
        "\n"
        "@wave.kernel(workgroup=64)\n"
        "def bad(a: f32[:], n: u32):\n"
        "    i = wave.global_id()\n"
        "    a[i] = a[i] + i\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import bad_kernel
    finally:
        sys.path.remove(str(tmp_path))
    with pytest.raises(wave_gpu.CompileError) as e:
        bad_kernel.bad(np.zeros(4, np.float32), 4)
    err = e.value
    assert "error[E0401]" in str(err)
    assert "bad_kernel.py:7:12" in str(err)
    assert "a[i] = a[i] + i" in str(err)
    assert (err.code, err.line, err.column) == ("E0401", 7, 12)
    assert err.file.endswith("bad_kernel.py")
    assert err.diagnostics[0]["severity"] == "error"
    assert isinstance(err, wave_gpu.WaveError)


def test_a_trap_is_a_kernel_trap_with_line_wave_and_lane(emulator_only):
    a = np.zeros(64, np.float32)
    with pytest.raises(wave_gpu.KernelTrap) as e:
        k.out_of_bounds[1](a, 40)
    t = e.value
    assert t.reason.startswith("device memory out of bounds")
    assert t.kernel == "out_of_bounds"
    assert t.source_line.strip() == "a[i + n] = 1.0"
    lines = (HERE / "kernels_for_tests.py").read_text().splitlines()
    assert t.line == lines.index("    a[i + n] = 1.0") + 1
    assert isinstance(t.wave, int) and isinstance(t.lane, int)
    assert t.workgroup == (0, 0, 0)
    assert f"kernels_for_tests.py:{t.line}" in str(t)


def test_the_instruction_budget_is_a_keyword(emulator_only):
    flag = np.zeros(2, np.uint32)
    with pytest.raises(wave_gpu.KernelTrap, match="instruction budget exceeded"):
        k.spin[1](flag, max_steps=10_000)


def test_ctrl_c_interrupts_a_long_emulator_run(emulator_only):
    flag = np.zeros(2, np.uint32)
    # A process started in the background by a shell ignores SIGINT (CI may be one): the
    # handler Python installs in a terminal is installed here for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    began = time.monotonic()
    timer.start()
    try:
        # The budget is many seconds of work: if the interrupt failed, the run would end
        # there (and the test fail) rather than hang.
        with pytest.raises(KeyboardInterrupt):
            k.spin[1](flag, max_steps=10**9)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - began < 10


def test_devices_and_a_missing_gpu():
    assert wave_gpu.devices()[0] == "emulator"
    if len(wave_gpu.devices()) == 1:
        with pytest.raises(wave_gpu.DeviceError):
            k.saxpy(np.ones(4, np.float32), np.ones(4, np.float32), 1.0, 4, device="cuda")
    with pytest.raises(ValueError, match="unknown device"):
        wave_gpu.set_device("tpu")


def test_other_languages_and_assembly_through_program():
    rust = (ROOT / "conformance" / "kernels" / "rust" / "vector_add.rs").read_text()
    p = wave_gpu.Program.compile(rust, "rust", "vector_add.rs")
    assert p.kernels == ["vector_add"]
    a = np.arange(100, dtype=np.float32)
    c = np.zeros(100, np.float32)
    p["vector_add"][2, 64](a, a, c, 100)
    np.testing.assert_array_equal(c, 2 * a)
    asm = ROOT / "compiler" / "asm" / "tests" / "data" / "vector_add.wave"
    q = wave_gpu.Program.load(asm)
    kernel = q[q.kernels[0]]
    assert [param[0] for param in kernel.params][:3] == ["a", "b", "c"]


def test_warnings_are_python_warnings():
    text = ".kernel scale\n.param out: ptr\n.workgroup_size 1\n    device_load.u32 r1, r0\n    fmul r1, r1, 0.1\n    device_store.u32 r0, r1\n.end\n"
    with pytest.warns(wave_gpu.WaveWarning, match=r"warning\[W0106\]"):
        p = wave_gpu.Program.compile(text, "wave", "scale.wave")
    out = np.array([2.0], np.float32)
    p["scale"][1](out)
    assert out[0] == np.float32(2.0) * np.float32(0.1)


def test_a_compiled_kernel_is_cached_in_memory_and_on_disk(tmp_path):
    text = (HERE / "kernels_for_tests.py").read_text()
    first = wave_gpu.Program.compile(text, "python", "cached.py")
    began = time.perf_counter()
    for _ in range(100):
        wave_gpu.Program.compile(text, "python", "cached.py")
    per_call = (time.perf_counter() - began) / 100
    assert first.kernels == wave_gpu.Program.compile(text, "python", "cached.py").kernels
    assert per_call < 0.01  # a hash and a look-up; the benchmark measures it closely
    # A second process finds it on disk.
    env = dict(os.environ, WAVE_CACHE_DIR=str(tmp_path))
    probe = ("import wave_gpu, sys; p = wave_gpu.Program.compile(open(sys.argv[1]).read(), "
             "'python', 'cached.py'); print(p._native.loaded_from_disk)")
    runs = [subprocess.run([sys.executable, "-c", probe, str(HERE / "kernels_for_tests.py")],
                           capture_output=True, text=True, env=env, timeout=120)
            for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["False", "True"], [r.stderr for r in runs]


def test_calling_an_intrinsic_outside_a_kernel_says_so():
    with pytest.raises(RuntimeError, match="runs only inside a kernel"):
        wave_gpu.thread_id()


def test_gpu_arrays_are_used_in_place(cuda_only):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    x = cupy.arange(1000, dtype=cupy.float32)
    y = cupy.ones(1000, dtype=cupy.float32)
    k.saxpy(x, y, 2.0, 1000)
    np.testing.assert_array_equal(cupy.asnumpy(y), 2.0 * np.arange(1000) + 1.0)
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    t = torch.zeros(1000, dtype=torch.float32, device="cuda")
    k.saxpy(x, t, 1.0, 1000)
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(1000, dtype=np.float32))
    with pytest.raises(TypeError, match="takes float32 elements, got a float64 GPU array"):
        k.saxpy(cupy.ones(10), y, 1.0, 10)
