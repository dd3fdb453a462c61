#!/usr/bin/python3
"""`npu gemm` and `npu conv` on a designer's own tensors (issue 17 acceptance 1, GEMM and conv
parts): NumPy writes random int16 A (M x K) and B (K x N), `npu gemm --a A.npy --b B.npy --out
C.npy` runs them on the RTL, and C.npy equals NumPy's own matmul (int64, wrapped to int32 like the
NPU's accumulators), also with --trans-a / --trans-b (A stored K x M, B stored N x K). A strided,
padded 3x3 conv layer's forward, dX (ecoflow) and dW (zeropad) on NumPy's X, W, dY equal NumPy's
own convolution, and --save's golden result too. A 3-layer MLP training step (`npu train
--x X.npy --w W0.npy,W1.npy,W2.npy --dy dY.npy --save DIR`) on NumPy's tensors writes Y_i, dX_i
and dW_i equal to NumPy's own step (the host's requantising activation included). `--save DIR` writes A, B, C, the
golden C and run.json, each equal to what NumPy computes. Bad tensors are refused with exit 2 and
a message: a float dtype, a 3-D array, Fortran order, a truncated file, K differing between A and
B, and -m/-n/-k that contradict the shapes.

Usage: tests/npy_checks.py build/<config>/npu   (needs python3-numpy: Debian's /usr/bin/python3)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def run(npu, *args):
    return subprocess.run([npu, *args], capture_output=True, text=True)


def matmul_i32(a, b):
    return (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)  # wraps like the NPU


def check_gemm(npu, tmp, rng, M, N, K, ta, tb, errs):
    a = rng.integers(-32768, 32768, size=(M, K), dtype=np.int16)
    b = rng.integers(-32768, 32768, size=(K, N), dtype=np.int16)
    pa, pb, pc = (os.path.join(tmp, f) for f in ("a.npy", "b.npy", "c.npy"))
    np.save(pa, a.T.copy() if ta else a)
    np.save(pb, b.T.copy() if tb else b)
    opts = ["--trans-a"] * ta + ["--trans-b"] * tb
    p = run(npu, "gemm", "--a", pa, "--b", pb, "--out", pc, "--quiet", "--stall-pct", "5", *opts)
    what = f"gemm {M}x{N}x{K}{' transA' * ta}{' transB' * tb}"
    if p.returncode != 0:
        errs.append(f"{what}: exit {p.returncode}: {p.stdout.strip()} {p.stderr.strip()}")
        return
    c = np.load(pc)
    want = matmul_i32(a, b)
    if c.dtype != np.int32 or c.shape != (M, N) or not np.array_equal(c, want):
        errs.append(f"{what}: C.npy {c.dtype} {c.shape} differs from NumPy's matmul")


def check_save(npu, tmp, rng, errs):
    a = rng.integers(-32768, 32768, size=(9, 20), dtype=np.int16)
    b = rng.integers(-32768, 32768, size=(20, 7), dtype=np.int16)
    np.save(os.path.join(tmp, "sa.npy"), a)
    np.save(os.path.join(tmp, "sb.npy"), b)
    d = os.path.join(tmp, "run1")
    p = run(npu, "gemm", "--a", os.path.join(tmp, "sa.npy"), "--b", os.path.join(tmp, "sb.npy"),
            "--save", d, "--json")
    if p.returncode != 0:
        errs.append(f"--save: exit {p.returncode}: {p.stderr.strip()}")
        return
    want = matmul_i32(a, b)
    got = {f: np.load(os.path.join(d, f)) for f in ("A.npy", "B.npy", "C.npy", "C_golden.npy")}
    if not (np.array_equal(got["A.npy"], a) and np.array_equal(got["B.npy"], b) and
            np.array_equal(got["C.npy"], want) and np.array_equal(got["C_golden.npy"], want)):
        errs.append("--save: A, B, C or C_golden differ from the inputs and NumPy's matmul")
    meta = json.load(open(os.path.join(d, "run.json")))
    if meta.get("workload", {}).get("m") != 9 or meta.get("result") != "PASS" or "rev" not in meta:
        errs.append(f"--save: run.json lacks the run's keys: {list(meta)[:8]}")
    if json.loads(p.stdout)["cycles"] != meta["cycles"]:
        errs.append("--save: run.json and --json disagree on cycles")


# ---- convolutions: NHWC X, W as KH x KW x F x C, dY as B x OH x OW x F (docs/conv.md) ----
def conv_geom(spec, batch):
    C, H, W, F, KH, KW, s, p, d = spec
    OH = (H + 2 * p - d * (KH - 1) - 1) // s + 1
    OW = (W + 2 * p - d * (KW - 1) - 1) // s + 1
    return C, H, W, F, KH, KW, s, p, d, OH, OW


def x_window(xp, kh, kw, s, d, OH, OW):
    """The X pixels tap (kh, kw) meets, B x OH x OW x C (xp: X zero-padded by p)."""
    return xp[:, kh * d: kh * d + s * (OH - 1) + 1: s, kw * d: kw * d + s * (OW - 1) + 1: s, :]


def conv_ref(kernel, spec, batch, x, w, dy):
    C, H, W, F, KH, KW, s, p, d, OH, OW = conv_geom(spec, batch)
    x64 = x.astype(np.int64) if x is not None else None
    w64, dy64 = (w.astype(np.int64) if w is not None else None,
                 dy.astype(np.int64) if dy is not None else None)
    if kernel == "fwd":
        xp, y = np.pad(x64, ((0, 0), (p, p), (p, p), (0, 0))), np.zeros((batch, OH, OW, F), np.int64)
        for kh in range(KH):
            for kw in range(KW):
                y += np.einsum("bhwc,fc->bhwf", x_window(xp, kh, kw, s, d, OH, OW), w64[kh, kw])
        return y.astype(np.int32)
    if kernel == "dx":
        dxp = np.zeros((batch, H + 2 * p, W + 2 * p, C), np.int64)
        for kh in range(KH):
            for kw in range(KW):
                x_window(dxp, kh, kw, s, d, OH, OW)[...] += np.einsum("bhwf,fc->bhwc", dy64, w64[kh, kw])
        return dxp[:, p:p + H, p:p + W, :].astype(np.int32)
    xp, dw = np.pad(x64, ((0, 0), (p, p), (p, p), (0, 0))), np.zeros((KH, KW, F, C), np.int64)
    for kh in range(KH):
        for kw in range(KW):
            dw[kh, kw] = np.einsum("bhwc,bhwf->fc", x_window(xp, kh, kw, s, d, OH, OW), dy64)
    return dw.astype(np.int32)


def check_conv(npu, tmp, rng, errs):
    spec, batch = (8, 9, 9, 4, 3, 3, 2, 1, 1), 2
    C, H, W, F, KH, KW, s, p, d, OH, OW = conv_geom(spec, batch)
    x = rng.integers(-32768, 32768, size=(batch, H, W, C), dtype=np.int16)
    w = rng.integers(-32768, 32768, size=(KH, KW, F, C), dtype=np.int16)
    dy = rng.integers(-32768, 32768, size=(batch, OH, OW, F), dtype=np.int16)
    files = {}
    for name, arr in (("x", x), ("w", w), ("dy", dy)):
        files[name] = os.path.join(tmp, f"conv_{name}.npy")
        np.save(files[name], arr)
    sp = ",".join(map(str, spec))
    for kernel, ins, df in (("fwd", ("x", "w"), []), ("dx", ("dy", "w"), ["--dataflow", "ecoflow"]),
                            ("dw", ("x", "dy"), ["--dataflow", "zeropad"])):
        out, d = os.path.join(tmp, f"conv_{kernel}.npy"), os.path.join(tmp, f"save_{kernel}")
        opts = [a for n in ins for a in (f"--{n}", files[n])]
        pr = run(npu, "conv", "--conv", sp, "--batch", str(batch), "--kernel", kernel, *df, *opts,
                 "--out", out, "--save", d, "--quiet")
        want = conv_ref(kernel, spec, batch, x, w, dy)
        if pr.returncode != 0:
            errs.append(f"conv {kernel}: exit {pr.returncode}: {pr.stderr.strip()}")
            continue
        got = np.load(out)
        name = {"fwd": "Y", "dx": "dX", "dw": "dW"}[kernel]
        if got.dtype != np.int32 or got.shape != want.shape or not np.array_equal(got, want):
            errs.append(f"conv {kernel}: {name} {got.dtype} {got.shape} differs from NumPy's")
        if not np.array_equal(np.load(os.path.join(d, f"{name}_golden.npy")), want):
            errs.append(f"conv {kernel}: --save {name}_golden.npy differs from NumPy's")
    bad = run(npu, "conv", "--conv", sp, "--kernel", "fwd", "--x", files["dy"])
    if bad.returncode != 2 or "the layer needs int16 (1, 9, 9, 8) (B, H, W, C)" not in bad.stderr:
        errs.append(f"conv --x of the wrong shape: exit {bad.returncode}, {bad.stderr.strip()!r}")


def train_ref(x, ws, dy):
    """The step as sw/run/train_run.h defines it: Y_i = X_i W_i, X_{i+1} = Y_i >> 16 (int16), and
    backward from the loss gradient: dW_i = X_i^T dY_i, dX_i = dY_i W_i^T (i >= 1), dY_{i-1} =
    dX_i >> 16 (int16); int64 products wrapped to int32 like the NPU's accumulators."""
    xs, ys = [x], []
    for w in ws:
        ys.append(matmul_i32(xs[-1], w))
        xs.append((ys[-1] >> 16).astype(np.int16))
    dxs, dws = [None] * len(ws), [None] * len(ws)
    for i in range(len(ws) - 1, -1, -1):
        dws[i] = matmul_i32(xs[i].T, dy)
        if i > 0:
            dxs[i] = matmul_i32(dy, ws[i].T)
            dy = (dxs[i] >> 16).astype(np.int16)
    return ys, dxs, dws


