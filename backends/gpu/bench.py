#!/usr/bin/env python3
"""Times four kernels written in WAVE assembly (through the PTX backend) against the same four
written the same way in CUDA C++, in one run on one GPU.

Usage:
    python3 backends/gpu/bench.py BUNDLE_DIR OUT_DIR [--runs N] [--warmup N] [--only NAME]
                                  [--quick] [--toolchain auto|nvcc|nvrtc]

BUNDLE_DIR/bench/<name>.ptx holds the PTX that `wave emit --target ptx --sm 90` made of
backends/gpu/bench/<name>.wave (make_bundle_bench.sh writes it);
the CUDA twins are backends/gpu/bench/<name>.cu, next to this script, and are compiled here.

Both versions of a kernel get the same flat device buffer, laid out the same way, and the same
arguments: the buffer's address, then 32-bit byte offsets and sizes. Inputs are seeded random
numbers; each version's output is checked against numpy (integer kernels exactly, SGEMM by
relative Frobenius error below 1e-4), once after a first run and again after the timed runs.
Each version is timed with CUDA events around its launches: warm-up runs, then the median of
--runs runs, the two versions taking turns. Writes OUT_DIR/bench.md and prints the same table.

With nvcc on PATH (toolchain nvcc), the CUDA sources are compiled to PTX by `nvcc -O3`, and
both versions' PTX goes through the same `ptxas -O3` to cubins, so the comparison is between
the PTX that each front end writes. Without it (toolchain nvrtc), CuPy compiles the CUDA
sources with NVRTC and the driver JIT-compiles the WAVE PTX.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "bench"
TARGET_RATIO = 1.25
SEED = 20260


def log(text=""):
    print(text, flush=True)


def u32(*values):
    return [numpy.uint32(v) for v in values]


def reduce_grid(n):
    """The grid of reduce and histogram: 1024 workgroups of 256 threads (about one resident
    wave of workgroups on an H100), fewer when n is small. Every thread must run the same
    number of steps of 16 bytes, so 16 * grid * 256 must divide n."""
    if n <= 0 or n % 4096:
        raise ValueError(f"n = {n} must be a positive multiple of 4096")
    grid = 1024
    while (n // 4096) % grid:
        grid //= 2
    return grid


class Spec:
    """One benchmark: its device memory layout, inputs, launches and reference check."""

    def __init__(self, name, size, memory, inputs, zero, launches, check, work):
        self.name = name
        self.size = size  # label for the table
        self.memory = memory  # bytes of the flat device buffer
        self.inputs = inputs  # [(offset, numpy array)] copied in once
        self.zero = zero  # [(offset, bytes)] cleared before every run
        self.launches = launches  # [(kernel, grid, block, args after the buffer)]
        self.check = check  # check(read) -> (ok, detail); read(offset, dtype, count)
        self.work = work  # work(ms) -> throughput text


def sgemm_spec(n, rng):
    if n <= 0 or n % 16:
        raise ValueError(f"SGEMM n = {n} must be a positive multiple of 16")
    a = rng.uniform(-1.0, 1.0, (n, n)).astype(numpy.float32)
    b = rng.uniform(-1.0, 1.0, (n, n)).astype(numpy.float32)
    size = n * n * 4
    oa, ob, oc = 0, size, 2 * size

    reference = []  # the float64 product, computed at the first check

    def check(read):
        if not reference:
            reference.append(a.astype(numpy.float64) @ b.astype(numpy.float64))
        ref = reference[0]
        c = read(oc, numpy.float32, n * n).reshape(n, n).astype(numpy.float64)
        err = float(numpy.linalg.norm(c - ref) / numpy.linalg.norm(ref))
        return err < 1e-4, f"relative Frobenius error {err:.1e}"

    return Spec(
        "sgemm",
        f"{n}x{n}x{n} f32",
        3 * size,
        [(oa, a), (ob, b)],
        [],
        [("sgemm", (n // 16, n // 16, 1), (16, 16, 1), u32(oa, ob, oc, n))],
        check,
        lambda ms: f"{2 * n**3 / (ms * 1e-3) / 1e12:.2f} TFLOP/s",
    )


def reduce_spec(n, rng):
    grid = reduce_grid(n)
    data = rng.integers(0, 2**32, n, dtype=numpy.uint32)
    out = n * 4
    want = int(data.sum(dtype=numpy.uint64) % 2**32)

    def check(read):
        got = int(read(out, numpy.uint32, 1)[0])
        return got == want, f"sum {got}" + ("" if got == want else f", expected {want}")

    return Spec(
        "reduce",
        f"n = 2^{n.bit_length() - 1} u32" if n & (n - 1) == 0 else f"n = {n} u32",
        out + 256,
        [(0, data)],
        [(out, 4)],
        [("reduce", (grid, 1, 1), (256, 1, 1), u32(0, out, n))],
        check,
        lambda ms: f"{n * 4 / (ms * 1e-3) / 1e9:.0f} GB/s",
    )


def histogram_spec(n, rng):
    grid = reduce_grid(n)
    data = rng.integers(0, 256, n, dtype=numpy.uint8)
    bins = n
    want = numpy.bincount(data, minlength=256).astype(numpy.uint32)

    def check(read):
        got = read(bins, numpy.uint32, 256)
        if numpy.array_equal(got, want):
            return True, "256 bins exact"
        i = int(numpy.argmax(got != want))
        return False, f"bin {i}: {int(got[i])}, expected {int(want[i])}"

    return Spec(
        "histogram",
        f"n = 2^{n.bit_length() - 1} bytes" if n & (n - 1) == 0 else f"n = {n} bytes",
        bins + 1024,
        [(0, data)],
        [(bins, 1024)],
        [("histogram", (grid, 1, 1), (256, 1, 1), u32(0, bins, n))],
        check,
        lambda ms: f"{n / (ms * 1e-3) / 1e9:.0f} GB/s",
    )


def prefix_sum_spec(n, rng):
    if n <= 0 or n % 4096:
        raise ValueError(f"prefix sum n = {n} must be a positive multiple of 4096")
    data = rng.integers(0, 2**32, n, dtype=numpy.uint32)
    blocks = n // 1024
    inp, out, sums = 0, n * 4, 2 * n * 4
    want = ((numpy.cumsum(data, dtype=numpy.uint64) - data) % 2**32).astype(numpy.uint32)

    def check(read):
        got = read(out, numpy.uint32, n)
        if numpy.array_equal(got, want):
            return True, f"{n} values exact"
        i = int(numpy.argmax(got != want))
        return False, f"value {i}: {int(got[i])}, expected {int(want[i])}"

    return Spec(
        "prefix_sum",
        f"n = 2^{n.bit_length() - 1} u32" if n & (n - 1) == 0 else f"n = {n} u32",
        sums + blocks * 4,
        [(inp, data)],
        [],
        [
            ("scan_blocks", (blocks, 1, 1), (256, 1, 1), u32(inp, out, sums)),
            ("scan_sums", (1, 1, 1), (256, 1, 1), u32(sums, blocks)),
            ("add_offsets", (blocks, 1, 1), (256, 1, 1), u32(out, sums)),
        ],
        check,
        # Read and written: the input, the output twice (scan, then offsets), the sums.
        lambda ms: f"{4 * n * 4 / (ms * 1e-3) / 1e9:.0f} GB/s (4 n words moved)",
    )


SPECS = {
    "sgemm": (sgemm_spec, 2048, 256),
    "reduce": (reduce_spec, 1 << 26, 1 << 22),
    "histogram": (histogram_spec, 1 << 26, 1 << 22),
    "prefix_sum": (prefix_sum_spec, 1 << 24, 1 << 20),
}


# ---------------------------------------------------------------------------------------------
# GPU side
# ---------------------------------------------------------------------------------------------


def tool_version(tool):
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    lines = [line.strip() for line in out.strip().splitlines() if line.strip()]
    release = [line for line in lines if "release" in line]
    return (release or lines or ["?"])[-1]


class Toolchain:
    """Turns the WAVE PTX and the CUDA sources into loaded CuPy modules."""

    def __init__(self, cupy, choice, arch, workdir):
        self.cupy = cupy
        self.arch = arch
        self.workdir = workdir
        nvcc = shutil.which("nvcc")
        ptxas = shutil.which("ptxas") or (str(Path(nvcc).with_name("ptxas")) if nvcc else None)
        if ptxas and not Path(ptxas).exists():
            ptxas = None
        if choice == "nvcc" and not (nvcc and ptxas):
            raise SystemExit("error: --toolchain nvcc, but nvcc and ptxas are not both on PATH")
        self.kind = "nvcc" if choice == "nvcc" or (choice == "auto" and nvcc and ptxas) else "nvrtc"
        self.nvcc, self.ptxas = nvcc, ptxas
        if self.kind == "nvcc":
            self.description = (
                f"CUDA: nvcc -O3 -arch={arch} -ptx ({tool_version(nvcc)}); "
                f"both versions' PTX: ptxas -O3 -arch={arch} ({tool_version(ptxas)})"
            )
        else:
            self.description = "CUDA: NVRTC through CuPy; WAVE PTX: the driver's JIT compiler"

    def _run(self, command):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            hint = " (--toolchain nvrtc compiles with CuPy's NVRTC instead)" if command[0] == self.nvcc else ""
            raise RuntimeError(f"{' '.join(command)} failed{hint}:\n{done.stderr.strip()}")

    def _cubin(self, ptx, name):
        cubin = self.workdir / f"{name}.cubin"
        self._run([self.ptxas, "-O3", f"-arch={self.arch}", str(ptx), "-o", str(cubin)])
        return self.cupy.RawModule(path=str(cubin))

    def wave(self, ptx, name):
        if self.kind == "nvcc":
            return self._cubin(ptx, f"{name}_wave")
        return self.cupy.RawModule(path=str(ptx))

    def cuda(self, source, name):
        if self.kind == "nvcc":
            ptx = self.workdir / f"{name}_cuda.ptx"
            self._run([self.nvcc, "-O3", f"-arch={self.arch}", "-ptx", str(source), "-o", str(ptx)])
            return self._cubin(ptx, f"{name}_cuda")
        return self.cupy.RawModule(code=source.read_text(), options=("-std=c++17",), backend="nvrtc")


class Device:
    def __init__(self, cupy):
        self.cupy = cupy
        self.stream = cupy.cuda.get_current_stream()

    def buffer(self, spec):
        buf = self.cupy.zeros(spec.memory, dtype=self.cupy.uint8)
        for offset, array in spec.inputs:
            raw = numpy.ascontiguousarray(array).reshape(-1).view(numpy.uint8)
            buf[offset : offset + raw.size].set(raw)
        self.cupy.cuda.runtime.deviceSynchronize()
        return buf

    def reader(self, buf):
        def read(offset, dtype, count):
            nbytes = numpy.dtype(dtype).itemsize * count
            return buf[offset : offset + nbytes].get().view(dtype)

        return read

    def run(self, spec, functions, buf, timed):
        """Clears the reset regions, launches the kernels; returns milliseconds (events around
        the launches) when timed."""
        runtime = self.cupy.cuda.runtime
        for offset, nbytes in spec.zero:
            runtime.memsetAsync(buf.data.ptr + offset, 0, nbytes, self.stream.ptr)
        start = end = None
        if timed:
            start, end = self.cupy.cuda.Event(), self.cupy.cuda.Event()
            start.record(self.stream)
        # CuPy launches on the current stream, the one the events and memsets use.
        for kernel, grid, block, args in spec.launches:
            functions[kernel](grid, block, (buf, *args))
        if not timed:
            self.stream.synchronize()
            return None
        end.record(self.stream)
        end.synchronize()
        return self.cupy.cuda.get_elapsed_time(start, end)


def registers(functions):
    parts = []
    for kernel, f in functions.items():
        regs = getattr(f, "num_regs", None)
        parts.append(f"{kernel} {regs}" if regs is not None else kernel)
    return ", ".join(parts)


def bench_one(name, spec, device, toolchain, bundle, runs, warmup):
    """Returns a result row (a dict) for one kernel."""
    wave_ptx = bundle / "bench" / f"{name}.ptx"
    if not wave_ptx.exists():
        raise RuntimeError(f"{wave_ptx} is missing (run backends/gpu/make_bundle_bench.sh)")
    kernels = [k for k, _, _, _ in spec.launches]
    wave_module = toolchain.wave(wave_ptx, name)
    cuda_module = toolchain.cuda(SOURCES / f"{name}.cu", name)
    versions = {
        "WAVE": {k: wave_module.get_function(k) for k in dict.fromkeys(kernels)},
        "CUDA": {k: cuda_module.get_function(k) for k in dict.fromkeys(kernels)},
    }
    buffers = {v: device.buffer(spec) for v in versions}
    checks = {}
    for v, functions in versions.items():
        device.run(spec, functions, buffers[v], timed=False)
        checks[v] = spec.check(device.reader(buffers[v]))
    times = {v: [] for v in versions}
    for i in range(warmup + runs):
        for v, functions in versions.items():
            ms = device.run(spec, functions, buffers[v], timed=True)
            if i >= warmup:
                times[v].append(ms)
    for v in versions:
        ok, detail = spec.check(device.reader(buffers[v]))
        if not ok:
            checks[v] = (False, f"after the timed runs: {detail}")
    median = {v: statistics.median(t) for v, t in times.items()}
    return {
        "name": name,
        "size": spec.size,
        "wave_ms": median["WAVE"],
        "cuda_ms": median["CUDA"],
        "ratio": median["WAVE"] / median["CUDA"],
        "check": {v: c for v, c in checks.items()},
        "spread": {v: (min(t), max(t)) for v, t in times.items()},
        "work": {v: spec.work(median[v]) for v in versions},
        "registers": {v: registers(f) for v, f in versions.items()},
    }


def check_text(row):
    bad = [f"{v}: {d}" for v, (ok, d) in row["check"].items() if not ok]
    return "FAIL (" + "; ".join(bad) + ")" if bad else "ok"


def environment(cupy):
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode(errors="replace") if isinstance(props["name"], bytes) else props["name"]
    driver = cupy.cuda.runtime.driverGetVersion()
    info = {
        "GPU": f"{name} (compute capability {props['major']}.{props['minor']}, {props['multiProcessorCount']} SMs)",
        "CUDA driver API": f"{driver // 1000}.{driver % 1000 // 10}",
        "CuPy": cupy.__version__,
        "numpy": numpy.__version__,
    }
    try:
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if smi.returncode == 0 and smi.stdout.strip():
            info["driver"] = smi.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    return info, f"sm_{props['major']}{props['minor']}"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Time WAVE kernels (PTX backend) against their CUDA twins.")
    parser.add_argument("bundle", help="bundle directory with bench/<name>.ptx")
    parser.add_argument("out", help="output directory for bench.md")
    parser.add_argument(
        "--runs", type=int, default=30, help="timed runs per version (median; default 30, at least 20 for the record)"
    )
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    parser.add_argument("--only", choices=sorted(SPECS), action="append", help="only this kernel (repeatable)")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test (not for the record)")
    parser.add_argument("--toolchain", choices=("auto", "nvcc", "nvrtc"), default="auto")
    options = parser.parse_args(argv)
    if options.runs < 1 or options.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")

    import cupy

    bundle = Path(options.bundle).resolve()
    out_dir = Path(options.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    info, arch = environment(cupy)
    for key, value in info.items():
        log(f"{key}: {value}")
    names = options.only or list(SPECS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="wave-bench-") as tmp:
        toolchain = Toolchain(cupy, options.toolchain, arch, Path(tmp))
        log(f"toolchain: {toolchain.description}")
        log(f"timing: {options.warmup} warm-up runs, then the median of {options.runs} runs per version")
        device = Device(cupy)
        for name in names:
            make, full, quick = SPECS[name]
            started = time.monotonic()
            try:
                spec = make(quick if options.quick else full, numpy.random.default_rng(SEED))
                row = bench_one(name, spec, device, toolchain, bundle, options.runs, options.warmup)
            except Exception as e:
                row = {"name": name, "error": f"{type(e).__name__}: {e}".strip()}
                log(f"{name}: error: {row['error']}")
            else:
                log(
                    f"{name}: WAVE {row['wave_ms']:.3f} ms, CUDA {row['cuda_ms']:.3f} ms, "
                    f"ratio {row['ratio']:.2f}, check {check_text(row)} ({time.monotonic() - started:.0f} s)"
                )
            finally:
                cupy.get_default_memory_pool().free_all_blocks()
            rows.append(row)
    report = render(rows, info, toolchain.description, options)
    (out_dir / "bench.md").write_text(report)
    log("")
    log(report)
    return 0


def render(rows, info, toolchain, options):
    md = ["# WAVE (PTX backend) against CUDA C++ on the GPU", ""]
    for key, value in info.items():
        md.append(f"- {key}: {value}")
    md.append(f"- toolchain: {toolchain}")
    md.append(
        f"- timing: CUDA events around each version's launches; {options.warmup} warm-up runs, "
        f"then the median of {options.runs} runs, the two versions taking turns"
        + ("; --quick sizes (a smoke test, not for the record)" if options.quick else "")
    )
    md.append(f"- run: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    md += ["", "| kernel | size | WAVE ms | CUDA ms | WAVE/CUDA ratio | check |", "|---|---|---|---|---|---|"]
    for row in rows:
        if "error" in row:
            md.append(f"| {row['name']} | | | | | error: {row['error'].replace('|', '/')} |")
            continue
        md.append(
            f"| {row['name']} | {row['size']} | {row['wave_ms']:.3f} | {row['cuda_ms']:.3f} | "
            f"{row['ratio']:.2f} | {check_text(row).replace('|', '/')} |"
        )
    timed = [r for r in rows if "error" not in r]
    met = [r["name"] for r in timed if r["ratio"] <= TARGET_RATIO]
    missed = [f"{r['name']} ({r['ratio']:.2f})" for r in timed if r["ratio"] > TARGET_RATIO]
    md += [
        "",
        f"Target, WAVE within {TARGET_RATIO}x of CUDA: met by {len(met)} of {len(timed)}"
        + (f"; not met by {', '.join(missed)}" if missed else "")
        + ".",
    ]
    md += [
        "",
        "| kernel | version | min..max ms | throughput | registers per thread | check detail |",
        "|---|---|---|---|---|---|",
    ]
    for row in timed:
        for v in ("WAVE", "CUDA"):
            lo, hi = row["spread"][v]
            ok, detail = row["check"][v]
            md.append(
                f"| {row['name']} | {v} | {lo:.3f}..{hi:.3f} | {row['work'][v]} | {row['registers'][v]} | "
                f"{'ok' if ok else 'FAIL'}: {detail} |"
            )
    md.append("")
    return "\n".join(md)


if __name__ == "__main__":
    sys.exit(main())
