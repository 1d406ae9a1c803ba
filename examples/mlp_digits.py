"""A two-layer network (64 -> 128 -> 10, ReLU, softmax cross-entropy, SGD) trained on
scikit-learn's 8x8 digits, every step of the forward and backward pass a WAVE kernel.

    python examples/mlp_digits.py                  # on the emulator
    python examples/mlp_digits.py --device cuda    # on a CUDA GPU

The data set ships inside scikit-learn (`load_digits`: 1,797 images); nothing is downloaded.
numpy only holds the arrays, shuffles and checks: every matrix product, bias, activation,
loss, gradient and update below is one of the kernels in this file.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import wave_gpu as wave
from wave_gpu import f32, u32

# Natural logarithm and exponential from the GPU's base-2 ones.
LN2 = 0.6931471805599453
LOG2E = 1.4426950408889634


@wave.kernel(workgroup=64)
def matmul(a: f32[:], b: f32[:], c: f32[:], m: u32, k: u32, n: u32):
    """c (m x n) = a (m x k) @ b (k x n), one thread per element of c."""
    i = wave.global_id()
    if i < m * n:
        row = i // n
        col = i % n
        acc: f32 = 0.0
        for j in range(0, k):
            acc = acc + a[row * k + j] * b[j * n + col]
        c[i] = acc


@wave.kernel(workgroup=64)
def matmul_at_b(a: f32[:], b: f32[:], c: f32[:], m: u32, k: u32, n: u32):
    """c (m x n) = a.T @ b, with a (k x m) and b (k x n): a weight gradient."""
    i = wave.global_id()
    if i < m * n:
        row = i // n
        col = i % n
        acc: f32 = 0.0
        for j in range(0, k):
            acc = acc + a[j * m + row] * b[j * n + col]
        c[i] = acc


@wave.kernel(workgroup=64)
def matmul_a_bt(a: f32[:], b: f32[:], c: f32[:], m: u32, k: u32, n: u32):
    """c (m x n) = a @ b.T, with a (m x k) and b (n x k): the gradient into a layer's input."""
    i = wave.global_id()
    if i < m * n:
        row = i // n
        col = i % n
        acc: f32 = 0.0
        for j in range(0, k):
            acc = acc + a[row * k + j] * b[col * k + j]
        c[i] = acc


@wave.kernel(workgroup=64)
def add_bias(z: f32[:], bias: f32[:], m: u32, n: u32):
    """z (m x n) += bias, on every row."""
    i = wave.global_id()
    if i < m * n:
        z[i] = z[i] + bias[i % n]


@wave.kernel(workgroup=64)
def relu(z: f32[:], h: f32[:], count: u32):
    """h = max(z, 0)."""
    i = wave.global_id()
    if i < count:
        h[i] = wave.max(z[i], 0.0)


@wave.kernel(workgroup=64)
def relu_grad(dh: f32[:], z: f32[:], dz: f32[:], count: u32):
    """dz = dh where z > 0, else 0."""
    i = wave.global_id()
    if i < count:
        g: f32 = 0.0
        if z[i] > 0.0:
            g = dh[i]
        dz[i] = g


@wave.kernel(workgroup=64)
def softmax_ce(logits: f32[:], labels: u32[:], probs: f32[:], loss: f32[:], m: u32, n: u32):
    """For each row: probs = softmax(logits), loss = -log(probs[label])."""
    r = wave.global_id()
    if r < m:
        base = r * n
        top = logits[base]
        for j in range(1, n):
            top = wave.max(top, logits[base + j])
        total: f32 = 0.0
        for j in range(0, n):
            e = wave.exp2((logits[base + j] - top) * 1.4426950408889634)
            probs[base + j] = e
            total = total + e
        for j in range(0, n):
            probs[base + j] = probs[base + j] / total
        p = probs[base + labels[r]]
        loss[r] = 0.0 - wave.log2(wave.max(p, 1e-30)) * 0.6931471805599453


