#!/usr/bin/env python3
"""Runs the WAVE conformance suite on an NVIDIA GPU through the PTX backend.

Usage:
    python3 backends/gpu/run_cases.py BUNDLE_DIR OUT_DIR [--timeout S] [--filter TEXT] [--dry-run]

BUNDLE_DIR holds `cases.json` and `ptx/<name>.ptx`, as written by `cargo xtask gpu-bundle`
(the format is described in backends/gpu/README.md). Every case whose status is "run" is
loaded with CuPy, launched with its dispatch and arguments on one flat device buffer, and the
buffer is compared with the case's expected memory. Writes OUT_DIR/results.json and
OUT_DIR/verification.md, prints every result that is not a pass and a summary, and exits 0
whatever the cases did: 1 only when no worker could be started (no CuPy, no GPU), 2 when the
bundle cannot be read or the usage is wrong.

A kernel that faults (illegal address, trap) poisons its CUDA context, and a kernel that hangs
never returns, so the cases run in a worker process (this script with --worker) that the
supervisor replaces after a sticky CUDA error, a crash or a timeout.

--dry-run skips CuPy and the launches: the worker compares each case's *initial* memory with
its expectations, which exercises the bundle parsing and the comparison on a machine with no
GPU (most cases then fail, as their kernels did not run).
"""

import argparse
import json
import math
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

RESULTS = ("pass", "pass-nan-payload", "fail", "error", "skipped")

ELEM_SIZES = {"u8": 1, "u16": 2, "u32": 4, "i32": 4, "u64": 8, "f16": 2, "f32": 4}
PARAM_TYPES = ("ptr", "u32", "i32", "f32")

# CUDA errors after which the context is unusable (every later call fails the same way).
STICKY_ERRORS = (
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_ECC_UNCORRECTABLE",
    "CUDA_ERROR_CONTEXT_IS_DESTROYED",
    "cudaErrorIllegalAddress",
    "cudaErrorIllegalInstruction",
    "cudaErrorMisalignedAddress",
    "cudaErrorInvalidAddressSpace",
    "cudaErrorInvalidPc",
    "cudaErrorLaunchFailure",
    "cudaErrorHardwareStackError",
    "cudaErrorAssert",
    "cudaErrorLaunchTimeout",
)

WORKER_START_TIMEOUT = 300.0


def log(text=""):
    print(text, flush=True)


class BundleError(Exception):
    """The bundle is malformed: the case cannot be run as described."""


# ---------------------------------------------------------------------------------------------
# Comparison (pure Python on bytes, shared by the worker and the tests)
# ---------------------------------------------------------------------------------------------


def f32_is_nan(bits):
    return (bits & 0x7F800000) == 0x7F800000 and (bits & 0x007FFFFF) != 0


def f16_is_nan(bits):
    return (bits & 0x7C00) == 0x7C00 and (bits & 0x03FF) != 0


def f64_is_nan(bits):
    return (bits & 0x7FF0000000000000) == 0x7FF0000000000000 and (bits & 0x000FFFFFFFFFFFFF) != 0


