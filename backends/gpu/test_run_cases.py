"""Tests of run_cases.py that need no GPU: the comparison rules, and the supervisor's handling
of workers that hang, die or ask to be replaced (with small fake workers).

Run: python3 -m unittest backends/gpu/test_run_cases.py   (needs numpy, not CuPy)
"""

import json
import struct
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run_cases  # noqa: E402


def block(offset, elem, fmt, *values, ulps=0, nan=()):
    return {"offset": offset, "elem": elem, "hex": struct.pack(fmt, *values).hex(), "ulps": ulps, "nan": list(nan)}


class Compare(unittest.TestCase):
    def test_integers_are_exact(self):
        memory = struct.pack("<3I", 1, 2, 3)
        self.assertEqual(run_cases.compare_block(block(0, "u32", "<3I", 1, 2, 3), memory), ("pass", ""))
        result, detail = run_cases.compare_block(block(4, "u32", "<2I", 2, 4), memory)
        self.assertEqual(result, "fail")
        self.assertIn("offset 8", detail)
        self.assertIn("expected 4", detail)

    def test_nan_payloads_in_integer_lists(self):
        memory = struct.pack("<4I", 0x7FFFFFFF, 0x7FFF7FFF, 0x00007FFF, 0xFFFFFFFF)
        expected = block(0, "u32", "<4I", 0x7FC00000, 0x7E007E00, 0x00007E00, 0xFFC00000)
        result, detail = run_cases.compare_block(expected, memory)
        self.assertEqual(result, "pass-nan-payload")
        self.assertIn("4 element(s)", detail)
        # A NaN where a number is expected is a real difference.
        self.assertEqual(run_cases.compare_block(block(0, "u32", "<I", 0x3F800000), memory)[0], "fail")
        # Only one half a NaN: the other half differs as a number.
        self.assertEqual(
            run_cases.compare_block(block(0, "u32", "<I", 0x12347E00), struct.pack("<I", 0x43217FFF))[0], "fail"
        )
        self.assertEqual(
            run_cases.compare_block(block(0, "u16", "<H", 0x7E00), struct.pack("<H", 0x7FFF))[0], "pass-nan-payload"
        )
        self.assertEqual(run_cases.compare_block(block(0, "u8", "<B", 0x7E), struct.pack("<B", 0x7F))[0], "fail")
        u64 = block(0, "u64", "<Q", 0x7FF8000000000000)
        self.assertEqual(run_cases.compare_block(u64, struct.pack("<Q", 0x7FFFFFFFFFFFFFFF))[0], "pass-nan-payload")

    def test_float_ulps_and_nan_flags(self):
        memory = struct.pack("<4I", 0x3F800001, 0x80000000, 0x7FFFFFFF, 0x00000001)
        ok = block(
            0, "f32", "<4I", 0x3F800000, 0x00000000, 0x7FC00000, 0x80000001, ulps=2, nan=[False, False, True, False]
        )
        self.assertEqual(run_cases.compare_block(ok, memory), ("pass", ""))
        exact = block(0, "f32", "<I", 0x3F800000)
        result, detail = run_cases.compare_block(exact, memory)
        self.assertEqual(result, "fail")
        self.assertIn("0x3f800001", detail)
        # A flagged NaN must be a NaN; an unflagged number must not be one.
        self.assertEqual(run_cases.compare_block(block(0, "f32", "<I", 0, nan=[True]), memory)[0], "fail")
        self.assertEqual(run_cases.compare_block(block(8, "f32", "<I", 0x7F800000, ulps=10), memory)[0], "fail")
        half = block(0, "f16", "<2H", 0x3C00, 0x7E00, ulps=1, nan=[False, True])
        self.assertEqual(run_cases.compare_block(half, struct.pack("<2H", 0x3C01, 0x7FFF)), ("pass", ""))

    def test_malformed_blocks(self):
        with self.assertRaises(run_cases.BundleError):
            run_cases.compare_block(block(60, "u32", "<2I", 0, 0), bytes(64))
        with self.assertRaises(run_cases.BundleError):
            run_cases.compare_block({"offset": 0, "elem": "u24", "hex": "00"}, bytes(4))
        with self.assertRaises(run_cases.BundleError):
            run_cases.compare_block({"offset": 0, "elem": "u32", "hex": "000000"}, bytes(4))

    def test_params_reinterpret_bits(self):
        case = {
            "params": [
                {"name": "a", "type": "ptr", "value": 1024},
                {"name": "b", "type": "i32", "value": 0xFFFFFFFF},
                {"name": "c", "type": "f32", "value": 0x3FC00000},
            ]
        }
        a, b, c = run_cases.param_values(case)
        self.assertEqual((a.dtype.name, int(a)), ("uint32", 1024))
        self.assertEqual((b.dtype.name, int(b)), ("int32", -1))
        self.assertEqual((c.dtype.name, float(c)), ("float32", 1.5))

    def test_entry_names(self):
        ptx = ".visible .entry add_(\n .param .u64 wave_mem\n)\n{\n}\n"
        self.assertEqual(run_cases.entry_name("add", ptx), "add_")
        self.assertEqual(run_cases.entry_name("other", ptx), "add_")


