"""Type stubs of the native module (wave_gpu._native): the Rust layer under wave_gpu."""

from typing import Any, List, Optional, Sequence, Tuple

__version__: str

class WaveError(Exception):
    """Base class of the package's errors."""

class CompileError(WaveError):
    """A kernel does not compile; the message is the rendered diagnostic."""
    diagnostics: List[dict]
    file: str
    code: Optional[str]
    line: Optional[int]
    column: Optional[int]

class KernelTrap(WaveError):
    """A kernel trapped on the emulator."""
    reason: str
    kernel: str
    file: str
    line: Optional[int]
    source_line: Optional[str]
    workgroup: Optional[Tuple[int, int, int]]
    wave: Optional[int]
    lane: Optional[int]
    pc: Optional[int]

class LaunchError(WaveError):
    """A launch that does not fit the kernel or the device."""

class DeviceError(WaveError):
    """The device failed or is missing."""

Param = Tuple[str, str, Optional[str], bool]

class Program:
    @staticmethod
    def compile(text: str, language: str, file: str, opt: int = 2,
                max_registers: int = 64) -> "Program": ...
    @staticmethod
    def load(path: str, opt: int = 2, max_registers: int = 64) -> "Program": ...
    @property
    def kernels(self) -> List[Tuple[str, List[Param], Optional[Tuple[int, int, int]]]]: ...
    @property
    def file(self) -> str: ...
    @property
    def loaded_from_disk(self) -> bool: ...

class Device:
    def __init__(self, spec: str) -> None: ...
    @property
    def spec(self) -> str: ...
    @property
    def description(self) -> str: ...
    def launch(self, program: Program, kernel: str, grid: Tuple[int, int, int],
               workgroup: Optional[Tuple[int, int, int]], args: Sequence[Tuple[Any, ...]],
               max_steps: int, timeout: float,
               wave_width: int = 32) -> Tuple[int, Optional[float]]: ...

def cuda_devices() -> Tuple[List[Tuple[str, str]], Optional[str]]: ...
def cache_dir() -> Optional[str]: ...
def bench_rust_launch(device: Device, program: Program, kernel: str,
                      grid: Tuple[int, int, int], workgroup: Optional[Tuple[int, int, int]],
                      args: Sequence[Tuple[Any, ...]], iterations: int) -> float: ...