def ordered(bits, size):
    """Maps a float bit pattern to an integer so that adjacent floats are adjacent integers
    (sign-magnitude to two's complement; +0 and -0 both map to 0), as the Rust runner does."""
    sign = 1 << (size * 8 - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def halves_all_nan(want, got, width, is_nan):
    """Whether every `width`-bit lane where `want` and `got` differ is a NaN in both."""
    mask = (1 << width) - 1
    differ = False
    for shift in range(0, 64, width):
        w, g = (want >> shift) & mask, (got >> shift) & mask
        if w != g:
            differ = True
            if not (is_nan(w) and is_nan(g)):
                return False
    return differ


def nan_payload_only(elem, want, got):
    """Whether an integer element differs only because both values are NaNs of some float
    width that fits the element: the emulator canonicalises NaNs (0x7FC00000, 0x7E00) where
    the GPU keeps its own payload (0x7FFFFFFF, 0x7FFF); both are allowed by the spec."""
    if elem == "u16":
        return f16_is_nan(want) and f16_is_nan(got)
    if elem in ("u32", "i32"):
        if f32_is_nan(want) and f32_is_nan(got):
            return True
        return halves_all_nan(want, got, 16, f16_is_nan)
    if elem == "u64":
        if f64_is_nan(want) and f64_is_nan(got):
            return True
        return halves_all_nan(want, got, 32, f32_is_nan) or halves_all_nan(want, got, 16, f16_is_nan)
    return False


def show(elem, bits):
    size = ELEM_SIZES[elem]
    raw = bits.to_bytes(size, "little")
    if elem == "f32":
        return f"{struct.unpack('<f', raw)[0]!r} (0x{bits:08x})"
    if elem == "f16":
        return f"{struct.unpack('<e', raw)[0]!r} (0x{bits:04x})"
    if elem == "i32":
        return f"{int.from_bytes(raw, 'little', signed=True)} (0x{bits:08x})"
    return f"{bits} (0x{bits:0{size * 2}x})"


def compare_block(block, memory):
    """Compares one expectation block with device memory (bytes-like).

    Returns (result, detail): result is "pass", "pass-nan-payload" or "fail". Raises
    BundleError when the block itself is malformed."""
    try:
        offset = int(block["offset"])
        elem = block["elem"]
        want_bytes = bytes.fromhex(block["hex"])
        ulps = int(block.get("ulps", 0))
        nan = list(block.get("nan") or [])
    except (KeyError, TypeError, ValueError) as e:
        raise BundleError(f"malformed expect block: {e!r}") from e
    if elem not in ELEM_SIZES:
        raise BundleError(f"unknown element type {elem!r} in an expect block")
    size = ELEM_SIZES[elem]
    if len(want_bytes) % size:
        raise BundleError(f"expect block at {offset}: {len(want_bytes)} bytes is not a whole number of {elem}")
    if offset < 0 or offset + len(want_bytes) > len(memory):
        raise BundleError(
            f"expect block at {offset} ({len(want_bytes)} bytes) lies outside device memory ({len(memory)} bytes)"
        )
    got_bytes = bytes(memory[offset : offset + len(want_bytes)])
    if got_bytes == want_bytes and not any(nan):
        return "pass", ""
    payload_only = []
    for i in range(len(want_bytes) // size):
        at = offset + i * size
        want = int.from_bytes(want_bytes[i * size : (i + 1) * size], "little")
        got = int.from_bytes(got_bytes[i * size : (i + 1) * size], "little")
        if elem in ("f32", "f16"):
            is_nan = f32_is_nan if elem == "f32" else f16_is_nan
            if i < len(nan) and nan[i]:
                ok = is_nan(got)
            elif is_nan(want) and is_nan(got):
                # An expected NaN given as bits rather than flagged: any payload is allowed.
                ok = True
                if want != got:
                    payload_only.append((at, i, want, got))
            else:
                ok = not is_nan(got) and abs(ordered(want, size) - ordered(got, size)) <= ulps
        elif want == got:
            ok = True
        elif nan_payload_only(elem, want, got):
            ok = True
            payload_only.append((at, i, want, got))
        else:
            ok = False
        if not ok:
            detail = (
                f"first difference at offset {at} (0x{at:x}, {elem}[{i}] of the block at {offset}): "
                f"expected {show(elem, want)}, got {show(elem, got)}"
            )
            if ulps and elem in ("f32", "f16"):
                detail += f" (allowed {ulps} ULP)"
            return "fail", detail
    if payload_only:
        at, i, want, got = payload_only[0]
        return "pass-nan-payload", (
            f"NaN payload differs (implementation-defined) in {len(payload_only)} element(s), first at "
            f"offset {at} ({elem}[{i}] of the block at {offset}): expected {show(elem, want)}, got {show(elem, got)}"
        )
    return "pass", ""


def compare_all(case, memory):
    """Compares every expect block; the first failure wins, then a payload-only difference."""
    outcome = ("pass", "")
    for block in case.get("expect") or []:
        result, detail = compare_block(block, memory)
        if result == "fail":
            return result, detail
        if result == "pass-nan-payload" and outcome[0] == "pass":
            outcome = (result, detail)
    return outcome


def initial_memory(case):
    """The case's device memory before the run, as a bytearray."""
    try:
        size = int(case["device_memory"])
    except (KeyError, TypeError, ValueError) as e:
        raise BundleError(f"bad device_memory: {e!r}") from e
    memory = bytearray(size)
    for block in case.get("memory") or []:
        try:
            offset = int(block["offset"])
            data = bytes.fromhex(block["hex"])
        except (KeyError, TypeError, ValueError) as e:
            raise BundleError(f"malformed memory block: {e!r}") from e
        if offset < 0 or offset + len(data) > size:
            raise BundleError(f"memory block at {offset} ({len(data)} bytes) lies outside device memory ({size} bytes)")
        memory[offset : offset + len(data)] = data
    return memory


def param_values(case):
    """The launch arguments after the memory pointer: numpy scalars of each parameter's type,
    built from its 32-bit value (bits reinterpreted for i32 and f32)."""
    import numpy

    values = []
    for p in case.get("params") or []:
        ty = p.get("type")
        if ty not in PARAM_TYPES:
            raise BundleError(f"parameter {p.get('name')!r} has unknown type {ty!r}")
        try:
            bits = numpy.array([int(p["value"]) & 0xFFFFFFFF], dtype=numpy.uint32)
        except (KeyError, TypeError, ValueError) as e:
            raise BundleError(f"parameter {p.get('name')!r}: bad value: {e!r}") from e
        dtype = {"ptr": numpy.uint32, "u32": numpy.uint32, "i32": numpy.int32, "f32": numpy.float32}[ty]
        values.append(bits.view(dtype)[0])
    return values


def dims(case, key):
    value = case.get(key)
    if not isinstance(value, list) or len(value) != 3 or not all(isinstance(v, int) and v >= 1 for v in value):
        raise BundleError(f"bad {key}: {value!r} (three positive integers expected)")
    return tuple(value)


def ptx_entries(text):
    """The names of the `.entry` functions of a PTX module."""
    names = []
    for line in text.splitlines():
        parts = line.split()
        if ".entry" in parts:
            i = parts.index(".entry")
            if i + 1 < len(parts):
                names.append(parts[i + 1].split("(")[0])
    return names


def entry_name(kernel, ptx_text):
    """The PTX entry that implements WAVE kernel `kernel` (the backend may append `_` to a
    name that is a PTX keyword or looks like a generated one)."""
    entries = ptx_entries(ptx_text)
    for candidate in (kernel, f"{kernel}_"):
        if candidate in entries:
            return candidate
    if len(entries) == 1:
        return entries[0]
    raise BundleError(f"kernel {kernel!r} is not among the PTX entries {entries}")


# ---------------------------------------------------------------------------------------------
# Worker: runs cases one at a time, reading a case per line on stdin, answering a line on stdout
# ---------------------------------------------------------------------------------------------


def sticky_error(text):
    """The name of the sticky CUDA error that `text` reports, or None."""
    for name in STICKY_ERRORS:
        if name in text:
            return name
    return None


def is_cuda_error(exc):
    return "CUDA" in type(exc).__name__ or "cuda" in type(exc).__module__


class GpuRunner:
    def __init__(self):
        import cupy
        import numpy

        self.cupy = cupy
        self.numpy = numpy
        cupy.cuda.Device(0).use()
        # Recursive kernels (CAP_RECURSION) keep their functions as PTX functions, whose
        # frames live on the per-thread stack: 64 nested calls need more than the default 1 KiB.
        cupy.cuda.runtime.deviceSetLimit(0x00, 64 * 1024)  # cudaLimitStackSize
        # Creates the context now, so that the first case's time does not include it.
        if not self.healthy():
            raise RuntimeError("a copy to the GPU and back does not round-trip")

    def environment(self):
        cupy = self.cupy
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"]
        if isinstance(name, bytes):
            name = name.decode(errors="replace")
        driver = cupy.cuda.runtime.driverGetVersion()
        runtime = cupy.cuda.runtime.runtimeGetVersion()
        info = {
            "gpu": name,
            "compute_capability": f"{props['major']}.{props['minor']}",
            "cuda_driver_api": f"{driver // 1000}.{driver % 1000 // 10}",
            "cuda_runtime": f"{runtime // 1000}.{runtime % 1000 // 10}",
            "cupy": cupy.__version__,
            "numpy": self.numpy.__version__,
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
        return info

    def healthy(self):
        """Whether the context works (after an error: whether it is still usable). Copies
        only, so that no CuPy kernel, and so no NVRTC, is needed."""
        numpy = self.numpy
        try:
            data = numpy.arange(256, dtype=numpy.uint8)
            ok = bool((self.cupy.asarray(data).get() == data).all())
            self.cupy.cuda.runtime.deviceSynchronize()
            return ok
        except Exception:
            return False

    def run(self, case, bundle):
        """Runs one case: returns (memory after the run, None), or (None, error text) when the
        kernel faulted while running. Errors before the kernel runs are raised."""
        cupy = self.cupy
        memory = initial_memory(case)
        args = param_values(case)
        grid, block = dims(case, "grid"), dims(case, "block")
        ptx_path = bundle / case["ptx"]
        try:
            ptx_text = ptx_path.read_text()
        except OSError as e:
            raise BundleError(f"cannot read {ptx_path}: {e}") from e
        kernel = entry_name(case.get("kernel", ""), ptx_text)
        module = cupy.RawModule(path=str(ptx_path))
        function = module.get_function(kernel)
        if memory:
            device = cupy.asarray(self.numpy.frombuffer(bytes(memory), dtype=self.numpy.uint8))
        else:
            device = cupy.zeros(1, dtype=cupy.uint8)
        cupy.cuda.runtime.deviceSynchronize()
        # A launch that is refused (bad dimensions, bad arguments) raises here, before the
        # kernel runs; a fault while it runs shows at the synchronisation.
        function(grid, block, (device, *args))
        try:
            cupy.cuda.runtime.deviceSynchronize()
        except Exception as e:
            if is_cuda_error(e):
                return None, f"{type(e).__name__}: {e}"
            raise
        return bytearray(device[: len(memory)].get().tobytes()), None


def run_case_in_worker(runner, case, bundle):
    """Returns the reply for one case: {result, detail, restart}."""
    expect_trap = bool(case.get("expect_trap"))
    try:
        if runner is None:
            memory, fault = initial_memory(case), None
            param_values(case)
            dims(case, "grid")
            dims(case, "block")
        else:
            memory, fault = runner.run(case, bundle)
    except BundleError as e:
        return {"result": "error", "detail": f"bad bundle entry: {e}", "restart": False}
    except Exception as e:
        text = f"{type(e).__name__}: {e}".strip()
        restart = runner is not None and (sticky_error(text) is not None or not runner.healthy())
        return {"result": "error", "detail": text, "restart": restart}
    if fault is not None:
        restart = sticky_error(fault) is not None or not runner.healthy()
        if expect_trap:
            return {"result": "pass", "detail": f"trapped as expected ({fault})", "restart": restart}
        return {"result": "error", "detail": f"kernel failed: {fault}", "restart": restart}
    if expect_trap and runner is not None:
        return {"result": "fail", "detail": "the emulator traps here, but the kernel completed", "restart": False}
    try:
        result, detail = compare_all(case, memory)
    except BundleError as e:
        return {"result": "error", "detail": f"bad bundle entry: {e}", "restart": False}
    return {"result": result, "detail": detail, "restart": False}


def worker_main(bundle, dry_run):
    # The protocol owns the real stdout; anything else that prints (libraries, warnings) goes
    # to stderr so that it cannot corrupt a reply.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        runner = None if dry_run else GpuRunner()
        info = {"dry_run": True} if runner is None else runner.environment()
    except Exception as e:
        proto.write(json.dumps({"fatal": f"{type(e).__name__}: {e}"}) + "\n")
        return 1
    proto.write(json.dumps({"hello": info}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        reply = run_case_in_worker(runner, case, bundle)
        proto.write(json.dumps(reply) + "\n")
        if reply["restart"]:
            return 0
    return 0


# ---------------------------------------------------------------------------------------------
# Supervisor
# ---------------------------------------------------------------------------------------------


class WorkerDied(Exception):
    pass


class Worker:
    """A worker process and a thread that turns its stdout lines into queue items."""

    def __init__(self, command, log_file):
        self.log_file = log_file
        log_file.flush()
        self.log_start = log_file.tell()  # where this worker's standard error begins
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
            bufsize=1,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        with self.proc.stdout:
            for line in self.proc.stdout:
                self.lines.put(line)
        self.lines.put(None)

    def receive(self, timeout):
        """The next reply, or None on timeout; raises WorkerDied when the worker exits."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                code = self.proc.wait()
                if code < 0:
                    try:
                        name = f" ({signal.Signals(-code).name})"
                    except ValueError:
                        name = ""
                    raise WorkerDied(f"worker was killed by signal {-code}{name}")
                raise WorkerDied(f"worker exited with status {code}")
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                # Not a reply: something printed on the protocol stream; keep it in the log.
                self.log_file.write(f"[supervisor] unexpected worker output: {line}")
                self.log_file.flush()

    def send(self, message):
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise WorkerDied(f"worker is gone ({e})") from e

    def close(self, kill=False):
        """Ends the worker: closing its input lets it finish; `kill` (or a worker that does
        not finish within 30 s) kills it. Its stdout is closed by the reader thread."""
        if kill and self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                pass


def log_tail(path, start, lines=5):
    """The last lines that a worker wrote to the log, from byte `start` on."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:] if line.strip())


class Supervisor:
    def __init__(self, command, log_path, timeout):
        self.command = command
        self.log_path = log_path
        self.log_file = open(log_path, "a")
        self.timeout = timeout
        self.worker = None
        self.environment = None

    def start(self):
        self.log_file.write(f"[supervisor] starting a worker at {time.strftime('%H:%M:%S')}\n")
        self.log_file.flush()
        worker = Worker(self.command, self.log_file)
        try:
            hello = worker.receive(WORKER_START_TIMEOUT)
        except WorkerDied as e:
            worker.close(kill=True)
            raise RuntimeError(f"the worker did not start ({e}): {log_tail(self.log_path, worker.log_start)}") from e
        if hello is None:
            worker.close(kill=True)
            raise RuntimeError(f"the worker did not start within {WORKER_START_TIMEOUT:.0f} s")
        if "fatal" in hello:
            worker.close(kill=True)
            raise RuntimeError(f"the worker could not start: {hello['fatal']}")
        if self.environment is None:
            self.environment = hello.get("hello", {})
        self.worker = worker

    def run(self, case):
        """Runs one case in a worker; returns (result, detail)."""
        if self.worker is None:
            self.start()
        worker = self.worker
        try:
            worker.send(case)
            reply = worker.receive(self.timeout)
        except WorkerDied as e:
            self.worker = None
            worker.close(kill=True)
            tail = log_tail(self.log_path, worker.log_start)
            return "error", f"{e} while running the case" + (f": {tail}" if tail else "")
        if reply is None:
            self.worker = None
            worker.close(kill=True)
            return "error", f"timed out after {self.timeout:g} s (worker killed)"
        if reply.get("restart"):
            self.worker = None
            worker.close()
        return reply.get("result", "error"), reply.get("detail", "")

    def close(self):
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        self.log_file.close()


def md_cell(text):
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def summary_lines(results):
    counts = {r: 0 for r in RESULTS}
    for r in results:
        counts[r["result"]] += 1
    passed = counts["pass"] + counts["pass-nan-payload"]
    failed = counts["fail"] + counts["error"]
    line = f"{passed} passed, {failed} failed"
    kinds = ", ".join(f"{k}: {counts[k]}" for k in RESULTS)
    return line, kinds


def write_outputs(out_dir, results, environment, options):
    out_dir.mkdir(parents=True, exist_ok=True)
    ordered_results = sorted(results, key=lambda r: r["path"])
    with open(out_dir / "results.json", "w") as f:
        json.dump(ordered_results, f, indent=1)
        f.write("\n")
    line, kinds = summary_lines(ordered_results)
    md = ["# WAVE conformance cases on the GPU (PTX backend)", ""]
    if environment:
        for key, value in environment.items():
            md.append(f"- {key}: {value}")
    md.append(f"- run: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, timeout {options.timeout:g} s per case")
    md += ["", "| case | result | detail |", "|---|---|---|"]
    for r in ordered_results:
        md.append(f"| `{md_cell(r['path'])}` | {r['result']} | {md_cell(r['detail'])} |")
    md += ["", line, "", kinds, ""]
    (out_dir / "verification.md").write_text("\n".join(md))
    return line, kinds


def load_cases(bundle):
    path = bundle / "cases.json"
    try:
        cases = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        print(f"error: cannot read {path}: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    if not isinstance(cases, list) or not all(isinstance(c, dict) for c in cases):
        print(f"error: {path} is not a JSON list of objects", file=sys.stderr)
        raise SystemExit(2)
    return cases


def supervise(options):
    bundle = Path(options.bundle).resolve()
    out_dir = Path(options.out).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cases = load_cases(bundle)
    if options.filter:
        cases = [
            c for c in cases if options.filter in str(c.get("path", "")) or options.filter in str(c.get("name", ""))
        ]
    command = [sys.executable, "-u", str(Path(__file__).resolve()), "--worker", str(bundle)]
    if options.dry_run:
        command.append("--dry-run")
    supervisor = Supervisor(command, out_dir / "worker.log", options.timeout)
    results = []
    todo = sum(1 for c in cases if c.get("status") == "run")
    log(
        f"{len(cases)} cases in {bundle / 'cases.json'}, {todo} to run"
        + (" (dry run: no launches)" if options.dry_run else "")
    )
    started = time.monotonic()
    done = 0
    broken = None  # why no worker can run cases any more
    if todo:
        try:
            supervisor.start()
            for key, value in supervisor.environment.items():
                log(f"{key}: {value}")
        except RuntimeError as e:
            broken = str(e)
            log(f"error: {broken}")
    try:
        for case in cases:
            name = str(case.get("name", "?"))
            path = str(case.get("path", name))
            status = case.get("status")
            if status == "skip":
                result, detail = "skipped", str(case.get("reason", ""))
            elif status != "run":
                result, detail = "error", f"bad bundle entry: unknown status {status!r}"
            elif broken is not None:
                result, detail = "error", f"not run: {broken}"
            else:
                done += 1
                try:
                    result, detail = supervisor.run(case)
                except RuntimeError as e:
                    broken = str(e)
                    log(f"error: {broken}; the remaining cases are not run")
                    result, detail = "error", f"not run: {broken}"
                if result not in RESULTS:
                    result, detail = "error", f"worker answered {result!r}: {detail}"
                if result in ("fail", "error") and broken is None:
                    log(f"[{done}/{todo}] {result}: {path}: {detail}")
            results.append({"name": name, "path": path, "result": result, "detail": detail})
    finally:
        supervisor.close()
    line, kinds = write_outputs(out_dir, results, supervisor.environment, options)
    log("")
    log("not passed:")
    for r in sorted(results, key=lambda r: r["path"]):
        if r["result"] != "pass":
            log(f"  {r['result']}: {r['path']}: {r['detail']}")
    log("")
    elapsed = time.monotonic() - started
    log(f"{len(results)} cases in {elapsed:.1f} s; wrote {out_dir / 'results.json'} and {out_dir / 'verification.md'}")
    log(kinds)
    log(line)
    return 1 if broken is not None else 0


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the WAVE conformance bundle on an NVIDIA GPU with CuPy.")
    parser.add_argument("bundle", help="bundle directory with cases.json and ptx/")
    parser.add_argument("out", nargs="?", help="output directory for results.json and verification.md")
    parser.add_argument(
        "--timeout", type=float, default=20.0, help="seconds per case before its worker is killed (default 20)"
    )
    parser.add_argument("--filter", help="only cases whose path or name contains this text")
    parser.add_argument(
        "--dry-run", action="store_true", help="no GPU: compare each case's initial memory with its expectations"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.worker:
        return worker_main(Path(options.bundle), options.dry_run)
    if options.out is None:
        parser.error("OUT_DIR is required")
    if not math.isfinite(options.timeout) or options.timeout <= 0:
        parser.error("--timeout must be a positive number of seconds")
    return supervise(options)


if __name__ == "__main__":
    sys.exit(main())
