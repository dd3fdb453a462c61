#!/usr/bin/python3
"""`npu fit`'s fp32 reference trainer against an independent NumPy re-implementation (issue 15:
the reference the NPU's losses are compared with must itself be right). This script rebuilds,
from the specification in docs/training.md section 10 and without any of the C code, the seeded
split (splitmix64 Fisher-Yates, 20 % held out), each epoch's sample order, the Glorot-uniform
initial weights rounded to bf16, and SGD with momentum and weight decay on a 64-32-10 MLP, trains
it in float32 NumPy, and compares each epoch's mean loss (relative 1e-3: the GEMMs sum in another
order) and test accuracy (within two of the 359 test images) with `npu fit --engine ref --json`.
It also runs `--engine npu` for one epoch on the RTL: every GEMM bit-exact (the runtime's check),
and the losses of both engines as the JSON reports them; and `--plot` writes a PNG.

Usage: tests/fit_checks.py build/<config>/npu   (needs python3-numpy: Debian's /usr/bin/python3)
"""
import gzip
import json
import os
import subprocess
import sys

import numpy as np

M64 = (1 << 64) - 1


class SplitMix:
    def __init__(self, state):
        self.s = state & M64

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & M64
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)


def shuffle(v, rng):
    for i in range(len(v) - 1, 0, -1):
        j = rng.next() % (i + 1)
        v[i], v[j] = v[j], v[i]


def to_bf16(x):
    """float32 array -> the nearest bf16 values (round to nearest, ties to even), as float32."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def init(widths, seed):
    rng, ws = SplitMix(seed ^ 0x1A17), []
    for k, n in zip(widths, widths[1:]):
        lim = np.sqrt(6.0 / (k + n))
        u = np.array([(rng.next() >> 11) * (1.0 / 9007199254740992.0) for _ in range(k * n)])
        ws.append(to_bf16(((2 * u - 1) * lim).astype(np.float32)).reshape(k, n))
    return ws, [np.zeros(n, np.float32) for n in widths[1:]]


def forward(ws, bs, x):
    acts = [x]
    for l, (w, b) in enumerate(zip(ws, bs)):
        y = acts[-1] @ w + b
        acts.append(np.maximum(y, 0) if l + 1 < len(ws) else y)
    return acts


def xent(z, y):
    z = z.astype(np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    loss = float(np.mean(-np.log(p[np.arange(len(y)), y])))
    p[np.arange(len(y)), y] -= 1
    return loss, (p / len(y)).astype(np.float32)


def train(x, y, widths, epochs, batch, seed, lr=0.05, mu=0.9, wd=1e-4):
    n = len(y)
    perm = list(range(n))
    shuffle(perm, SplitMix(seed ^ 0x5EED))
    n_test = int(n * 0.2 + 0.5)
    test, tr = perm[:n_test], perm[n_test:]
    ws, bs = init(widths, seed)
    vw, vb = [np.zeros_like(w) for w in ws], [np.zeros_like(b) for b in bs]
    lr, mu, wd = np.float32(lr), np.float32(mu), np.float32(wd)
    out = []
    for ep in range(1, epochs + 1):
        order = list(tr)
        shuffle(order, SplitMix((seed * 0x100000001B3 + ep + 1) & M64))  # epoch e: seed*FNV + e + 1
        steps, total = len(tr) // batch, 0.0
        for i in range(steps):
            idx = order[i * batch:(i + 1) * batch]
            acts = forward(ws, bs, x[idx])
            loss, g = xent(acts[-1], y[idx])
            total += loss / steps
            for l in range(len(ws) - 1, -1, -1):
                gw, gb = acts[l].T @ g, g.sum(axis=0)
                if l > 0:
                    g = np.where(acts[l] > 0, g @ ws[l].T, np.float32(0))
                vw[l] = mu * vw[l] + gw + wd * ws[l]
                ws[l] = ws[l] - lr * vw[l]
                vb[l] = mu * vb[l] + gb
                bs[l] = bs[l] - lr * vb[l]
        pred = forward(ws, bs, x[test])[-1].argmax(axis=1)
        out.append((total, int((pred == y[test]).sum()), len(test)))
    return out


def main():
    npu, fail = sys.argv[1], 0
    here = os.path.dirname(os.path.abspath(__file__))
    with gzip.open(os.path.join(here, "..", "sw", "data", "digits.csv.gz"), "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.int64)
    x, y = (data[:, :64] / 16.0).astype(np.float32), data[:, 64]
    ref = train(x, y, [64, 32, 10], epochs=3, batch=32, seed=3)
    r = subprocess.run([npu, "fit", "--model", "mlp:64,32,10", "--engine", "ref", "--epochs", "3",
                        "--seed", "3", "--json"], capture_output=True, text=True)
    got = json.loads(r.stdout)["epochs"] if r.returncode == 0 else []
    if len(got) != 3:
        print(f"FAIL: npu fit --engine ref exit {r.returncode}: {r.stderr.strip()}")
        return 1
    for (loss, ok, n), e in zip(ref, got):
        rel = abs(e["loss"] - loss) / loss
        acc_ok = abs(round(e["test_acc"] * n) - ok) <= 2
        print(f"{'ok' if rel < 1e-3 and acc_ok else 'FAIL'}: epoch {e['epoch']}: loss {e['loss']:.6f} "
              f"vs NumPy {loss:.6f} (rel {rel:.1e}), test {e['test_acc']:.4f} vs {ok / n:.4f}")
        fail |= not (rel < 1e-3 and acc_ok)
    r = subprocess.run([npu, "fit", "--model", "mlp:64,32,10", "--epochs", "1", "--json"],
                       capture_output=True, text=True)
    e = json.loads(r.stdout)["epochs"][0] if r.returncode == 0 else None
    good = e is not None and e["kernel_fail"] == 0 and e["kernels"] > 0 and \
        abs(e["loss_rel_diff"]) < 0.02 and e["cycles"] > 0
    print(f"{'ok' if good else 'FAIL'}: npu fit --engine npu, 1 epoch: exit {r.returncode}, "
          + (f"{e['kernels']} kernels bit-exact, loss {e['loss']:.5f} vs fp32 {e['ref_loss']:.5f}"
             if e else r.stderr.strip()))
    fail |= not good
    png = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"npu_fit_check_{os.getpid()}.png")
    r = subprocess.run([npu, "fit", "--model", "mlp:64,16,10", "--engine", "ref", "--epochs", "2",
                        "--plot", png, "--quiet"], capture_output=True, text=True)
    ok = r.returncode == 0 and os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    print(f"{'ok' if ok else 'FAIL'}: npu fit --plot writes a PNG (exit {r.returncode}) {r.stderr.strip()}")
    fail |= not ok
    if os.path.exists(png):
        os.remove(png)
    return fail


if __name__ == "__main__":
    sys.exit(main())
