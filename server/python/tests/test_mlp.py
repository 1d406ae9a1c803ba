"""The network of examples/mlp_digits.py, trained with WAVE kernels: its first batch's
gradients against numpy's float64, and its test accuracy after training."""

import pathlib
import sys

import numpy as np
import pytest

pytest.importorskip("sklearn", reason="scikit-learn (its digits data set) is not installed")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))
import mlp_digits  # noqa: E402


def test_first_batch_gradients_match_numpy_float64(device):
    x_train, y_train, _, _ = mlp_digits.load_data()
    model = mlp_digits.MLP()
    xb, yb = x_train[:32], y_train[:32]
    loss, grads = model.loss_and_gradients(xb, yb)
    ref_loss, ref = mlp_digits.reference_gradients(model, xb, yb)
    assert abs(loss - ref_loss) <= 1e-4 * abs(ref_loss)
    for name in ("w1", "b1", "w2", "b2"):
        g, r = grads[name], ref[name]
        assert g.shape == r.shape
        # Relative to the largest gradient of the tensor: near-zero entries have no
        # meaningful elementwise relative error in float32.
        error = float(np.abs(g - r).max() / np.abs(r).max())
        assert error <= 1e-4, f"{name}: {error:.3e}"


def test_training_reaches_95_percent_test_accuracy(device):
    lines = []
    _, accuracy, epoch_s = mlp_digits.train(log=lines.append)
    print("\n".join(lines))
    assert accuracy >= 0.95, "\n".join(lines)
