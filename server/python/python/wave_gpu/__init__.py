"""WAVE kernels called from Python: write a kernel as a decorated function, call it on numpy
arrays (or CuPy / PyTorch arrays on the GPU), and it runs on the WAVE emulator or an NVIDIA
GPU.

    import numpy as np
    import wave_gpu as wave
    from wave_gpu import f32, u32

    @wave.kernel(workgroup=64)
    def saxpy(x: f32[:], y: f32[:], a: f32, n: u32):
        i = wave.global_id()
        if i < n:
            y[i] = a * x[i] + y[i]

    x = np.arange(1000, dtype=np.float32)
    y = np.ones(1000, dtype=np.float32)
    saxpy[16](x, y, 2.0, len(x))           # 16 workgroups of the declared 64 threads
    saxpy(x, y, 2.0, len(x))               # one thread per element of the largest array
    saxpy(x, y, 2.0, len(x), device="cuda")

The kernel language is described in the toolchain's docs/kernels.md; inside a kernel,
`wave_gpu.thread_id()` and the other functions below are the GPU's, and calling them from
ordinary Python raises an error.
"""

from __future__ import annotations

import builtins
import inspect
import os
import textwrap
import threading
import warnings as _warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._native import CompileError, DeviceError, KernelTrap, LaunchError, WaveError

__version__ = _native.__version__

__all__ = [
    "kernel", "Kernel", "Program", "array", "zeros", "ones", "empty", "Array",
    "set_device", "get_device", "devices", "options",
    "WaveError", "WaveWarning", "CompileError", "KernelTrap", "LaunchError", "DeviceError",
    "f16", "f32", "f64", "i32", "u32", "u8", "u16", "bool_",
]

# ---------------------------------------------------------------------------------------------
# Types: `f32` in `x: f32` and `f32[:]` in `a: f32[:]`, valid Python at import time.


class WaveWarning(UserWarning):
    """A warning of the WAVE compiler or assembler (the rendered diagnostic)."""


def _compiled(native: "_native.Program") -> "_native.Program":
    """`native`, after its compile's warnings are given to Python's `warnings`."""
    if native.warnings:
        _warnings.warn(native.warnings, WaveWarning, stacklevel=3)
    return native


class ScalarType:
    """A scalar type of the kernel language (`f32`, `u32`, ...). `T[:]` is a buffer of `T`;
    `T(x)` converts (in a kernel; in Python it returns the numpy scalar)."""

    def __init__(self, name: str, dtype: Any) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)

    def __getitem__(self, item: Any) -> "BufferType":
        return BufferType(self)

    def __call__(self, value: Any) -> Any:
        return self.dtype.type(value)

    def __repr__(self) -> str:
        return f"wave_gpu.{self.name}"


class BufferType:
    """`T[:]`: a buffer of `T` (a one-dimensional array in device memory)."""

    def __init__(self, elem: ScalarType) -> None:
        self.elem = elem

    def __repr__(self) -> str:
        return f"wave_gpu.{self.elem.name}[:]"


f16 = ScalarType("f16", np.float16)
f32 = ScalarType("f32", np.float32)
f64 = ScalarType("f64", np.float64)
i32 = ScalarType("i32", np.int32)
u32 = ScalarType("u32", np.uint32)
u8 = ScalarType("u8", np.uint8)
u16 = ScalarType("u16", np.uint16)
bool_ = ScalarType("bool", np.bool_)

_DTYPES: Dict[str, np.dtype] = {
    t.name: t.dtype for t in (f16, f32, f64, i32, u32, u8, u16)
}
_DTYPES["bool"] = np.dtype(np.uint32)


def _dtype_of(dtype: Any) -> np.dtype:
    if isinstance(dtype, ScalarType):
        return _DTYPES[dtype.name] if dtype.name != "bool" else np.dtype(np.uint32)
    if isinstance(dtype, str) and dtype in _DTYPES:
        return _DTYPES[dtype]
    return np.dtype(dtype)


# ---------------------------------------------------------------------------------------------
# Arrays: numpy arrays with the reference SDK's `to_list()`.


class Array(np.ndarray):
    """A numpy array (every numpy operation works on it) with `to_list()`."""

    def to_list(self) -> list:
        """The elements as a Python list."""
        return self.tolist()


