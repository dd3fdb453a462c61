#!/usr/bin/env python3
"""ref_slice.py - independent brute-force reference of the slicing stage (docs/compiler.md
"Slicing"; acceptance 4 of issue 14).

Re-implements the documented model without the C code: every candidate (3 splits x 2 loop orders
x, for a GEMM, with or without a resident band x the balanced tile sizes of every dim) is checked
against the capacity rules and, when it fits, costed by simulating its loop nest step by step,
bursts counted by walking every DRAM beat of every run; a GEMM step's compute is its FlexSA waves
block by block in the emitter's serpentine order (the split plays no part), plus what they wait for
the instruction fetch while the step's loads stream (fetch_stall; at config tiny's S = 2). A GEMM's resident band (gemm_tiling.h
"Resident band") keeps every K chunk of the input that follows the outermost loop dim in the SPM,
so each of its tiles is read once, the first time the nest meets it. On random conv shapes (and a few GEMMs) it compares, with build/slice_dump (the C
search), the number of candidates visited, of those that fit, and the winner (split, order,
tiles, predicted Q16 cycles, DRAM bytes).

usage: ref_slice.py SLICE_DUMP [--shapes N] [--seed S]     exit 0 when every shape agrees
"""
import itertools
import random
import subprocess
import sys

Q = 16
PAGE = 4096


class Cfg:
    """config small with a quarter of its SPM banks' words and OBUF rows, so that the capacity
    rules cut the candidate space of these small shapes too (sent to slice_dump as a cfg line)"""
    S, banks, bank_words, obuf_rows, max_burst = 8, 4, 256, 64, 16
    dram_bw, latency, burst_cost, outstanding = 32, 30, 4, 4

    def line(self):
        return 'cfg %d %d %d %d %d %d %d %d %d\n' % (self.S, self.banks, self.bank_words, self.obuf_rows,
                                                     self.max_burst, self.dram_bw, self.latency,
                                                     self.burst_cost, self.outstanding)