def check_train(npu, tmp, rng, errs):
    dims, batch = (24, 40, 9, 16), 12
    x = rng.integers(-32768, 32768, size=(batch, dims[0]), dtype=np.int16)
    ws = [rng.integers(-32768, 32768, size=(dims[i], dims[i + 1]), dtype=np.int16) for i in range(3)]
    dy = rng.integers(-32768, 32768, size=(batch, dims[3]), dtype=np.int16)
    px, pd = os.path.join(tmp, "tx.npy"), os.path.join(tmp, "tdy.npy")
    pw = [os.path.join(tmp, f"tw{i}.npy") for i in range(3)]
    np.save(px, x)
    np.save(pd, dy)
    for p, w in zip(pw, ws):
        np.save(p, w)
    d = os.path.join(tmp, "save_train")
    layers = ",".join(map(str, dims))
    pr = run(npu, "train", "--layers", layers, "--batch", str(batch), "--order", "auto",
             "--x", px, "--w", ",".join(pw), "--dy", pd, "--save", d, "--quiet", "--stall-pct", "5")
    if pr.returncode != 0:
        errs.append(f"train {layers}: exit {pr.returncode}: {pr.stderr.strip()}")
        return
    ys, dxs, dws = train_ref(x, ws, dy)
    want = {"X": x, "dY": dy}
    for i in range(3):
        want.update({f"W{i}": ws[i], f"Y{i}": ys[i], f"dW{i}": dws[i]})
        if i > 0:
            want[f"dX{i}"] = dxs[i]
    for name, arr in want.items():
        got = np.load(os.path.join(d, name + ".npy"))
        if got.dtype != arr.dtype or got.shape != arr.shape or not np.array_equal(got, arr):
            errs.append(f"train: --save {name}.npy {got.dtype} {got.shape} differs from NumPy's")
    for argv, want_msg in ((["--x", pd], "the layer needs int16 (12, 24) (batch, D0)"),
                           (["--w", pw[0]], "1 files for 3 layers"),
                           (["--w", ",".join([pw[1], pw[1], pw[2]])], "(24, 40) (D0, D1)")):
        pr = run(npu, "train", "--layers", layers, "--batch", str(batch), *argv)
        if pr.returncode != 2 or want_msg not in pr.stderr:
            errs.append(f"train {' '.join(argv)}: exit {pr.returncode}, {pr.stderr.strip()!r}, want 2 and '{want_msg}'")


