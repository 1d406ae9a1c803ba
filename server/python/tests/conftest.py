"""`pytest server/python/tests` runs on the emulator; `--device cuda` runs the same tests on a
CUDA GPU (tests that only the emulator can answer, such as a trap's lane, say so and skip)."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--device", default="emulator",
                     help="the device the tests launch on: emulator (default), cuda, cuda:N")


@pytest.fixture(scope="session")
def device(request):
    import wave_gpu

    spec = request.config.getoption("--device")
    wave_gpu.set_device(spec)
    return spec


@pytest.fixture
def emulator_only(device):
    if device != "emulator":
        pytest.skip(f"needs the emulator (this run is on {device}): a GPU reports no trap "
                    "location and cannot be interrupted")


@pytest.fixture
def cuda_only(device):
    if device == "emulator":
        pytest.skip("needs a CUDA GPU: run `pytest server/python/tests --device cuda` on a "
                    "machine with one")