FAKE_WORKER = """
import json, sys, time
print(json.dumps({"hello": {"gpu": "fake"}}), flush=True)
for line in sys.stdin:
    case = json.loads(line)
    what = case["name"]
    if what == "hang":
        time.sleep(600)
    if what == "die":
        sys.exit(3)
    if what == "sticky":
        print(json.dumps({"result": "error", "detail": "CUDA_ERROR_ILLEGAL_ADDRESS", "restart": True}), flush=True)
        sys.exit(0)
    print("noise that is not a reply", flush=True)
    print(json.dumps({"result": "pass", "detail": "", "restart": False}), flush=True)
"""


class Supervise(unittest.TestCase):
    def test_hangs_deaths_and_restarts(self):
        with tempfile.TemporaryDirectory() as tmp:
            command = [sys.executable, "-u", "-c", FAKE_WORKER]
            supervisor = run_cases.Supervisor(command, Path(tmp) / "worker.log", timeout=2.0)
            try:
                supervisor.start()
                self.assertEqual(supervisor.environment, {"gpu": "fake"})
                self.assertEqual(supervisor.run({"name": "ok"}), ("pass", ""))
                result, detail = supervisor.run({"name": "hang"})
                self.assertEqual(result, "error")
                self.assertIn("timed out", detail)
                self.assertEqual(supervisor.run({"name": "ok"}), ("pass", ""))
                result, detail = supervisor.run({"name": "die"})
                self.assertEqual(result, "error")
                self.assertIn("status 3", detail)
                self.assertEqual(supervisor.run({"name": "sticky"}), ("error", "CUDA_ERROR_ILLEGAL_ADDRESS"))
                self.assertIsNone(supervisor.worker)
                self.assertEqual(supervisor.run({"name": "ok"}), ("pass", ""))
            finally:
                supervisor.close()


class DryRun(unittest.TestCase):
    def test_end_to_end(self):
        with tempfile.TemporaryDirectory() as tmp:
            bundle, out = Path(tmp) / "bundle", Path(tmp) / "out"
            (bundle / "ptx").mkdir(parents=True)
            base = {
                "ptx": "ptx/k.ptx",
                "kernel": "main",
                "grid": [1, 1, 1],
                "block": [32, 1, 1],
                "params": [],
                "device_memory": 16,
            }
            mem = [{"offset": 0, "hex": struct.pack("<I", 0x7FC00000).hex()}]
            cases = [
                dict(
                    base,
                    name="same",
                    path="b.toml",
                    status="run",
                    memory=mem,
                    expect=[block(0, "u32", "<I", 0x7FC00000)],
                ),
                dict(
                    base,
                    name="payload",
                    path="a.toml",
                    status="run",
                    memory=mem,
                    expect=[block(0, "u32", "<I", 0x7FFFFFFF)],
                ),
                dict(base, name="differs", path="c.toml", status="run", memory=[], expect=[block(4, "u32", "<I", 9)]),
                {"name": "skip", "path": "d.toml", "status": "skip", "reason": "does not run at W = 32"},
            ]
            (bundle / "cases.json").write_text(json.dumps(cases))
            run = subprocess.run(
                [sys.executable, str(Path(run_cases.__file__)), str(bundle), str(out), "--dry-run"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn("2 passed, 1 failed", run.stdout)
            results = json.loads((out / "results.json").read_text())
            self.assertEqual([r["path"] for r in results], ["a.toml", "b.toml", "c.toml", "d.toml"])
            self.assertEqual([r["result"] for r in results], ["pass-nan-payload", "pass", "fail", "skipped"])
            table = (out / "verification.md").read_text()
            self.assertIn("| `c.toml` | fail | first difference at offset 4", table)
            self.assertIn("pass: 1, pass-nan-payload: 1, fail: 1, error: 0, skipped: 1", table)


if __name__ == "__main__":
    unittest.main()