def check_refusals(npu, tmp, errs):
    good = os.path.join(tmp, "g.npy")
    np.save(good, np.ones((4, 4), dtype=np.int16))
    bad = {
        "float": (np.ones((4, 4), dtype=np.float32), "'<f4' is not supported"),
        "int32": (np.ones((4, 4), dtype=np.int32), "dtype int32"),
        "3d": (np.ones((2, 4, 4), dtype=np.int16), "not 2-D"),
        "fortran": (np.asfortranarray(np.ones((4, 3), dtype=np.int16)), "Fortran order"),
        "kdiff": (np.ones((3, 5), dtype=np.int16), "differs from B's"),
    }
    for name, (arr, want) in bad.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, arr)
        p = run(npu, "gemm", "--a", path, "--b", good)
        if p.returncode != 2 or want not in p.stderr or path not in p.stderr:
            errs.append(f"--a {name}: exit {p.returncode}, stderr {p.stderr.strip()!r}, want 2 and '{want}'")
    trunc = os.path.join(tmp, "trunc.npy")
    with open(good, "rb") as f:
        data = f.read()
    with open(trunc, "wb") as f:
        f.write(data[:-3])
    for argv, want in ((["--a", trunc, "--b", good], "truncated data"),
                       (["--a", good, "--b", good, "-m", "5"], "-m 5 conflicts with"),
                       (["--a", good], "--a and --b go together"),
                       (["--a", good, "--b", good, "--save", good], "not a directory")):
        p = run(npu, "gemm", *argv)
        if p.returncode != 2 or want not in p.stderr:
            errs.append(f"gemm {' '.join(argv)}: exit {p.returncode}, stderr {p.stderr.strip()!r}, want 2 and '{want}'")


def main():
    npu = sys.argv[1]
    errs = []
    rng = np.random.default_rng(17)
    with tempfile.TemporaryDirectory() as tmp:
        for M, N, K, ta, tb in ((5, 6, 7, 0, 0), (33, 17, 40, 0, 0), (16, 24, 9, 1, 0),
                                (20, 3, 50, 0, 1), (7, 9, 11, 1, 1)):
            check_gemm(npu, tmp, rng, M, N, K, ta, tb, errs)
        check_save(npu, tmp, rng, errs)
        check_conv(npu, tmp, rng, errs)
        check_train(npu, tmp, rng, errs)
        check_refusals(npu, tmp, errs)
    for e in errs:
        print("FAIL:", e, file=sys.stderr)
    print(f"npy_checks: 5 GEMMs, conv fwd / dX / dW and a 3-layer training step on NumPy tensors, "
          f"--save, 13 refusals; "
          f"{len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