def array(data: Any, dtype: Any = "f32") -> Array:
    """An array of `data` (a sequence or an array) with elements of `dtype` (default f32)."""
    return np.array(data, dtype=_dtype_of(dtype)).view(Array)


def zeros(n: Union[int, Sequence[int]], dtype: Any = "f32") -> Array:
    """An array of `n` zeros."""
    return np.zeros(n, dtype=_dtype_of(dtype)).view(Array)


def ones(n: Union[int, Sequence[int]], dtype: Any = "f32") -> Array:
    """An array of `n` ones."""
    return np.ones(n, dtype=_dtype_of(dtype)).view(Array)


def empty(n: Union[int, Sequence[int]], dtype: Any = "f32") -> Array:
    """An array of `n` uninitialised elements."""
    return np.empty(n, dtype=_dtype_of(dtype)).view(Array)


# ---------------------------------------------------------------------------------------------
# Intrinsics: their names, so that kernel files import and editors complete them. They mean
# something only inside a kernel.


def _inside_only(name: str) -> Any:
    raise RuntimeError(
        f"wave_gpu.{name}() runs only inside a kernel: decorate the function with "
        "@wave_gpu.kernel and call the kernel"
    )


def thread_id(axis: int = 0) -> int:  # noqa: A001
    """The thread's index within its workgroup along `axis` (0, 1 or 2). (Inside a kernel.)"""
    return _inside_only("thread_id")


def workgroup_id(axis: int = 0) -> int:  # noqa: A001
    """The workgroup's index in the grid along `axis`. (Inside a kernel.)"""
    return _inside_only("workgroup_id")


def workgroup_size(axis: int = 0) -> int:  # noqa: A001
    """Threads per workgroup along `axis`. (Inside a kernel.)"""
    return _inside_only("workgroup_size")


def grid_size(axis: int = 0) -> int:  # noqa: A001
    """Workgroups in the grid along `axis`. (Inside a kernel.)"""
    return _inside_only("grid_size")


def global_id(axis: int = 0) -> int:  # noqa: A001
    """`workgroup_id * workgroup_size + thread_id` along `axis`: an element index. (Inside a kernel.)"""
    return _inside_only("global_id")


def lane_id() -> int:  # noqa: A001
    """The lane within the wave. (Inside a kernel.)"""
    return _inside_only("lane_id")


def wave_id() -> int:  # noqa: A001
    """The wave within the workgroup. (Inside a kernel.)"""
    return _inside_only("wave_id")


def wave_width() -> int:  # noqa: A001
    """Lanes per wave (W). (Inside a kernel.)"""
    return _inside_only("wave_width")


def barrier() -> None:  # noqa: A001
    """Waits until every thread of the workgroup gets here. (Inside a kernel.)"""
    return _inside_only("barrier")


def fence() -> None:  # noqa: A001
    """Orders this thread's memory accesses. (Inside a kernel.)"""
    return _inside_only("fence")


def local_array(dtype: ScalarType, n: int) -> Any:  # noqa: A001
    """`n` elements of `dtype` in Local Memory, shared by the workgroup. (Inside a kernel.)"""
    return _inside_only("local_array")


def private_array(dtype: ScalarType, n: int) -> Any:  # noqa: A001
    """`n` elements of `dtype` of each thread's own. (Inside a kernel.)"""
    return _inside_only("private_array")