@wave.kernel(workgroup=64)
def softmax_ce_grad(probs: f32[:], labels: u32[:], dlogits: f32[:], m: u32, n: u32):
    """dlogits = (probs - onehot(labels)) / m: the gradient of the mean loss."""
    i = wave.global_id()
    if i < m * n:
        g = probs[i]
        if i % n == labels[i // n]:
            g = g - 1.0
        dlogits[i] = g / f32(m)


@wave.kernel(workgroup=64)
def bias_grad(dz: f32[:], db: f32[:], m: u32, n: u32):
    """db[col] = the sum of column col of dz (m x n)."""
    col = wave.global_id()
    if col < n:
        acc: f32 = 0.0
        for r in range(0, m):
            acc = acc + dz[r * n + col]
        db[col] = acc


@wave.kernel(workgroup=64)
def sgd(w: f32[:], dw: f32[:], lr: f32, count: u32):
    """w -= lr * dw."""
    i = wave.global_id()
    if i < count:
        w[i] = w[i] - lr * dw[i]


def launch_1d(k, count, *args, device=None):
    """`count` threads of `k`, in workgroups of its declared 64."""
    k[max(1, -(-count // 64))](*args, device=device)


class MLP:
    """The network's parameters and its training step, on one device."""

    def __init__(self, n_in=64, n_hidden=128, n_out=10, seed=0, device=None):
        rng = np.random.default_rng(seed)
        self.shape = (n_in, n_hidden, n_out)
        self.w1 = (rng.standard_normal((n_in, n_hidden)) * np.sqrt(2.0 / n_in)).astype(np.float32)
        self.b1 = np.zeros(n_hidden, np.float32)
        self.w2 = (rng.standard_normal((n_hidden, n_out)) * np.sqrt(2.0 / n_hidden)).astype(np.float32)
        self.b2 = np.zeros(n_out, np.float32)
        self.device = device

    def forward(self, x):
        """Logits and the activations the backward pass needs."""
        n_in, n_hidden, n_out = self.shape
        m = x.shape[0]
        d = self.device
        z1 = np.empty((m, n_hidden), np.float32)
        launch_1d(matmul, m * n_hidden, x, self.w1, z1, m, n_in, n_hidden, device=d)
        launch_1d(add_bias, m * n_hidden, z1, self.b1, m, n_hidden, device=d)
        h = np.empty_like(z1)
        launch_1d(relu, z1.size, z1, h, z1.size, device=d)
        z2 = np.empty((m, n_out), np.float32)
        launch_1d(matmul, m * n_out, h, self.w2, z2, m, n_hidden, n_out, device=d)
        launch_1d(add_bias, m * n_out, z2, self.b2, m, n_out, device=d)
        return z2, (z1, h)

    def loss_and_gradients(self, x, y):
        """The mean loss of a batch and the gradient of every parameter."""
        n_in, n_hidden, n_out = self.shape
        m = x.shape[0]
        d = self.device
        z2, (z1, h) = self.forward(x)
        probs = np.empty_like(z2)
        loss = np.empty(m, np.float32)
        launch_1d(softmax_ce, m, z2, y, probs, loss, m, n_out, device=d)
        dz2 = np.empty_like(z2)
        launch_1d(softmax_ce_grad, m * n_out, probs, y, dz2, m, n_out, device=d)
        dw2 = np.empty_like(self.w2)
        launch_1d(matmul_at_b, n_hidden * n_out, h, dz2, dw2, n_hidden, m, n_out, device=d)
        db2 = np.empty_like(self.b2)
        launch_1d(bias_grad, n_out, dz2, db2, m, n_out, device=d)
        dh = np.empty_like(h)
        launch_1d(matmul_a_bt, m * n_hidden, dz2, self.w2, dh, m, n_out, n_hidden, device=d)
        dz1 = np.empty_like(z1)
        launch_1d(relu_grad, dz1.size, dh, z1, dz1, dz1.size, device=d)
        dw1 = np.empty_like(self.w1)
        launch_1d(matmul_at_b, n_in * n_hidden, x, dz1, dw1, n_in, m, n_hidden, device=d)
        db1 = np.empty_like(self.b1)
        launch_1d(bias_grad, n_hidden, dz1, db1, m, n_hidden, device=d)
        return float(loss.mean()), {"w1": dw1, "b1": db1, "w2": dw2, "b2": db2}

    def step(self, grads, lr):
        """One SGD update of every parameter."""
        for name, g in grads.items():
            w = getattr(self, name)
            launch_1d(sgd, w.size, w, g, lr, w.size, device=self.device)

    def predict(self, x):
        logits, _ = self.forward(x)
        return logits.argmax(axis=1)


def reference_gradients(model, x, y):
    """The same loss and gradients in numpy float64: what the kernels are checked against."""
    x = x.astype(np.float64)
    w1, b1 = model.w1.astype(np.float64), model.b1.astype(np.float64)
    w2, b2 = model.w2.astype(np.float64), model.b2.astype(np.float64)
    z1 = x @ w1 + b1
    h = np.maximum(z1, 0.0)
    z2 = h @ w2 + b2
    z2 = z2 - z2.max(axis=1, keepdims=True)
    probs = np.exp(z2) / np.exp(z2).sum(axis=1, keepdims=True)
    m = x.shape[0]
    loss = -np.log(probs[np.arange(m), y]).mean()
    dz2 = probs.copy()
    dz2[np.arange(m), y] -= 1.0
    dz2 /= m
    dh = dz2 @ w2.T
    dz1 = dh * (z1 > 0)
    return loss, {"w1": x.T @ dz1, "b1": dz1.sum(axis=0), "w2": h.T @ dz2, "b2": dz2.sum(axis=0)}


def load_data(seed=0, test_fraction=0.2):
    """The digits, scaled to [0, 1], shuffled and split: (x_train, y_train, x_test, y_test)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.uint32)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    n_test = int(len(x) * test_fraction)
    return x[n_test:], y[n_test:], x[:n_test], y[:n_test]


def train(device=None, epochs=20, batch=32, lr=0.1, seed=0, log=print):
    """Trains the network and returns (model, test accuracy, seconds per epoch). The rate
    halves after half the epochs, and again after three quarters."""
    x_train, y_train, x_test, y_test = load_data(seed)
    model = MLP(seed=seed, device=device)
    rng = np.random.default_rng(seed + 1)
    times = []
    for epoch in range(epochs):
        began = time.perf_counter()
        rate = lr if epoch < epochs // 2 else lr / 2 if epoch < 3 * epochs // 4 else lr / 4
        order = rng.permutation(len(x_train))
        losses = []
        for start in range(0, len(order) - batch + 1, batch):
            idx = order[start:start + batch]
            xb = np.ascontiguousarray(x_train[idx])
            yb = np.ascontiguousarray(y_train[idx])
            loss, grads = model.loss_and_gradients(xb, yb)
            model.step(grads, rate)
            losses.append(loss)
        times.append(time.perf_counter() - began)
        accuracy = float((model.predict(x_test) == y_test).mean())
        log(f"epoch {epoch + 1:2}: loss {np.mean(losses):.4f}, test accuracy {accuracy:.4f}, "
            f"{times[-1]:.2f} s")
    accuracy = float((model.predict(x_test) == y_test).mean())
    return model, accuracy, float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="emulator", help="emulator (default), cuda, cuda:N")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1)
    a = parser.parse_args()
    wave.set_device(a.device)
    # The first batch's gradients against numpy's float64.
    x_train, y_train, _, _ = load_data()
    model = MLP()
    xb, yb = x_train[:a.batch], y_train[:a.batch]
    loss, grads = model.loss_and_gradients(xb, yb)
    ref_loss, ref = reference_gradients(model, xb, yb)
    worst = max(float(np.abs(grads[k] - ref[k]).max() / np.abs(ref[k]).max()) for k in ref)
    print(f"first batch on {a.device}: loss {loss:.6f} (numpy float64 {ref_loss:.6f}), "
          f"largest gradient error {worst:.2e} of the largest gradient")
    _, accuracy, epoch_s = train(epochs=a.epochs, batch=a.batch, lr=a.lr)
    print(f"test accuracy {accuracy:.4f} after {a.epochs} epochs; median epoch {epoch_s:.2f} s "
          f"on {a.device}")


if __name__ == "__main__":
    main()