def cdiv(a, b):
    return -(-a // b)


def q16(num, den):
    return ((num << Q) + den // 2) // den


def constants(cfg, mode):
    B = 4 * cfg.S
    rt = cfg.latency + cfg.burst_cost + 1  # a one-beat read's round trip
    byte = q16(1, min(cfg.dram_bw, B))
    # the credit reads and writes share, per byte: above B bytes a cycle a read and a write beat
    # move in the same cycle (one beat a cycle per port); the bytes-only cost keeps one port
    share = byte if mode == 'noburst' or cfg.dram_bw <= B else (byte * B + cfg.dram_bw // 2) // cfg.dram_bw
    return dict(mode=mode, byte=byte, share=share, burst=q16(cfg.burst_cost, 1),
                fixed=q16(cfg.latency + 4, 1), wave=q16(3 * cfg.S + 8, 1), dfix=q16(cfg.S, 1), drow=q16(1, 2),
                lat_fixed=q16(rt * (cfg.outstanding - 1), cfg.outstanding), window=q16(rt, cfg.outstanding))


# ------------------------------------------------------------------ bursts, walked beat by beat
def walk_run(a, n, B, mx):
    """bursts, beats of one contiguous run: a new burst at the start, after mx beats, at a page."""
    bursts = inb = 0
    b0, b1 = a // B, (a + n - 1) // B
    for b in range(b0, b1 + 1):
        if b == b0 or inb == mx or (b * B) % PAGE == 0:
            bursts += 1
            inb = 0
        inb += 1
    return bursts, b1 - b0 + 1


def view_cost(dims, base, e, B, mx):
    """Transfers of a strided view dims [(count, stride)] outer to inner (inner stride 1):
    contiguous dims merge into the run, the next dim and the outer dims continuing it at the
    same stride are a transfer's rows, the rest enumerate transfers. Returns
    (bursts, beats, bytes, xfers)."""
    dims = [d for d in dims[:-1] if d[0] > 1] + [dims[-1]]
    run = dims[-1][0] * e
    i = len(dims) - 2
    while i >= 0 and dims[i][1] * e == run:
        run *= dims[i][0]
        i -= 1
    rows, stride = 1, 0
    if i >= 0:
        rows, stride = dims[i][0], dims[i][1] * e
        i -= 1
        while i >= 0 and dims[i][1] * e == rows * stride:
            rows *= dims[i][0]
            i -= 1
    outer = dims[:i + 1]
    tot = [0, 0, 0, 0]
    for idx in itertools.product(*[range(c) for c, _ in outer]):
        a = base + e * sum(j * s for j, (_, s) in zip(idx, outer))
        tot[3] += 1
        runs = [(a, rows * run)] if rows == 1 or stride == run else [(a + r * stride, run) for r in range(rows)]
        for ra, rn in runs:
            nb, nbeat = walk_run(ra, rn, B, mx)
            tot[0] += nb
            tot[1] += nbeat
            tot[2] += rn
    return tuple(tot)


# ------------------------------------------------------------------ problems
class Problem:
    """dims, units, reduction dims, loop orders, tensors: (kind, ebytes, axes) with axes
    (dim, window, kernel extent, limit); kinds 'mat' (row, col), 'nhwc' (n, h, w, c), 'kfc' (f, c)."""

    def __init__(self, cfg, kind, conv=None, mnk=None):
        self.cfg, self.kind, self.conv = cfg, kind, conv
        self.S, self.L, self.B = cfg.S, 2 * cfg.S, 4 * cfg.S
        if kind == 'gemm':
            M, N, K = mnk
            self.ext, self.unit, self.red, self.T = [M, N, K], [self.L] * 3, {2}, 1
            self.orders = [[0, 1, 2], [1, 0, 2]]
            self.tensors = [('mat', 2, [(0, 'p', 0, M), (2, 'p', 0, K)]),
                            ('mat', 2, [(2, 'p', 0, K), (1, 'p', 0, N)]),
                            ('mat', 4, [(0, 'p', 0, M), (1, 'p', 0, N)])]
            return
        C, H, W, F, KH, KW, st, p, d, nb = conv
        OH = (H + 2 * p - d * (KH - 1) - 1) // st + 1
        OW = (W + 2 * p - d * (KW - 1) - 1) // st + 1
        self.T = KH * KW
        rows, cols = (H, W) if kind == 'dx' else (OH, OW)
        self.ext, self.unit = [nb, rows, cols, F, C], [1, 1, 1, self.L, self.L]

        def nhwc(e, win, h, w, chd, c):
            return ('nhwc', e, [(0, 'p', 0, nb), (1, win, KH, h), (2, win, KW, w), (chd, 'p', 0, c)])
        kfc = lambda e: ('kfc', e, [(3, 'p', 0, F), (4, 'p', 0, C)])
        if kind == 'fwd':
            self.red, self.orders = {4}, [[0, 1, 2, 3, 4], [3, 0, 1, 2, 4]]
            self.tensors = [nhwc(2, 'f', H, W, 4, C), kfc(2), nhwc(4, 'p', OH, OW, 3, F)]
        elif kind == 'dx':
            self.red, self.orders = {3}, [[0, 1, 2, 4, 3], [4, 0, 1, 2, 3]]
            self.tensors = [nhwc(2, 'x', OH, OW, 3, F), kfc(2), nhwc(4, 'p', H, W, 4, C)]
        else:
            self.red, self.orders = {0, 1, 2}, [[3, 4, 0, 1, 2], [4, 3, 0, 1, 2]]
            self.tensors = [nhwc(2, 'p', OH, OW, 3, F), nhwc(2, 'f', H, W, 4, C), kfc(4)]

    def axis_range(self, ax, o, s):
        dim, win, kk, lim = ax
        lo, hi = o[dim], o[dim] + s[dim]
        if win != 'p':
            st, p, d = self.conv[6], self.conv[7], self.conv[8]
            if win == 'f':
                lo, hi = lo * st - p, (hi - 1) * st + (kk - 1) * d - p + 1
            else:
                lo, hi = cdiv(lo + p - (kk - 1) * d, st), (hi - 1 + p) // st + 1
        lo, hi = max(lo, 0), min(hi, lim)
        return lo, max(hi - lo, 0)

    def tile_cost(self, t, o, s):
        kind, e, axes = self.tensors[t]
        rng = [self.axis_range(a, o, s) for a in axes]
        if any(n <= 0 for _, n in rng):
            return (0, 0, 0, 0)
        lim = [a[3] for a in axes]
        if kind == 'mat':
            dims = [(rng[0][1], lim[1]), (rng[1][1], 1)]
            base = rng[0][0] * lim[1] + rng[1][0]
        elif kind == 'nhwc':
            strides = [lim[1] * lim[2] * lim[3], lim[2] * lim[3], lim[3], 1]
            dims = [(n, st) for (_, n), st in zip(rng, strides)]
            base = sum(lo * st for (lo, _), st in zip(rng, strides))
        else:
            dims = [(self.T, lim[0] * lim[1]), (rng[0][1], lim[1]), (rng[1][1], 1)]
            base = rng[0][0] * lim[1] + rng[1][0]
        return view_cost(dims, base * e, e, self.B, self.cfg.max_burst)

    def fits(self, t, ntiles):
        cfg, L, B, T = self.cfg, self.L, self.B, self.T
        if self.kind == 'gemm':
            tm = t[0] if self.ext[0] < L else cdiv(t[0], L) * L
            kb, nb = cdiv(t[2], L), cdiv(t[1], L)
            bw = cfg.bank_words
            # A's two buffers in bank 0, or split over banks 0 and 3
            a_fits = 2 * tm * kb <= bw or (cfg.banks >= 4 and tm * kb <= bw)
            return cfg.banks >= 3 and a_fits and 2 * kb * L * nb <= bw and 4 * tm * nb <= bw \
                and tm * nb <= cfg.obuf_rows
        C, H, W, F, KH, KW, st, p, d, nb = self.conv
        b, r, c, f, ch = t
        pix = b * r * c
        hp, wp = (r - 1) * st + (KH - 1) * d + 1, (c - 1) * st + (KW - 1) * d + 1
        obuf = cfg.obuf_rows
        if self.kind == 'fwd':
            words = [b * hp * wp * cdiv(ch, L), T * ch * cdiv(f, L), pix * cdiv(4 * f, B)]
            orows = pix * cdiv(f, L)
        elif self.kind == 'dx':
            words = [b * (r + (KH - 1) * d) * (c + (KW - 1) * d) * cdiv(f, L), T * f * cdiv(ch, L),
                     pix * cdiv(4 * ch, B)]
            orows = pix * cdiv(ch, L)
        else:
            words = [pix * cdiv(f, L), b * hp * wp * cdiv(ch, L), T * f * cdiv(4 * ch, B)]
            orows, obuf = T * cdiv(ch, L) * f, 2 * obuf
        need = 2
        for ti, (_, _, axes) in enumerate(self.tensors):
            grid = 1
            for a in axes:
                grid *= ntiles[a[0]]
            need += (1 if grid == 1 else 2) * words[ti]
        return orows <= obuf and need <= cfg.banks * cfg.bank_words

    def band_fits(self, t, band_in, cband=False):
        """Capacity of the GEMM's resident band of input band_in (0: A, 1: B): its k chunks (at
        most 16), each of the converted plan's chunk words, whole chunks packed from the start of
        the operand's own bank (0: A, 1: B), then in the banks the plain plan leaves free (3 up).
        With the C band (A's band, m-major, more than one m-tile and n-tile) C's two buffers of Mt rows x 2
        words per 2S columns of all of N sit from bank 2 on, and the free banks start above them.
        With A's double buffer split over banks 0 and 3 only a one-chunk band (no C band) fits."""
        cfg, L = self.cfg, self.L
        tm = t[0] if self.ext[0] < L else cdiv(t[0], L) * L
        kb, nb = cdiv(t[2], L), cdiv(t[1], L)
        chunks = cdiv(self.ext[2], kb * L)
        words = tm * kb if band_in == 0 else kb * L * nb
        free0 = 3
        if 2 * tm * kb > cfg.bank_words:  # A split over banks 0 and 3: no C band, no chunk buffers
            return not cband and chunks == 1 and words <= cfg.bank_words
        if cband:
            free0 = cdiv(2 * cfg.bank_words + 2 * tm * 2 * cdiv(self.ext[1], L), cfg.bank_words)
            if cdiv(self.ext[1], nb * L) < 2 or t[0] >= self.ext[0] or free0 > cfg.banks:
                return False
        if chunks > 16 or words > cfg.bank_words:
            return False
        if chunks == 1:  # the band stays in the double buffer
            return True
        per_bank = cfg.bank_words // words
        return chunks <= per_bank * (1 + max(0, cfg.banks - free0))

    def step_gemm(self, s):
        if self.kind == 'gemm':
            return s[0], s[1], 1, s[2], s[0] * cdiv(s[1], self.L)
        pix = s[0] * s[1] * s[2]
        if self.kind == 'fwd':
            return pix, s[3], self.T, s[4], pix * cdiv(s[3], self.L)
        if self.kind == 'dx':
            return pix, s[4], self.T, s[3], pix * cdiv(s[4], self.L)
        return s[3], s[4], self.T, pix, self.T * cdiv(s[4], self.L) * s[3]


def unit(cfg, a):
    """the SPM unit (bank, sub-bank) of word a: the sub-bank is the XOR of the codes 1, 2, 3 of
    the set in-bank address bits (bit i: code i % 3 + 1), rtl/npu_spm.v"""
    sub, i, x = 0, 0, a % cfg.bank_words
    while x:
        if x & 1:
            sub ^= i % 3 + 1
        x, i = x >> 1, i + 1
    return (a // cfg.bank_words, sub)


def code(v):
    """the sub-bank code of an offset, carries ignored (the drain engine's pair choice)"""
    return unit(Cfg, v % (1 << 16))[1] if v else 0


def drain_stalls(cfg, base, m, skinny, stride):
    """cycles a DRAIN of m rows into words base + r * stride loses to sub-bank conflicts: its
    pairs of OBUF rows, split (r, r + h) or adjacent (2i, 2i + 1) as the RTL picks them, each
    taking as many cycles as the most of its words in one unit"""
    rows = cdiv(m, 2) if skinny else m
    split, hi, h = (rows if skinny else 0), m - rows, cdiv(rows, 2)
    x, ya, ys = (code(split * stride) if skinny else 1), code(stride), code(h * stride)
    ok = (stride != 0 and split >= rows) if skinny else stride >= 2
    two = ok and ((x and ys and ys != x) or not (x and ya and ya != x))
    lost = 0
    for i in range(h):
        pair = [i, i + h] if two else [2 * i, 2 * i + 1]
        words = []
        for r in pair:
            if r >= rows:
                continue
            words.append(base + r * stride)
            if not skinny:
                words.append(base + r * stride + 1)
            elif r < hi:
                words.append(base + (r + split) * stride)
        units = [unit(cfg, w) for w in words]
        lost += max(units.count(u) for u in units) - 1
    return lost


def gemm_drain_stalls(pb, t, s):
    """Q16: the C staging buffers (bank 2, Mt x 2nb words each, n-block j at word 2j), the mean
    of the two; FlexSA's skinny DRAIN for an n-block of at most S columns"""
    L, cfg = pb.L, pb.cfg
    tm = t[0] if pb.ext[0] < L else cdiv(t[0], L) * L
    nb = cdiv(t[1], L)
    lost = 0
    for buf in range(2):
        for j in range(cdiv(s[1], L)):
            lost += drain_stalls(cfg, 2 * cfg.bank_words + buf * 2 * tm * nb + 2 * j, s[0],
                                 s[1] - j * L <= pb.S, 2 * nb)
    return lost << (Q - 1)


def compute(k, S, split, m, n, taps, kd):
    blk, rows = cdiv(n, S), m
    if split == 0:
        blk = cdiv(blk, 4)
    elif split == 1:
        rows = cdiv(m, 4)
    else:
        blk, rows = cdiv(blk, 2), cdiv(m, 2)
    r = rows << Q
    return taps * cdiv(kd, S) * blk * max(r, (r + k['wave']) // 2)  # a weight bank's turnaround


# FlexSA's modes (Algorithm 1), sub-arrays and the injector's entry offsets (docs/datapath.md 2)
PARTS = {'FW': 1, 'HSW': 2, 'VSW': 2, 'ISW': 4}
OFFSETS = {'FW': (0, 1, 1, 2), 'HSW': (0, 1, 0, 1), 'VSW': (0, 0, 1, 1), 'ISW': (0, 0, 0, 0)}


def flexsa_mode(S, n, k):
    return {(True, True): 'FW', (True, False): 'HSW', (False, True): 'VSW', (False, False): 'ISW'}[(n > S, k > S)]


def wave_sets(md, m):
    """(first row, rows) of each set of an m-row wave (docs/isa.md): halves, quarters by halves"""
    ha = cdiv(m, 2)
    hb = m - ha
    qa, qb = cdiv(ha, 2), cdiv(hb, 2)
    return {'FW': [(0, m)], 'HSW': [(0, ha), (ha, hb)], 'VSW': [(0, ha), (ha, hb)],
            'ISW': [(0, qa), (qa, ha - qa), (ha, qb), (ha + qb, hb - qb)]}[md]


def collisions(cfg, md, m, base, stride):
    """cycles a wave's slots lose to SPM sub-bank collisions: slot t reads row t of every set
    in a cycle, rows in one unit one a cycle"""
    sets, lost = wave_sets(md, m), 0
    for t in range(sets[0][1]):
        units = [unit(cfg, (base + (r0 + t) * stride) % (cfg.banks * cfg.bank_words)) for r0, rows in sets if t < rows]
        lost += max(units.count(u) for u in units) - 1
    return lost


def gemm_compute(k, S, m, n, kd, cfg):
    """a GEMM step under FlexSA as its emitter runs it: every 2S x 2S block a wave of ceil(m /
    parts) rows, at least the LDW's S read steps + 1 (FlexSA's LDWs load the two core pairs in
    parallel, a 2S-deep tile in S steps too; a bank turns around in a cycle); the blocks in the
    serpentine order (k-block rows, odd ones backwards), each mode change S x the largest offset
    difference of the two modes, the mean of both directions, plus a switch cycle; the SPM
    sub-bank collisions of the HSW, VSW and ISW waves' sets"""
    F, t, modes = 2 * S, 0, []
    kbs, nbs = list(range(0, kd, F)), list(range(0, n, F))
    for i, k0 in enumerate(kbs):
        for n0 in (nbs if i % 2 == 0 else nbs[::-1]):
            md = flexsa_mode(S, min(F, n - n0), min(F, kd - k0))
            r = cdiv(m, PARTS[md]) << Q
            t += max(r, (S + 1) << Q)  # an LDW reads its rows, S steps
            modes.append(md)
            if md != 'FW':  # A's rows cdiv(kd, 2S) words apart from 0 or m rows on: the mean
                w = cdiv(kd, F)
                t += sum(collisions(cfg, md, m, b * m * w + i, w) for b in (0, 1)) << Q >> 1
    for a, b in zip(modes, modes[1:]):
        if a != b:
            gap = lambda x, y: max(p - q for p, q in zip(OFFSETS[x], OFFSETS[y]))
            t += ((gap(a, b) + gap(b, a)) * S << Q) // 2 + (1 << Q)
    return t


def xfer(k, b, B, store=False):
    """(cost, shared-credit time): a read is bus- or latency-bound, a write bus-bound; the credit
    part is the beats at the shared rate plus the bursts (a store's with its fixed cost)"""
    bursts, beats, nbytes, xfers = b
    if k['mode'] == 'noburst':
        return nbytes * k['byte'], nbytes * k['byte']
    bus = beats * B * k['byte'] + bursts * k['burst']
    sh = beats * B * k['share'] + bursts * k['burst']
    cost = xfers * k['fixed'] + bus
    if not store:
        cost = max(cost, xfers * k['lat_fixed'] + bursts * k['window'])
    else:
        sh += cost - bus
    return cost, sh


def fetch_stall(cfg, k, n, kd, E, Lb, Lnb):
    """a GEMM step's waves waiting for their instructions while its loads stream: the fetch keeps
    two bursts of max_burst beats in flight, each behind up to `outstanding` of the loads' bursts
    (the DRAM returns reads in order), so it brings 2 max_burst beats per round trip (latency + its
    burst + the loads' bursts ahead); an LDW and a WAVE (16 bytes each) per 2S x 2S (k, n) block"""
    if k['mode'] == 'noburst' or not Lnb or not E:
        return 0
    B, L = 4 * cfg.S, 2 * cfg.S
    ins = 2 * cdiv(n, L) * cdiv(kd, L)
    R = (cfg.latency << Q) + cfg.max_burst * B * k['byte'] + k['burst'] + Lb * min(Lnb, cfg.outstanding) // Lnb
    sup = ((2 * cfg.max_burst * B // 16) * E << Q) // (R * ins)  # fetch supply over the waves' demand
    return 0 if sup >= 1 << Q else (min(Lb, E) * ((1 << Q) - sup)) >> Q


def simulate(pb, k, t, split, order, band=None, cband=False):
    """Walk the loop nest: T = L_0 + sum max(E_i, L_{i+1} + Sc_{i-1}, Lb_{i+1} + Sb_{i-1},
    S_{i-1} + Lc_{i+1}, D_{i-1}) + D_{n-1} + S_{n-1}; DRAM bytes (Lb, Sb: the shared credit's part;
    Lc, Sc: the burst costs, which take the whole credit, so with two ports (above a beat a cycle)
    the other port waits them out). A GEMM input is loaded
    unless the tile two steps back is the same (its double buffer of that parity holds it). With
    the C band, an m-tile's whole rows are stored after its last n-tile, the store spread evenly
    over that step and the next m-tile's other steps (all that is left at the last step)."""
    nd = len(pb.ext)
    ntiles = [cdiv(e, x) for e, x in zip(pb.ext, t)]
    loop = pb.orders[order]
    deps = [[a[0] for a in axes] for _, _, axes in pb.tensors]
    cache, prev, prev2, steps, nbytes, seen = {}, [None, None], [None, None], [], 0, set()
    pend = [0, 0, 0, 0]  # the C band's store still to spread: cost, credit part, burst costs, pieces
    two = k['mode'] == 'burst' and k['share'] < k['byte']
    cross = lambda bursts: bursts * k['burst'] if two else 0
    nsteps = 1
    for d in range(nd):
        nsteps *= ntiles[d]
    for idx_in_order in itertools.product(*[range(ntiles[d]) for d in loop]):
        idx = [0] * nd
        for pos, d in enumerate(loop):
            idx[d] = idx_in_order[pos]
        o = [idx[d] * t[d] for d in range(nd)]
        s = [min(t[d], pb.ext[d] - o[d]) for d in range(nd)]

        def cost(ti):
            key = (ti, tuple(idx[d] for d in deps[ti]))
            if key not in cache:
                cache[key] = pb.tile_cost(ti, o, s)
            return cache[key]
        L = Lb = Lnb = Sc = 0
        for ti in (0, 1):
            key = tuple(idx[d] for d in deps[ti])
            if ti == band:  # resident: a tile already read is still in the SPM
                load = key not in seen
                seen.add(key)
            elif pb.kind == 'gemm':  # the emitter's double buffers alternate
                load = key != prev2[ti]
            else:
                load = key != prev[ti]
            if load:
                b = cost(ti)
                c, bus = xfer(k, b, pb.B)
                L, Lb, Lnb = L + c, Lb + bus, Lnb + b[0]
                nbytes += b[2]
            prev2[ti] = prev[ti]
            prev[ti] = key
        m, n, taps, kd, orows = pb.step_gemm(s)
        E = gemm_compute(k, pb.S, m, n, kd, pb.cfg) if pb.kind == 'gemm' else compute(k, pb.S, split, m, n, taps, kd)
        if pb.kind == 'gemm':
            E += fetch_stall(pb.cfg, k, n, kd, E, Lb, Lnb)
        Sv = Sb = D = 0
        if all(idx[d] == ntiles[d] - 1 for d in pb.red):
            drain = k['dfix'] + orows * k['drow'] + (gemm_drain_stalls(pb, t, s) if pb.kind == 'gemm' else 0)
            if pb.kind == 'gemm':  # the drain engine, beside the next step's waves
                D = drain
            else:
                E += drain
            if not cband:
                b = cost(2)
                Sv, Sb = xfer(k, b, pb.B, store=True)
                Sc = cross(b[0])
                nbytes += b[2]
            elif idx[1] == ntiles[1] - 1:  # the m-tile's band: all of N
                ob, sb = list(o), list(s)
                ob[1], sb[1] = 0, pb.ext[1]
                b = pb.tile_cost(2, ob, sb)
                pend = list(xfer(k, b, pb.B, store=True)) + [cross(b[0]), ntiles[1] * ntiles[2]]
                nbytes += b[2]
        if cband and pend[3]:
            last = len(steps) == nsteps - 1
            n = 1 if last else pend[3]
            Sv, Sb, Sc = pend[0] // n, pend[1] // n, pend[2] // n
            pend = [pend[0] - Sv, pend[1] - Sb, pend[2] - Sc, 0 if last else pend[3] - 1]
        steps.append((L, Lb, E, Sv, D, Sb, cross(Lnb), Sc))
    T = steps[0][0]
    for i, (L, Lb, E, Sv, D, Sb, Lc, Sc) in enumerate(steps):
        Lnext, Lbnext, Lcnext = (steps[i + 1][0], steps[i + 1][1], steps[i + 1][6]) if i + 1 < len(steps) else (0, 0, 0)
        Sprev, Dprev, Sbprev, Scprev = steps[i - 1][3:6] + (steps[i - 1][7],) if i > 0 else (0, 0, 0, 0)
        # loads in turn; the store on its own port and with them on the shared credit (each port
        # waiting out the other's burst costs); a drain beside
        T += max(E, Lnext + Scprev, Lbnext + Sbprev, Sprev + Lcnext, Dprev)
    return T + steps[-1][4] + steps[-1][3], nbytes


def tile_opts(ext, u):
    nb = cdiv(ext, u)
    return sorted({min(ext, cdiv(nb, n) * u) for n in range(1, nb + 1)}, reverse=True)


def search(pb, k):
    opts = [tile_opts(e, u) for e, u in zip(pb.ext, pb.unit)]
    bands = (0, 1, 2) if pb.kind == 'gemm' else (0,)  # none, the input's band, with C's band
    visited = fitting = 0
    best = None
    for index, (split, order, banded, *t) in enumerate(itertools.product(range(3), range(2), bands, *opts)):
        visited += 1
        ntiles = [cdiv(e, x) for e, x in zip(pb.ext, t)]
        # the band is that of the input whose tiles follow the outermost loop dim
        band = ([ti for ti in (0, 1) if pb.orders[order][0] in [a[0] for a in pb.tensors[ti][2]]][0]
                if banded else None)
        cband = banded == 2
        if cband and pb.orders[order][0] != 0:  # the C band: m outermost
            continue
        if not pb.fits(t, ntiles) or (banded and not pb.band_fits(t, band, cband)):
            continue
        fitting += 1
        cyc, nbytes = simulate(pb, k, t, split, order, band, cband)
        key = (cyc, nbytes, index)
        if best is None or key < best[0]:
            best = (key, split, order, 3 if cband else 0 if band is None else band + 1, t)
    return visited, fitting, best


def random_conv(rng):
    while True:
        KH, KW = rng.choice([1, 2, 3]), rng.choice([1, 2, 3])
        st, p, d = rng.choice([1, 1, 2]), rng.choice([0, 1]), rng.choice([1, 1, 2])
        H, W = rng.randint(3, 8), rng.randint(3, 8)
        conv = (rng.randint(1, 40), H, W, rng.randint(1, 40), KH, KW, st, p, d, rng.randint(1, 2))
        if H + 2 * p >= d * (KH - 1) + 1 and W + 2 * p >= d * (KW - 1) + 1:
            return conv


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    nshapes, seed = 21, 14
    args = sys.argv[2:]
    for i, a in enumerate(args):
        if a == '--shapes':
            nshapes = int(args[i + 1])
        if a == '--seed':
            seed = int(args[i + 1])
    rng = random.Random(seed)
    cfg = Cfg()
    # the same search at 64 B/cycle, above a beat a cycle (B = 32): a read and a write move in the
    # same cycle, the stores on their own port (the shared credit's part, constants' share)
    wide = Cfg()
    wide.dram_bw = 64
    queries = []
    for i in range(nshapes):
        queries.append((cfg, 'conv', 'burst' if i % 3 else 'noburst', ['fwd', 'dx', 'dw'][i % 3], random_conv(rng)))
    for i, mnk in enumerate([(100, 40, 33), (300, 5, 5), (64, 200, 80), (1024, 64, 16), (200, 96, 48),
                             (48, 160, 96), (256, 64, 40), (96, 120, 200)]):
        queries.append((cfg, 'gemm', 'noburst' if i == 4 else 'burst', 'gemm', mnk))
    for i, mnk in enumerate([(300, 5, 5), (1024, 64, 16), (200, 96, 48), (96, 120, 200)]):
        queries.append((wide, 'gemm', 'noburst' if i == 2 else 'burst', 'gemm', mnk))
    for i in range(3):
        queries.append((wide, 'conv', 'burst', ['fwd', 'dx', 'dw'][i], random_conv(rng)))
    # config tiny's array and DRAM (S = 2, 8 B/cycle, 8 reads in flight): its waves are short
    # enough that the instruction fetch can starve them while long loads stream (fetch_stall)
    tiny = Cfg()
    tiny.S, tiny.bank_words, tiny.obuf_rows, tiny.dram_bw, tiny.outstanding = 2, 2048, 64, 8, 8
    for mnk in [(64, 24, 40), (36, 12, 90), (48, 24, 72)]:  # the first two pick otherwise without it
        queries.append((tiny, 'gemm', 'burst', 'gemm', mnk))
    text, last = '', None
    for q in queries:
        if q[0] is not last:
            text, last = text + q[0].line(), q[0]
        text += 'gemm %s %d %d %d\n' % ((q[2],) + q[4]) if q[1] == 'gemm' else \
            'conv %s %s %s\n' % (q[2], q[3], ' '.join(map(str, q[4])))
    out = subprocess.run([sys.argv[1]], input=text, capture_output=True, text=True, check=True).stdout.split('\n')
    bad = 0
    for (qc, *q), line in zip(queries, out):
        pb = Problem(qc, q[2], conv=q[3] if q[0] == 'conv' else None, mnk=q[3] if q[0] == 'gemm' else None)
        visited, fitting, best = search(pb, constants(qc, q[1]))
        want = 'visited %d fitting %d' % (visited, fitting)
        if best:
            want += ' best %d %d %d %s %d %d' % (best[1], best[2], best[3], ','.join(map(str, best[4])),
                                                 best[0][0], best[0][1])
        w = line.split()
        got = ' '.join(w[0:4] + w[6:13]) if w and w[0] == 'visited' else line
        ok = got == want
        bad += not ok
        print('%s %-5s %-7s %-40s %s' % ('ok ' if ok else 'BAD', q[2], q[1], q[3], want if ok else
                                         '\n    C:   %s\n    ref: %s' % (got, want)))
    print('ref_slice: %d of %d shapes agree (visited, fitting, winner with its band, cycles, bytes)' %
          (len(queries) - bad, len(queries)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