def atomic_add(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomically adds `v` to `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_add")


def atomic_sub(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomically subtracts `v` from `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_sub")


def atomic_min(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomic `min` of `v` into `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_min")


def atomic_max(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomic `max` of `v` into `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_max")


def atomic_and(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomic `and` of `v` into `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_and")


def atomic_or(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomic `or` of `v` into `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_or")


def atomic_xor(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomic `xor` of `v` into `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_xor")


def atomic_exchange(buf: Any, i: int, v: Any) -> Any:  # noqa: A001
    """Atomic `exchange` of `v` into `buf[i]`; returns the old value. (Inside a kernel.)"""
    return _inside_only("atomic_exchange")


def shuffle(v: Any, lane: int) -> Any:  # noqa: A001
    """`v` of lane `lane` of the wave. (Inside a kernel.)"""
    return _inside_only("shuffle")


def shuffle_up(v: Any, n: int) -> Any:  # noqa: A001
    """`v` of the lane `n` below. (Inside a kernel.)"""
    return _inside_only("shuffle_up")


def shuffle_down(v: Any, n: int) -> Any:  # noqa: A001
    """`v` of the lane `n` above. (Inside a kernel.)"""
    return _inside_only("shuffle_down")


def shuffle_xor(v: Any, mask: int) -> Any:  # noqa: A001
    """`v` of lane `lane_id ^ mask`. (Inside a kernel.)"""
    return _inside_only("shuffle_xor")


def broadcast(v: Any, lane: int) -> Any:  # noqa: A001
    """`v` of lane `lane`, to every lane. (Inside a kernel.)"""
    return _inside_only("broadcast")


def ballot(c: bool) -> int:  # noqa: A001
    """A bit per lane where `c` holds. (Inside a kernel.)"""
    return _inside_only("ballot")


def any(c: bool) -> bool:  # noqa: A001
    """Whether `c` holds on some lane of the wave. (Inside a kernel.)"""
    return _inside_only("any")


def all(c: bool) -> bool:  # noqa: A001
    """Whether `c` holds on every lane of the wave. (Inside a kernel.)"""
    return _inside_only("all")


def reduce_add(v: int) -> int:  # noqa: A001
    """The sum of `v` over the wave. (Inside a kernel.)"""
    return _inside_only("reduce_add")


def reduce_min(v: int) -> int:  # noqa: A001
    """The least `v` of the wave. (Inside a kernel.)"""
    return _inside_only("reduce_min")


def reduce_max(v: int) -> int:  # noqa: A001
    """The greatest `v` of the wave. (Inside a kernel.)"""
    return _inside_only("reduce_max")


def prefix_sum(v: int) -> int:  # noqa: A001
    """The sum of `v` over the lanes below this one. (Inside a kernel.)"""
    return _inside_only("prefix_sum")


def sqrt(x: float) -> float:  # noqa: A001
    """Square root. (Inside a kernel.)"""
    return _inside_only("sqrt")


def rsqrt(x: float) -> float:  # noqa: A001
    """1 / sqrt(x). (Inside a kernel.)"""
    return _inside_only("rsqrt")


def floor(x: float) -> float:  # noqa: A001
    """Rounds down. (Inside a kernel.)"""
    return _inside_only("floor")


def ceil(x: float) -> float:  # noqa: A001
    """Rounds up. (Inside a kernel.)"""
    return _inside_only("ceil")


def sin(x: float) -> float:  # noqa: A001
    """Sine. (Inside a kernel.)"""
    return _inside_only("sin")


def cos(x: float) -> float:  # noqa: A001
    """Cosine. (Inside a kernel.)"""
    return _inside_only("cos")


def exp2(x: float) -> float:  # noqa: A001
    """2 to the power x. (Inside a kernel.)"""
    return _inside_only("exp2")


def log2(x: float) -> float:  # noqa: A001
    """Base-2 logarithm. (Inside a kernel.)"""
    return _inside_only("log2")


def fma(a: float, b: float, c: float) -> float:  # noqa: A001
    """a * b + c, rounded once. (Inside a kernel.)"""
    return _inside_only("fma")


def min(a: Any, b: Any) -> Any:  # noqa: A001
    """The smaller of `a` and `b`. (Inside a kernel.)"""
    return _inside_only("min")


def max(a: Any, b: Any) -> Any:  # noqa: A001
    """The larger of `a` and `b`. (Inside a kernel.)"""
    return _inside_only("max")


_INTRINSICS = ['all', 'any', 'atomic_add', 'atomic_and', 'atomic_exchange', 'atomic_max', 'atomic_min', 'atomic_or', 'atomic_sub', 'atomic_xor', 'ballot', 'barrier', 'broadcast', 'ceil', 'cos', 'exp2', 'fence', 'floor', 'fma', 'global_id', 'grid_size', 'lane_id', 'local_array', 'log2', 'max', 'min', 'prefix_sum', 'private_array', 'reduce_add', 'reduce_max', 'reduce_min', 'rsqrt', 'shuffle', 'shuffle_down', 'shuffle_up', 'shuffle_xor', 'sin', 'sqrt', 'thread_id', 'wave_id', 'wave_width', 'workgroup_id', 'workgroup_size']
__all__ += _INTRINSICS

# ---------------------------------------------------------------------------------------------
# Devices.

# Each device opened, by spec, with whether it is a GPU.
_devices: Dict[str, Tuple["_native.Device", bool]] = {}
_devices_lock = threading.Lock()
_default = threading.local()
_global_default = [os.environ.get("WAVE_DEVICE", "emulator")]


def _device(spec: Optional[str]) -> Tuple["_native.Device", bool]:
    spec = spec or getattr(_default, "spec", None) or _global_default[0]
    if spec == "gpu":
        spec = "cuda"
    if spec == "cuda":
        spec = "cuda:0"
    d = _devices.get(spec)
    if d is None:
        with _devices_lock:
            d = _devices.get(spec)
            if d is None:
                native = _native.Device(spec)
                d = (native, native.spec != "emulator")
                _devices[spec] = d
    return d


def set_device(spec: str) -> None:
    """Makes `spec` (`"emulator"`, `"cuda"`, `"cuda:N"`) the device of every launch that names
    none. Opens it now, so a missing GPU is a `DeviceError` here."""
    _device(spec)
    _global_default[0] = spec


def get_device() -> str:
    """The device launches use when they name none."""
    return getattr(_default, "spec", None) or _global_default[0]


def devices() -> List[str]:
    """Every device: `"emulator"`, then `"cuda:N"` for each CUDA GPU the driver reports."""
    gpus, _why = _native.cuda_devices()
    return ["emulator"] + [spec for spec, _name in gpus]


def describe_devices() -> List[Tuple[str, str]]:
    """`(spec, description)` for each device, and for a missing GPU, why."""
    gpus, why = _native.cuda_devices()
    out = [("emulator", "the WAVE emulator")] + [(s, n) for s, n in gpus]
    if why:
        out.append(("cuda", f"unavailable: {why}"))
    return out


class options:
    """Defaults for every launch: `options.max_steps` (the emulator's instruction budget),
    `options.timeout` (seconds a GPU kernel may run), `options.opt` (-O level)."""

    max_steps: int = 100_000_000
    timeout: float = 60.0
    opt: int = 2


# ---------------------------------------------------------------------------------------------
# Programs and kernels.


class Program:
    """A compiled kernel file: `Program.compile(text, "python")` or `Program.load(path)`;
    `program["name"]` is one of its kernels, callable like a decorated kernel."""

    def __init__(self, native: "_native.Program") -> None:
        self._native = native
        self._kernels = {k[0]: k for k in native.kernels}

    @staticmethod
    def compile(text: str, language: str = "python", file: str = "<string>", opt: int = 2,
                max_registers: int = 64) -> "Program":
        """Compiles a kernel file's text (`python`, `rust`, `cpp`, `typescript`, or `wave`
        assembly). Raises `CompileError`."""
        return Program(_compiled(_native.Program.compile(text, language, file, opt,
                                                         max_registers)))

    @staticmethod
    def load(path: Union[str, "os.PathLike[str]"], opt: int = 2,
             max_registers: int = 64) -> "Program":
        """Compiles (or loads) a file: `.py`, `.rs`, `.cpp`, `.ts`, `.wave` or `.wbin`."""
        return Program(_compiled(_native.Program.load(os.fspath(path), opt, max_registers)))

    @property
    def kernels(self) -> List[str]:
        """The names of its kernels."""
        return list(self._kernels)

    def __getitem__(self, name: str) -> "Kernel":
        if name not in self._kernels:
            raise KeyError(f"{self._native.file} has no kernel `{name}` "
                           f"(it has {', '.join(self._kernels)})")
        return Kernel._of_program(self, name)


_DIM = Union[int, Sequence[int]]


def _dim3(v: _DIM, what: str) -> Tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        t = (int(v), 1, 1)
    else:
        t = tuple(int(x) for x in v)
        if not 1 <= len(t) <= 3:
            raise ValueError(f"{what} has 1 to 3 dimensions, got {v!r}")
        t = t + (1,) * (3 - len(t))
    if builtins.min(t) < 1 or builtins.max(t) > 0xFFFFFFFF:
        raise ValueError(f"{what} dimensions are between 1 and 2**32 - 1, got {v!r}")
    return t  # type: ignore[return-value]


_SCALAR_TAG = {"u32": "u32", "i32": "i32", "f32": "f32", "bool": "bool"}


def _convert_scalar(kernel: str, pname: str, elem: str, v: Any) -> Tuple[str, Any]:
    if isinstance(v, (bool, np.bool_)):
        if elem == "bool":
            return ("bool", bool(v))
    elif isinstance(v, (int, np.integer)):
        v = int(v)
        if elem == "u32":
            if 0 <= v <= 0xFFFFFFFF:
                return ("u32", v)
            raise OverflowError(f"{kernel}(): `{pname}: u32` takes 0 to 2**32 - 1, got {v}")
        if elem == "i32":
            if -(2**31) <= v < 2**31:
                return ("i32", v)
            raise OverflowError(f"{kernel}(): `{pname}: i32` takes -2**31 to 2**31 - 1, got {v}")
        if elem == "f32":
            return ("f32", float(v))
    elif isinstance(v, (float, np.floating)):
        if elem == "f32":
            return ("f32", float(v))
    raise TypeError(
        f"{kernel}(): parameter `{pname}: {elem}` takes a {elem} value, got {type(v).__name__}"
    )


class _Launcher:
    """`kernel[grid]` or `kernel[grid, workgroup]`: a kernel with its launch shape."""

    __slots__ = ("_kernel", "_grid", "_workgroup")

    def __init__(self, kernel: "Kernel", grid: Tuple[int, int, int],
                 workgroup: Optional[Tuple[int, int, int]]) -> None:
        self._kernel = kernel
        self._grid = grid
        self._workgroup = workgroup

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if "grid" in kwargs or "workgroup" in kwargs:
            raise TypeError("the launch shape is given in brackets: kernel[grid, workgroup](...)")
        return self._kernel(*args, grid=self._grid, workgroup=self._workgroup, **kwargs)


class Kernel:
    """A kernel: call it with its arguments (`k(a, b, out, n)`), or give the launch shape first
    (`k[grid](...)`, `k[grid, workgroup](...)`). Keywords of a call: `grid`, `workgroup`,
    `device` (`"emulator"`, `"cuda"`, `"cuda:N"`), `max_steps` (the emulator's instruction
    budget), `timeout` (seconds on a GPU), `opt` (-O level)."""

    def __init__(self, fn: Optional[Callable[..., Any]] = None) -> None:
        self._fn = fn
        self._program: Optional[Program] = None
        self._program_opt: Optional[int] = None
        self._name = fn.__name__ if fn is not None else ""
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__name__ = self._name
        self.__wrapped__ = fn
        self.last_stats: Optional[Tuple[int, Optional[float]]] = None

    @classmethod
    def _of_program(cls, program: Program, name: str) -> "Kernel":
        k = cls(None)
        k._name = k.__name__ = name
        k._program = program
        k._program_opt = -1
        k._setup()
        return k

    def _source(self) -> Tuple[str, str]:
        """The text to compile and the file name: the whole module file for a top-level
        function (its helpers are there, and lines match), else the function's own source,
        dedented, after as many blank lines as it starts below the top of its file."""
        fn = self._fn
        try:
            file = inspect.getsourcefile(fn) or "<kernel>"
        except TypeError:
            file = "<kernel>"
        if "<locals>" not in fn.__qualname__ and os.path.isfile(file):
            with open(file, encoding="utf-8") as f:
                return f.read(), file
        try:
            lines, first = inspect.getsourcelines(fn)
        except OSError as e:
            raise WaveError(
                f"the source of kernel `{self._name}` cannot be read (was it typed at an "
                "interactive prompt or given with `python -c`?): put it in a file, or compile "
                "its text with wave_gpu.Program.compile(text)") from e
        return "\n" * builtins.max(first - 1, 0) + textwrap.dedent("".join(lines)), file

    def compile(self, opt: Optional[int] = None) -> Program:
        """Compiles the kernel (done by the first call; cached). Raises `CompileError`."""
        opt = options.opt if opt is None else opt
        if self._program is not None and (self._program_opt in (opt, -1)):
            return self._program
        text, file = self._source()
        self._program = Program(_compiled(_native.Program.compile(text, "python", file, opt, 64)))
        self._program_opt = opt
        if self._name not in self._program._kernels:
            raise CompileError(
                f"`{self._name}` in {file} is not a kernel the compiler found: is it decorated "
                "with @wave_gpu.kernel at the top level of its file?")
        self._setup()
        return self._program

    def _setup(self) -> None:
        name, params, workgroup = self._program._kernels[self._name]
        self._params = params
        self._declared = workgroup
        self._signature = f"{name}({', '.join(p[0] for p in params)})"

    @property
    def params(self) -> List[Tuple[str, str, Optional[str], bool]]:
        """Each parameter: `(name, "buffer" | "scalar", element type, may be written)`."""
        self.compile()
        return list(self._params)

    def __getitem__(self, shape: Any) -> _Launcher:
        if isinstance(shape, tuple) and len(shape) == 2 and not builtins.all(
                isinstance(x, (int, np.integer)) for x in shape):
            grid, workgroup = shape
            return _Launcher(self, _dim3(grid, "grid"), _dim3(workgroup, "workgroup"))
        if isinstance(shape, tuple) and len(shape) == 2:
            # `k[blocks, threads]`, the Numba convention.
            return _Launcher(self, _dim3(shape[0], "grid"), _dim3(shape[1], "workgroup"))
        return _Launcher(self, _dim3(shape, "grid"), None)

    def __call__(self, *args: Any, grid: Optional[_DIM] = None, workgroup: Optional[_DIM] = None,
                 device: Optional[str] = None, max_steps: Optional[int] = None,
                 timeout: Optional[float] = None, opt: Optional[int] = None) -> None:
        self.compile(opt)
        params = self._params
        if len(args) != len(params):
            raise TypeError(f"{self._signature} takes {len(params)} arguments, "
                            f"{len(args)} given")
        dev, on_gpu = _device(device)
        given: List[Any] = []
        seen: Dict[int, int] = {}
        write_back: List[Tuple[Any, Any]] = []
        largest = 0
        # An array passed for several parameters is written if any of them is.
        writes: Dict[int, bool] = {}
        for (pname, kind, elem, written), v in zip(params, args):
            if kind == "buffer":
                writes[id(v)] = writes.get(id(v), False) or written
        for i, ((pname, kind, elem, written), v) in enumerate(zip(params, args)):
            if kind == "scalar":
                if isinstance(v, np.ndarray) or hasattr(v, "__cuda_array_interface__"):
                    raise TypeError(f"{self._name}(): parameter `{pname}: {elem}` takes a "
                                    f"{elem} value, got an array")
                given.append(_convert_scalar(self._name, pname, elem, v))
                continue
            same = seen.get(id(v))
            if same is not None:
                given.append(("same", same))
                continue
            seen[id(v)] = i
            arg, n = _buffer_arg(self._name, pname, elem, writes[id(v)], v, on_gpu, write_back)
            largest = builtins.max(largest, n)
            given.append(arg)
        if grid is None:
            wg = _dim3(workgroup, "workgroup") if workgroup is not None else (
                self._declared or (builtins.max(1, builtins.min(256, largest)), 1, 1))
            if wg[1] * wg[2] != 1:
                raise LaunchError(
                    f"{self._name}() has workgroups of {wg}: one thread per element covers a "
                    "line, so give the grid of a 2- or 3-dimensional launch: "
                    f"{self._name}[grid](...)")
            threads = builtins.max(largest, 1)
            g = (-(-threads // wg[0]), 1, 1)
        else:
            # (A launcher's shape is checked already; the device checks it again.)
            g = grid if type(grid) is tuple and len(grid) == 3 else _dim3(grid, "grid")
            wg = self._declared if workgroup is None else workgroup if (
                type(workgroup) is tuple and len(workgroup) == 3) else _dim3(workgroup, "workgroup")
        steps = options.max_steps if max_steps is None else int(max_steps)
        t = options.timeout if timeout is None else float(timeout)
        self.last_stats = dev.launch(self._program._native, self._name, g, wg, given, steps, t)
        for target, source in write_back:
            target[...] = source

    def __repr__(self) -> str:
        return f"<wave_gpu kernel {self._name}>"


def _buffer_arg(kname: str, pname: str, elem: Optional[str], written: bool, v: Any,
                on_gpu: bool, write_back: List[Tuple[Any, Any]]) -> Tuple[Tuple[Any, ...], int]:
    """The native argument for an array, and its element count."""
    want = _DTYPES.get(elem) if elem else None
    if not isinstance(v, np.ndarray):
        return _other_buffer_arg(kname, pname, elem, want, written, v, on_gpu, write_back)
    if want is not None and v.dtype != want:
        raise TypeError(f"{kname}(): parameter `{pname}: {elem}[:]` takes {want.name} "
                        f"elements, got a {v.dtype.name} array")
    arr = v
    if not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr)
        if written:
            write_back.append((v, arr))
    flat = arr.reshape(-1).view(np.uint8)
    if written:
        if not flat.flags.writeable:
            raise TypeError(f"{kname}(): parameter `{pname}` may be written by the kernel, and "
                            "the array is read-only")
        return ("host", flat), arr.size
    return ("host_ro", flat), arr.size


def _other_buffer_arg(kname: str, pname: str, elem: Optional[str], want: Optional[np.dtype],
                      written: bool, v: Any, on_gpu: bool,
                      write_back: List[Tuple[Any, Any]]) -> Tuple[Tuple[Any, ...], int]:
    """`_buffer_arg` for what is not a numpy array: a GPU array, a DLPack object, a list."""
    cai = getattr(v, "__cuda_array_interface__", None)
    if cai is None and hasattr(v, "__dlpack__"):
        v, cai = _from_dlpack(v)
        if cai is None:
            return _buffer_arg(kname, pname, elem, written, v, on_gpu, write_back)
    if cai is not None:
        shape = tuple(cai["shape"])
        dtype = np.dtype(cai["typestr"])
        if want is not None and dtype != want:
            raise TypeError(f"{kname}(): parameter `{pname}: {elem}[:]` takes {want.name} "
                            f"elements, got a {dtype.name} GPU array")
        strides = cai.get("strides")
        if strides is not None and tuple(strides) != _c_strides(shape, dtype.itemsize):
            raise TypeError(f"{kname}(): parameter `{pname}`: the GPU array is not contiguous "
                            "(make a contiguous copy)")
        if not on_gpu:
            raise TypeError(f"{kname}(): parameter `{pname}` is a GPU array, and this launch "
                            "is on the emulator: pass a numpy array, or device=\"cuda\"")
        ptr, readonly = cai["data"]
        if readonly and written:
            raise TypeError(f"{kname}(): parameter `{pname}` may be written by the kernel, and "
                            "the GPU array is read-only")
        n = int(np.prod(shape)) if shape else 1
        return ("device", int(ptr), n * dtype.itemsize), n
    if isinstance(v, (list, tuple)):
        if written:
            raise TypeError(f"{kname}(): parameter `{pname}` may be written by the kernel: "
                            f"pass a numpy array (wave_gpu.array(...)), not a {type(v).__name__}")
        arr = np.asarray(v, dtype=want if want is not None else np.float32)
        return _buffer_arg(kname, pname, elem, written, arr, on_gpu, write_back)
    raise TypeError(f"{kname}(): parameter `{pname}: {elem or 'ptr'}[:]` takes an "
                    f"array, got {type(v).__name__}")


def _c_strides(shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    out = []
    s = itemsize
    for d in reversed(shape):
        out.append(s)
        s *= d
    return tuple(reversed(out))


def _from_dlpack(v: Any) -> Tuple[Any, Optional[dict]]:
    """An object with only `__dlpack__`: a numpy view when it is in host memory, else a CuPy
    view (which has `__cuda_array_interface__`) when CuPy is installed."""
    device_type = v.__dlpack_device__()[0] if hasattr(v, "__dlpack_device__") else 1
    if device_type == 1:  # kDLCPU
        return np.from_dlpack(v), None
    try:
        import cupy  # type: ignore
    except ImportError as e:
        raise TypeError("a GPU array with only __dlpack__ needs CuPy to be passed "
                        "(or give it __cuda_array_interface__)") from e
    c = cupy.from_dlpack(v)
    return c, c.__cuda_array_interface__


def kernel(fn: Optional[Callable[..., Any]] = None, *, workgroup: Any = None) -> Any:
    """Marks a function as a kernel: `@wave_gpu.kernel` or
    `@wave_gpu.kernel(workgroup=(64, 1, 1))`. The compiler reads the workgroup size from the
    source; the function is compiled when first called."""
    if fn is None:
        return lambda f: Kernel(f)
    return Kernel(fn)
