#!/usr/bin/env python3
"""FlexTrain synthesis report (issue 7): reads the Yosys JSON netlists written by
constraints/synth.sh and prints / writes per-module area, flip-flops, multipliers, memory bits,
a hierarchical logic-depth analysis, and the FlexSA overhead comparison.

  synth_report.py split NJOBS OUTDIR COARSE.json...    partition the first netlist's modules for
                                                       parallel gate mapping (OUTDIR/fine_<i>.ys),
                                                       write every distinct $mul to OUTDIR/mulstd.v
  synth_report.py report --config NAME --dir DIR ...   tables (stdout) + CSV/JSON in DIR

Units and models are documented in constraints/README.md. Python 3 standard library only.
"""
import argparse
import csv
import json
import math
import os
import re
import sys
from collections import defaultdict

# --------------------------------------------------------------------------------- area model
# NAND2 equivalents (GE): X1 cell areas of the open Nangate 45 nm library divided by NAND2_X1
# (0.798 um^2). ANDNOT/ORNOT (no Nangate cell) are costed like AND2/OR2.
GATE_GE = {
    '$_BUF_': 1.000, '$_NOT_': 0.667,
    '$_NAND_': 1.000, '$_NOR_': 1.000, '$_AND_': 1.333, '$_OR_': 1.333,
    '$_ANDNOT_': 1.333, '$_ORNOT_': 1.333, '$_XOR_': 2.000, '$_XNOR_': 2.000,
    '$_MUX_': 2.333, '$_NMUX_': 2.333,
    '$_AOI3_': 1.333, '$_OAI3_': 1.333, '$_AOI4_': 1.667, '$_OAI4_': 1.667,
}
FF_GE = 5.667          # DFF_X1
FF_EN_GE = 2.333       # + MUX2 for a clock enable
FF_SRST_GE = 1.333     # + AND2 for a synchronous reset/set
FF_ARST_GE = 1.000     # DFFR_X1 - DFF_X1 for an asynchronous reset/set
MEM_GE_PER_BIT = 1.0   # only for "NPU area incl. memories" (SRAM-macro placeholder, see README)
WEIGHT_TABLE = dict(GATE_GE, FF=FF_GE, FF_enable=FF_EN_GE, FF_sync_reset=FF_SRST_GE,
                    FF_async_reset=FF_ARST_GE, memory_bit_placeholder=MEM_GE_PER_BIT)

DATAPATH = {'npu_pe', 'npu_core', 'npu_flexsa', 'npu_obuf', 'npu_spm', 'npu_fifo'}


def is_ff(t):
    return (t.startswith('$_DFF') or t.startswith('$_SDFF') or t.startswith('$_ALDFF')
            or t.startswith('$_DFFSR'))


def is_latch(t):
    return t.startswith('$_DLATCH') or t.startswith('$_SR_') or t in ('$dlatch', '$adlatch',
                                                                        '$dlatchsr', '$sr')


def ff_ge(t):
    """$_DFF_P_, $_DFFE_PP_, $_DFF_PN0_ (async), $_SDFFE_PN0P_, $_SDFFCE_PP0P_, $_DFFSR_PNN_ ..."""
    kind, _, pol = t.strip('$_').partition('_')
    pol = pol.rstrip('_')
    ge = FF_GE
    if kind in ('DFFE', 'SDFFE', 'SDFFCE', 'DFFSRE', 'ALDFFE'):
        ge += FF_EN_GE
    if kind.startswith('SDFF'):
        ge += FF_SRST_GE
    elif kind.startswith('DFFSR'):
        ge += 2 * FF_ARST_GE
    elif kind in ('DFF', 'DFFE') and len(pol) >= (3 if kind == 'DFF' else 4):
        ge += FF_ARST_GE
    return ge


def pint(v):
    """Yosys JSON parameter (binary string or int) -> int."""
    if isinstance(v, int):
        return v
    v = v.strip()
    if v and set(v) <= set('01'):
        return int(v, 2)
    try:
        return int(v)
    except ValueError:
        return 0


def base_name(mod):
    """'$paramod$<hash>\\npu_fifo' / '$paramod\\npu_core\\S=..' / 'npu_pe' -> 'npu_fifo' etc."""
    if mod.startswith('$paramod'):
        parts = mod.split('\\')
        return parts[1] if len(parts) > 1 else mod
    return mod.lstrip('\\')


def load_modules(paths):
    """Merge JSON netlists written by several Yosys runs (each run maps some modules and keeps
    the others as blackboxes)."""
    mods = {}
    for p in paths:
        with open(p) as f:
            d = json.load(f)
        for n, m in d['modules'].items():
            bb = str(m.get('attributes', {}).get('blackbox', '0')).strip('0') != ''
            if bb:
                mods.setdefault(n, None)
            else:
                mods[n] = m
    used = {c['type'] for m in mods.values() if m for c in m['cells'].values()}
    missing = [n for n, m in mods.items() if m is None and n in used]
    for n in [n for n, m in mods.items() if m is None]:
        del mods[n]
    if missing:
        sys.exit('synth_report: modules never mapped: ' + ', '.join(missing))
    return mods


def find_top(mods, want):
    for n in mods:
        if base_name(n) == want:
            return n
    sys.exit('synth_report: top %s not found' % want)


# --------------------------------------------------------------------------------- split
def mod_weight(m):
    w = 0
    for c in m['cells'].values():
        t, p = c['type'], c.get('parameters', {})
        if t == '$mul':
            w += pint(p.get('A_WIDTH', 1)) * pint(p.get('B_WIDTH', 1)) * 2
        elif t in ('$shift', '$shiftx', '$shl', '$shr', '$sshl', '$sshr'):
            w += pint(p.get('Y_WIDTH', 1)) * max(1, pint(p.get('B_WIDTH', 1))) * 2
        elif t in ('$add', '$sub', '$alu', '$lt', '$le', '$gt', '$ge', '$macc'):
            w += 4 * max(pint(p.get('Y_WIDTH', 1)), pint(p.get('A_WIDTH', 1)))
        elif t == '$pmux':
            w += pint(p.get('WIDTH', 1)) * pint(p.get('S_WIDTH', 1))
        elif t == '$mem_v2':
            w += 10
        elif 'WIDTH' in p:
            w += pint(p['WIDTH'])
        elif 'Y_WIDTH' in p:
            w += pint(p['Y_WIDTH'])
        else:
            w += 1
    return w


def yosys_pattern(name):
    """A Yosys selection pattern matching exactly this module name ('?' for punctuation)."""
    return ''.join(ch if (ch.isalnum() or ch in '_$') else '?' for ch in name)


def mul_signature(c):
    p = c['parameters']
    a = c['connections']['A']
    b = c['connections']['B']
    sa = ''.join('v' if isinstance(x, int) else str(x) for x in a)
    sb = ''.join('v' if isinstance(x, int) else str(x) for x in b)
    return (pint(p['A_SIGNED']), pint(p['B_SIGNED']), sa, sb, pint(p['Y_WIDTH']))


def mul_label(sig):
    asg, bsg, sa, sb, yw = sig
    return '%s%dx%s%d>%d' % ('s' if asg else 'u', sa.count('v'), 's' if bsg else 'u',
                             sb.count('v'), yw)


def mul_verilog(idx, sig):
    asg, bsg, sa, sb, yw = sig

    def vec(name, pat):
        # pat is LSB first (Yosys JSON bit order); Verilog concatenation is MSB first
        n, parts = 0, []
        for ch in pat:
            if ch == 'v':
                parts.append('%s_v[%d]' % (name, n))
                n += 1
            else:
                parts.append("1'b%s" % (ch if ch in '01' else '0'))
        return n, '{' + ', '.join(reversed(parts)) + '}'

    na, ea = vec('a', sa)
    nb, eb = vec('b', sb)
    sgn = lambda s: 'signed ' if s else ''
    lines = ['module synth_mulstd_%d (' % idx]
    ports = []
    if na:
        ports.append('    input  wire [%d:0] a_v' % (na - 1))
    if nb:
        ports.append('    input  wire [%d:0] b_v' % (nb - 1))
    ports.append('    output wire [%d:0] y' % (yw - 1))
    lines.append(',\n'.join(ports))
    lines.append(');')
    lines.append('    wire %s[%d:0] a = %s;' % (sgn(asg), len(sa) - 1, ea))
    lines.append('    wire %s[%d:0] b = %s;' % (sgn(bsg), len(sb) - 1, eb))
    lines.append('    assign y = a * b;')
    lines.append('endmodule')
    return '\n'.join(lines) + '\n'


def cmd_split(args):
    with open(args.coarse[0]) as f:
        mods = json.load(f)['modules']
    mods = {n: m for n, m in mods.items()
            if str(m.get('attributes', {}).get('blackbox', '0')).strip('0') == ''}
    names = sorted(mods, key=lambda n: -mod_weight(mods[n]))
    bins = [[0, []] for _ in range(args.njobs)]
    for n in names:          # longest-processing-time-first partition
        b = min(bins, key=lambda x: x[0])
        b[0] += mod_weight(mods[n])
        b[1].append(n)
    gates = 'AND,NAND,OR,NOR,XOR,XNOR,ANDNOT,ORNOT,MUX,AOI3,OAI3,AOI4,OAI4'
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'synth_fine.ys')) as f:
        tmpl = f.read()
    for i, (w, own) in enumerate(bins):
        other = [n for n in mods if n not in own]
        bb = ('blackbox ' + ' '.join(yosys_pattern(n) for n in other)) if other else ''
        with open(os.path.join(args.outdir, 'fine_%d.ys' % i), 'w') as f:
            f.write('# generated by synth_report.py split: modules %s (weight %d)\n'
                    % (', '.join(base_name(n) for n in own), w))
            f.write(tmpl.replace('@BLACKBOX@', bb).replace('@GATES@', gates)
                    .replace('@I@', str(i)))
    # every distinct multiplier (widths, signedness, constant input bits) as its own module
    sigs = []
    for path in args.coarse:
        with open(path) as f:
            allm = json.load(f)['modules']
        for n in sorted(allm):
            for c in allm[n]['cells'].values():
                if c['type'] == '$mul':
                    s = mul_signature(c)
                    if s not in sigs:
                        sigs.append(s)
    with open(os.path.join(args.outdir, 'mulstd.v'), 'w') as f:
        f.write('// generated by synth_report.py split: each distinct $mul of the NPU, alone\n')
        f.write('module synth_mulstd_none (input wire a, output wire y); assign y = a; endmodule\n')
        for i, s in enumerate(sigs):
            f.write('// %s\n' % mul_label(s))
            f.write(mul_verilog(i, s))
    with open(os.path.join(args.outdir, 'mulstd_sigs.json'), 'w') as f:
        json.dump([list(s) for s in sigs], f)


# --------------------------------------------------------------------------------- area stats
class ModStats:
    def __init__(self):
        self.cells = 0      # gates + flip-flops (one per bit) + memory cells, own
        self.ff = 0         # flip-flop bits, own
        self.mem_bits = 0
        self.mems = []      # (name, words, width, async read ports)
        self.ge = 0.0       # gates + flip-flops, own
        self.gate_ge = 0.0
        self.ff_ge = 0.0
        self.children = defaultdict(int)
        self.unknown = defaultdict(int)


def own_stats(mods):
    st = {}
    for n, m in mods.items():
        s = ModStats()
        for cn, c in m['cells'].items():
            t = c['type']
            if t in mods:
                s.children[t] += 1
            elif t in GATE_GE:
                s.cells += 1
                s.gate_ge += GATE_GE[t]
            elif is_ff(t):
                s.cells += 1
                s.ff += 1
                s.ff_ge += ff_ge(t)
            elif t == '$mem_v2':
                p = c['parameters']
                words, width = pint(p['SIZE']), pint(p['WIDTH'])
                rdclk = str(p['RD_CLK_ENABLE'])
                s.cells += 1
                s.mem_bits += words * width
                s.mems.append((cn, words, width, rdclk.count('0')))
            elif is_latch(t):
                sys.exit('synth_report: latch %s in %s' % (cn, n))
            else:
                s.cells += 1
                s.unknown[t] += 1
        s.ge = s.gate_ge + s.ff_ge
        st[n] = s
    return st


def hier_totals(mods, st, top):
    memo = {}

    def rec(n):
        if n in memo:
            return memo[n]
        s = st[n]
        t = dict(cells=s.cells, ff=s.ff, mem_bits=s.mem_bits, ge=s.ge)
        for ch, k in s.children.items():
            r = rec(ch)
            for key in t:
                t[key] += k * r[key]
        memo[n] = t
        return t
    rec(top)
    return memo


def multiplicity(st, top):
    mult = defaultdict(int)
    order = []

    def rec(n, k):
        mult[n] += k
        if n not in order:
            order.append(n)
        for ch, c in st[n].children.items():
            rec(ch, k * c)
    rec(top, 1)
    return mult, order


def coarse_muls(paths):
    """module name -> list of (label, signature) of its $mul cells (word-level view)."""
    out = defaultdict(list)
    for path in paths or []:
        with open(path) as f:
            mods = json.load(f)['modules']
        for n, m in mods.items():
            if n in out:
                continue
            for c in m['cells'].values():
                if c['type'] == '$mul':
                    s = mul_signature(c)
                    out[n].append((mul_label(s), s))
    return out


def mulstd_area(json_path, sigs_path):
    """signature -> (GE, depth) of each distinct multiplier synthesised alone."""
    if not (json_path and os.path.exists(json_path)):
        return {}
    mods = load_modules([json_path])
    st = own_stats(mods)
    with open(sigs_path) as f:
        sigs = [tuple(s) for s in json.load(f)]
    res = {}
    for i, s in enumerate(sigs):
        n = 'synth_mulstd_%d' % i
        if n in mods:
            sta = Sta(mods)
            d = sta.analyse(n)
            res[s] = (st[n].ge, d.arc_max())
    return res


# --------------------------------------------------------------------------------- timing model
# Unit-delay, hierarchical: every gate (incl. NOT, MUX2, AOI/OAI) is one logic level. Start
# points: flip-flop Q, synchronous memory read data, the module's inputs (for arcs); end points:
# flip-flop D/EN/sync-reset, memory write and synchronous-read address/enable pins, the module's
# outputs. An asynchronous (combinational) memory read is an arc address -> data of
# ceil(log2(words)) levels (a MUX2 tree). Each module is analysed once; its parents use its
# timing model (launch depth per output bit, capture depth per input bit, input-bit -> output-bit
# arcs), so paths crossing module boundaries are measured without flattening.
NEG = -1


class Path:
    """A path: start/end descriptions and segments [(instance path, module, levels)]."""
    __slots__ = ('start', 'end', 'segs')

    def __init__(self, start='', end='', segs=None):
        self.start, self.end, self.segs = start, end, segs or []

    def levels(self):
        return sum(s[2] for s in self.segs)


def add_seg(segs, inst, mod, lv, pin=None):
    """Segments: (instance path, module, levels, None), or ('', '', 0, pin name) where the path
    crosses a module boundary."""
    if pin is not None:
        segs.append(('', '', 0, pin))
    elif lv <= 0:
        return
    elif segs and segs[-1][3] is None and segs[-1][0] == inst:
        segs[-1] = (inst, mod, segs[-1][2] + lv, None)
    else:
        segs.append((inst, mod, lv, None))


def prefix_segs(segs, inst):
    out = []
    for s in segs:
        if s[3] is not None:
            out.append(('', '', 0, inst + '/' + s[3]))
        else:
            out.append(((inst + '/' + s[0]) if s[0] else inst, s[1], s[2], None))
    return out


def pin_name(inst, port, i=None, width=1):
    return '%s.%s' % (inst, port) + ('[%d]' % i if (i is not None and width > 1) else '')


def prefix_name(inst, desc):
    # descriptions are "<kind> <name>"
    kind, _, name = desc.partition(' ')
    return '%s %s/%s' % (kind, inst, name) if name else desc


class ModTiming:
    def __init__(self):
        self.launch = {}     # (port, i) -> (depth, Path)   from a start point inside
        self.capture = {}    # (port, i) -> (depth, Path)   to an end point inside
        self.arcs = {}       # (out_port, i) -> {(in_port, j, width): (depth, segs)}
        self.best = (NEG, None)   # deepest start->end path inside this module's subtree
        # module base name -> (depth, Path): deepest start->end path of this subtree that has
        # levels in that module (crossing module boundaries: the path in context)
        self.by_mod = {}
        # every end point of this subtree whose deepest path is deeper than the PE (npu_pe's
        # own deepest path): [(depth, Path)], one per end-point bit (report: grouped)
        self.deep = []

    def arc_max(self):
        m = 0
        for d in self.arcs.values():
            for v in d.values():
                m = max(m, v[0])
        return m


class Sta:
    def __init__(self, mods):
        self.mods = mods
        self.models = {}
        self.loops = []

    def analyse(self, name):
        if name in self.models:
            return self.models[name]
        m = self.mods[name]
        for c in m['cells'].values():
            if c['type'] in self.mods:
                self.analyse(c['type'])
        tm = self._module(name, m)
        self.models[name] = tm
        return tm

    # ------------------------------------------------------------------ one module
    def _module(self, name, m):
        mod_b = base_name(name)
        netname = {}
        for nn, info in m['netnames'].items():
            for i, b in enumerate(info['bits']):
                if not isinstance(b, int):
                    continue
                hid = info.get('hide_name', 0)
                nm = nn if len(info['bits']) == 1 else '%s[%d]' % (nn, i)
                key = (hid, len(nm))
                if b not in netname or key < netname[b][0]:
                    netname[b] = (key, nm)

        def bname(b):
            return netname[b][1] if b in netname else 'n%d' % b

        # node ids: net bits (ints) and virtual nodes ('v', inst, port)
        succ = defaultdict(list)      # node -> [(node, weight, via)]
        pred_n = defaultdict(int)
        init = {}                     # node -> (depth, Path)  start points
        endpt = defaultdict(list)     # node -> [(depth_after, Path-maker)]

        def edge(u, v, w, via):
            succ[u].append((v, w, via))
            pred_n[v] += 1

        def set_init(b, d, path):
            if not isinstance(b, int):
                return
            if b not in init or d > init[b][0]:
                init[b] = (d, path)

        def add_end(b, d, path):
            if isinstance(b, int):
                endpt[b].append((d, path))

        for cn, c in m['cells'].items():
            t, con = c['type'], c['connections']
            if t in GATE_GE:
                y = con['Y'][0]
                for p, bits in con.items():
                    if p != 'Y':
                        for b in bits:
                            if isinstance(b, int):
                                edge(b, y, 1, None)
            elif is_ff(t):
                q = con['Q']
                for qi, qb in enumerate(q):
                    set_init(qb, 0, Path(start='reg ' + bname(qb)))
                qn = bname(q[0]) if q and isinstance(q[0], int) else cn
                for p in ('D', 'E', 'R', 'S'):
                    if p not in con:
                        continue
                    if p in ('R', 'S') and not t.startswith('$_SDFF'):
                        continue   # asynchronous reset/set: not a timed data path here
                    for b in con[p]:
                        add_end(b, 0, Path(end='reg ' + qn))
            elif t == '$mem_v2':
                p = c['parameters']
                words, width, abits = pint(p['SIZE']), pint(p['WIDTH']), pint(p['ABITS'])
                nrd = pint(p['RD_PORTS'])
                rdclk = str(p['RD_CLK_ENABLE'])[::-1]     # index 0 = port 0
                lv = max(1, math.ceil(math.log2(max(2, words))))
                mname = 'mem ' + (c.get('parameters', {}).get('MEMID', cn).lstrip('\\'))
                for r in range(nrd):
                    data = con['RD_DATA'][r * width:(r + 1) * width]
                    addr = con['RD_ADDR'][r * abits:(r + 1) * abits]
                    if r < len(rdclk) and rdclk[r] == '1':
                        for b in data:
                            set_init(b, 0, Path(start=mname))
                        for b in addr + con['RD_EN'][r:r + 1] + con['RD_SRST'][r:r + 1]:
                            add_end(b, 0, Path(end=mname))
                    else:
                        for b in data:
                            set_init(b, lv, Path(start=mname, segs=[('', mod_b, lv, None)]))
                            for a in addr:
                                if isinstance(a, int) and isinstance(b, int):
                                    edge(a, b, lv, None)
                for pn in ('WR_EN', 'WR_ADDR', 'WR_DATA'):
                    for b in con.get(pn, []):
                        add_end(b, 0, Path(end=mname))
            elif t in self.mods:
                sub = self.models[t]
                dirs = c['port_directions']
                for pn, bits in con.items():
                    if dirs.get(pn) == 'output':
                        for i, b in enumerate(bits):
                            if (pn, i) in sub.launch:
                                d, pth = sub.launch[(pn, i)]
                                set_init(b, d, Path(
                                    start=prefix_name(cn, pth.start),
                                    segs=prefix_segs(pth.segs, cn)
                                    + [('', '', 0, pin_name(cn, pn, i, len(bits)))]))
                            arcs = sub.arcs.get((pn, i))
                            if arcs and isinstance(b, int):
                                for (ip, j, w), (d, segs) in arcs.items():
                                    edge(('v', cn, ip, j), b, d,
                                         ('arc', cn, segs, pin_name(cn, ip, j, w),
                                          pin_name(cn, pn, i, len(bits))))
                    else:
                        for i, b in enumerate(bits):
                            if (pn, i) in sub.capture:
                                d, pth = sub.capture[(pn, i)]
                                add_end(b, d, Path(
                                    end=prefix_name(cn, pth.end),
                                    segs=[('', '', 0, pin_name(cn, pn, i, len(bits)))]
                                    + prefix_segs(pth.segs, cn)))
                            if isinstance(b, int):
                                edge(b, ('v', cn, pn, i), 0, None)
            # other cells (none expected after mapping) are ignored

        # topological order (Kahn)
        nodes = set(succ.keys()) | set(pred_n.keys()) | set(init.keys()) | set(endpt.keys())
        for pn, info in m['ports'].items():
            for b in info['bits']:
                if isinstance(b, int):
                    nodes.add(b)
        indeg = {n: pred_n.get(n, 0) for n in nodes}
        order = [n for n in nodes if indeg[n] == 0]
        k = 0
        while k < len(order):
            u = order[k]
            k += 1
            for v, _, _ in succ.get(u, ()):
                indeg[v] -= 1
                if indeg[v] == 0:
                    order.append(v)
        if len(order) != len(nodes):
            self.loops.append((name, len(nodes) - len(order)))
        pos = {n: i for i, n in enumerate(order)}

        def sweep(sources):
            """sources: node -> (depth, Path|None). Returns arrival, predecessor maps."""
            arr = dict((n, d) for n, (d, _) in sources.items() if n in pos)
            prv = {}
            # forward cone, in topological order
            cone = set(arr)
            stack = list(arr)
            while stack:
                u = stack.pop()
                for v, _, _ in succ.get(u, ()):
                    if v not in cone and v in pos:
                        cone.add(v)
                        stack.append(v)
            for u in sorted(cone, key=pos.__getitem__):
                au = arr.get(u)
                if au is None:
                    continue
                for v, w, via in succ.get(u, ()):
                    if v in pos and au + w > arr.get(v, NEG):
                        arr[v] = au + w
                        prv[v] = (u, w, via)
            return arr, prv

        def trace(v, prv, sources):
            """Segments and the origin's Path from a source to node v."""
            chain = []
            while v in prv:
                u, w, via = prv[v]
                chain.append((w, via))
                v = u
            origin = sources[v][1]
            segs = list(origin.segs) if origin is not None else []
            for w, via in reversed(chain):
                if via is None:
                    add_seg(segs, '', mod_b, w)
                else:
                    add_seg(segs, '', '', 0, pin=via[3])
                    for s in prefix_segs(via[2], via[1]):
                        add_seg(segs, *s)
                    add_seg(segs, '', '', 0, pin=via[4])
            return segs, origin

        tm = ModTiming()
        outs = [(pn, i, b) for pn, info in m['ports'].items() if info['direction'] == 'output'
                for i, b in enumerate(info['bits'])]
        ins = [(pn, info['bits']) for pn, info in m['ports'].items()
               if info['direction'] == 'input']

        # 1. from internal start points: launch at outputs, best internal path
        arr, prv = sweep(init)
        for pn, i, b in outs:
            if isinstance(b, int) and b in arr:
                segs, origin = trace(b, prv, init)
                tm.launch[(pn, i)] = (arr[b], Path(start=origin.start, segs=segs))
        best = (NEG, None)
        for b, ends in endpt.items():
            if b not in arr:
                continue
            for d, ep in ends:
                tot = arr[b] + d
                if tot > best[0]:
                    best = (tot, (b, ep))
        if best[1] is not None:
            b, ep = best[1]
            segs, origin = trace(b, prv, init)
            for s in ep.segs:
                add_seg(segs, *s)
            best = (best[0], Path(start=origin.start, end=ep.end, segs=segs))
        for cn, c in m['cells'].items():
            if c['type'] in self.models:
                sb = self.models[c['type']].best
                if sb[0] > best[0]:
                    best = (sb[0], Path(start=prefix_name(cn, sb[1].start),
                                        end=prefix_name(cn, sb[1].end),
                                        segs=prefix_segs(sb[1].segs, cn)))
        tm.best = best

        # 1b. deepest path through each module (in context): the deepest path to every end
        # point, credited to every module it has levels in; plus the children's own.
        # (Per end point only its deepest path is traced: a module whose deepest path is
        # shadowed at every end point by a deeper one elsewhere gets that deeper path's end.)
        by_mod = {}
        for b, ends in endpt.items():
            if b not in arr:
                continue
            d, ep = max(ends, key=lambda x: x[0])
            tot = arr[b] + d
            segs, origin = trace(b, prv, init)
            mods_on = {sg[1] for sg in segs if sg[2] > 0} | {sg[1] for sg in ep.segs if sg[2] > 0}
            for mm in mods_on:
                if mm not in by_mod or tot > by_mod[mm][0]:
                    by_mod[mm] = (tot, (b, ep))
        for mm, (tot, (b, ep)) in list(by_mod.items()):
            segs, origin = trace(b, prv, init)
            for sg in ep.segs:
                add_seg(segs, *sg)
            by_mod[mm] = (tot, Path(start=origin.start, end=ep.end, segs=segs))
        for cn, c in m['cells'].items():
            if c['type'] in self.models:
                for mm, (sd, sp) in self.models[c['type']].by_mod.items():
                    if mm not in by_mod or sd > by_mod[mm][0]:
                        by_mod[mm] = (sd, Path(start=prefix_name(cn, sp.start),
                                               end=prefix_name(cn, sp.end),
                                               segs=prefix_segs(sp.segs, cn)))
        tm.by_mod = by_mod

        # 1c. every end point deeper than the PE (the issue-7 rule: nothing but a PE or a buffer
        # may be deeper than the PE), with its path; the children's own below
        pe = [t for n, t in self.models.items() if base_name(n) == 'npu_pe']
        thr = pe[0].best[0] if pe and mod_b != 'npu_pe' else None
        deep = []
        if thr is not None:
            for b, ends in endpt.items():
                if b not in arr:
                    continue
                d, ep = max(ends, key=lambda x: x[0])
                tot = arr[b] + d
                if tot <= thr:
                    continue
                segs, origin = trace(b, prv, init)
                for sg in ep.segs:
                    add_seg(segs, *sg)
                deep.append((tot, Path(start=origin.start, end=ep.end, segs=segs)))
            for cn, c in m['cells'].items():
                if c['type'] in self.models:
                    for sd, sp in self.models[c['type']].deep:
                        deep.append((sd, Path(start=prefix_name(cn, sp.start),
                                              end=prefix_name(cn, sp.end),
                                              segs=prefix_segs(sp.segs, cn))))
        tm.deep = deep

        # 2. capture depth per input bit and input-bit -> output-bit arcs: one sweep per input
        # bit (a sweep per port would credit every bit of a wide port, e.g. the SPM's six read
        # addresses, with the deepest bit's paths: false paths through the hierarchy)
        for pn, bits in ins:
            w = len(bits)
            for j, b in enumerate(bits):
                if not isinstance(b, int):
                    continue
                srcs = {b: (0, Path(start='in ' + pin_name('', pn, j, w)[1:]))}
                arr, prv = sweep(srcs)
                capd = (NEG, None)
                for e, ends in endpt.items():
                    if e in arr:
                        for d, ep in ends:
                            if arr[e] + d > capd[0]:
                                capd = (arr[e] + d, (e, ep))
                if capd[1] is not None:
                    e, ep = capd[1]
                    segs, _ = trace(e, prv, srcs)
                    for sg in ep.segs:
                        add_seg(segs, *sg)
                    tm.capture[(pn, j)] = (capd[0], Path(start=srcs[b][1].start, end=ep.end,
                                                         segs=segs))
                for opn, i, ob in outs:
                    if isinstance(ob, int) and ob in arr:
                        segs, _ = trace(ob, prv, srcs)
                        tm.arcs.setdefault((opn, i), {})[(pn, j, w)] = (arr[ob], segs)
        return tm


# --------------------------------------------------------------------------------- report
def route_str(p):
    parts = []
    for s in p.segs:
        if s[3] is not None:
            parts.append(s[3])
        elif s[2] > 0:
            parts.append('(%s: %d)' % (('%s %s' % (s[0], s[1])) if s[0] else s[1], s[2]))
    return ' -> '.join(parts)


def fmt_path(p, depth):
    if p is None:
        return 'none'
    route = route_str(p)
    return '%d levels: %s  ==>  %s\n      via %s' % (depth, p.start, p.end, route or '-')


def path_class(p):
    mods = {s[1] for s in p.segs if s[2] > 0} if p else set()
    ctl = sorted(m for m in mods if m not in DATAPATH)
    return ('datapath (PE/buffer)' if not ctl else 'control/NoC (' + ', '.join(ctl) + ')'), mods


def write_csv(path, header, rows):
    with open(path, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow(r)


def table(header, rows, aligns=None):
    cols = list(zip(*([header] + [[str(x) for x in r] for r in rows]))) if rows else [header]
    widths = [max(len(str(x)) for x in col) for col in cols]
    out = []
    for k, r in enumerate([header] + rows):
        cells = []
        for i, x in enumerate(r):
            x = str(x)
            cells.append(x.ljust(widths[i]) if i == 0 else x.rjust(widths[i]))
        out.append('  '.join(cells))
        if k == 0:
            out.append('  '.join('-' * w for w in widths))
    return '\n'.join(out)


def analyse_design(gate_jsons, coarse_json, top_base, mul_area=None):
    mods = load_modules(gate_jsons)
    top = find_top(mods, top_base)
    st = own_stats(mods)
    tot = hier_totals(mods, st, top)
    mult, order = multiplicity(st, top)
    muls = coarse_muls(coarse_json)
    sta = Sta(mods)
    # the PE first: its deepest path is the threshold of every module's list of end points
    # deeper than the PE (Sta._module, 1c); a module analysed before it (npu_exec, by the order
    # of the top's cells) would list none of its own, internal ones
    for n in mods:
        if base_name(n) == 'npu_pe':
            sta.analyse(n)
    sta.analyse(top)
    return dict(mods=mods, top=top, st=st, tot=tot, mult=mult, order=order, muls=muls, sta=sta)


def hier_muls(D, n, memo=None):
    """(count, labels) of $mul cells in module n and below (word-level view)."""
    memo = {} if memo is None else memo
    if n in memo:
        return memo[n]
    cnt = defaultdict(int)
    for lab, _ in D['muls'].get(n, []):
        cnt[lab] += 1
    for ch, k in D['st'][n].children.items():
        for lab, c in hier_muls(D, ch, memo).items():
            cnt[lab] += k * c
    memo[n] = cnt
    return cnt


def mul_ge_of(D, n, mul_area, memo=None):
    """standalone-synthesised GE of the $mul cells in module n and below."""
    memo = {} if memo is None else memo
    if n in memo:
        return memo[n]
    g = 0.0
    for lab, s in D['muls'].get(n, []):
        g += mul_area.get(tuple(s), (0.0, 0))[0]
    for ch, k in D['st'][n].children.items():
        g += k * mul_ge_of(D, ch, mul_area, memo)
    memo[n] = g
    return g


def comb_depth(sta, n):
    """Deepest input-to-output arc of a combinational module (levels)."""
    return max((d for arcs in sta.analyse(n).arcs.values() for d, _ in arcs.values()),
               default=NEG)


def pe_variant_rows(D, variants):
    """The NPU's npu_pe and each PE variant ('label=gates.json', synthesised alone; the label
    starts with the module name, e.g. 'npu_pe(BF16=1)'): cells, FF bits, area GE,
    register-to-register depth, and their submodules' area and depth."""
    out = []
    designs = [('npu_pe', D, [n for n in D['order'] if base_name(n) == 'npu_pe'])]
    for v in variants:
        name, _, path = v.rpartition('=')
        V = analyse_design([path], None, name.split('(')[0])
        designs.append((name, V, [V['top']]))
    for name, X, ns in designs:
        if not ns:
            continue
        n, t = ns[0], X['tot'][ns[0]]
        parts = ['%s %d GE %d levels' % (base_name(ch), round(X['tot'][ch]['ge']),
                                         comb_depth(X['sta'], ch))
                 for ch in X['st'][n].children]
        out.append(dict(module=name, cells=t['cells'], ff_bits=t['ff'], area_ge=round(t['ge']),
                        depth=X['sta'].models[n].best[0], parts='; '.join(parts)))
    return out


def cmd_report(a):
    out_dir = a.dir
    mul_area = mulstd_area(a.mul_json, a.mul_sigs)
    D = analyse_design(a.gates, a.coarse, 'npu_top')
    top, st, tot, mult = D['top'], D['st'], D['tot'], D['mult']
    npu_ge = tot[top]['ge']
    npu_mem = tot[top]['mem_bits']
    for n in D['order']:
        for t, k in st[n].unknown.items():
            print('synth_report: WARNING: %d cells of unmapped type %s in %s (no area)'
                  % (k, t, base_name(n)))

    # ---------------- per-module table (grouped by module name over all parameter sets)
    groups = defaultdict(list)
    for n in D['order']:
        groups[base_name(n)].append(n)
    rows = []
    for b, ns in groups.items():
        inst = sum(mult[n] for n in ns)
        cells = sum(mult[n] * tot[n]['cells'] for n in ns)
        ff = sum(mult[n] * tot[n]['ff'] for n in ns)
        mem = sum(mult[n] * tot[n]['mem_bits'] for n in ns)
        ge = sum(mult[n] * tot[n]['ge'] for n in ns)
        selfge = sum(mult[n] * st[n].ge for n in ns)
        mcnt = defaultdict(int)
        for n in ns:
            for lab, c in hier_muls(D, n).items():
                mcnt[lab] += mult[n] * c
        mge = sum(mult[n] * mul_ge_of(D, n, mul_area) for n in ns)
        depth = max(D['sta'].models[n].best[0] for n in ns)
        rows.append(dict(module=b, instances=inst, cells=cells, ff_bits=ff,
                         muls=sum(mcnt.values()),
                         mul_shapes=' '.join('%dx%s' % (c, l) for l, c in sorted(mcnt.items())),
                         mem_bits=mem, area_ge=round(ge), self_ge=round(selfge),
                         mul_ge=round(mge), pct_npu=round(100.0 * ge / npu_ge, 2),
                         depth=depth))
    rows.sort(key=lambda r: -r['area_ge'])
    pe_rows = pe_variant_rows(D, a.pe_variant or [])
    pe_cols = ['module', 'cells', 'ff_bits', 'area_ge', 'depth', 'parts']
    write_csv(os.path.join(out_dir, 'synth_pe.csv'), pe_cols,
              [[r[c] for c in pe_cols] for r in pe_rows])
    mod_cols = ['module', 'instances', 'cells', 'ff_bits', 'muls', 'mem_bits', 'area_ge',
                'self_ge', 'mul_ge', 'pct_npu', 'depth', 'mul_shapes']
    write_csv(os.path.join(out_dir, 'synth_modules.csv'), mod_cols,
              [[r[c] for c in mod_cols] for r in rows])

    # ---------------- memories
    groups_m = {}
    for n in D['order']:
        for (mn, words, width, nasync) in st[n].mems:
            key = (base_name(n), words, width, nasync)
            g = groups_m.setdefault(key, dict(
                module=base_name(n), memory=re.sub(r'\[\d+\]', '[*]', mn.lstrip('\\')),
                instances=0, words=words, width=width, bits=0, async_read_ports=nasync))
            g['instances'] += mult[n]
            g['bits'] += words * width * mult[n]
    mem_rows = list(groups_m.values())
    mem_rows.sort(key=lambda r: -r['bits'])

    # ---------------- logic depth
    sta = D['sta']
    best_d, best_p = sta.models[top].best
    cls, _ = path_class(best_p)
    topm = sta.models[top]
    in2reg = max(((d, p) for d, p in topm.capture.values()), key=lambda x: x[0],
                 default=(NEG, None))
    reg2out = max(((d, p) for d, p in topm.launch.values()), key=lambda x: x[0],
                  default=(NEG, None))
    in2out = (NEG, None)
    for (op, i), arcs in topm.arcs.items():
        for (ip, j, w), (d, segs) in arcs.items():
            if d > in2out[0]:
                in2out = (d, Path(start='in ' + pin_name('', ip, j, w)[1:],
                                  end='out %s[%d]' % (op, i), segs=segs))
    # deepest path per module
    dep_rows = []
    for b, ns in groups.items():
        n = max(ns, key=lambda x: sta.models[x].best[0])
        d, p = sta.models[n].best
        if p is None:
            continue
        dep_rows.append(dict(module=b, depth=d, start=p.start, end=p.end,
                             route=route_str(p),
                             kind=path_class(p)[0]))
    # deepest path through each module inside the NPU (crossing module boundaries): what a
    # designer of that module must shorten, e.g. a queue head feeding a module's input logic
    ctx_rows = []
    for b, (d, p) in topm.by_mod.items():
        ctx_rows.append(dict(module=b, depth=d, start=p.start, end=p.end, route=route_str(p),
                             kind=path_class(p)[0]))
    for r in dep_rows:
        r['depth_in_npu'] = topm.by_mod.get(r['module'], (NEG, None))[0]
    dep_rows.sort(key=lambda r: -r['depth'])
    ctx_rows.sort(key=lambda r: -r['depth'])
    dep_cols = ['module', 'depth', 'start', 'end', 'route', 'kind', 'depth_in_npu']
    write_csv(os.path.join(out_dir, 'synth_depth.csv'), dep_cols,
              [[r[c] for c in dep_cols] for r in dep_rows])
    ctx_cols = ['module', 'depth', 'start', 'end', 'route', 'kind']
    write_csv(os.path.join(out_dir, 'synth_depth_npu.csv'), ctx_cols,
              [[r[c] for c in ctx_cols] for r in ctx_rows])

    # end points deeper than the PE, grouped by end register/memory (bit and instance indices
    # folded): the deepest path to each group; control ones must be cut (issue 7)
    pe_d = max((sta.models[n].best[0] for n in D['order'] if base_name(n) == 'npu_pe'),
               default=NEG)
    dgroups = {}
    for d, p in topm.deep:
        key = re.sub(r'\[\d+\]', '[*]', p.end)
        g = dgroups.get(key)
        if g is None:
            dgroups[key] = g = dict(end=key, depth=d, bits=0, path=p)
        g['bits'] += 1
        if d > g['depth']:
            g['depth'], g['path'] = d, p
    deep_rows = []
    for g in dgroups.values():
        p = g['path']
        deep_rows.append(dict(end=g['end'], depth=g['depth'], bits=g['bits'], start=p.start,
                              route=route_str(p), kind=path_class(p)[0]))
    deep_rows.sort(key=lambda r: (-r['depth'], r['end']))
    deep_cols = ['end', 'depth', 'bits', 'start', 'route', 'kind']
    write_csv(os.path.join(out_dir, 'synth_deep.csv'), deep_cols,
              [[r[c] for c in deep_cols] for r in deep_rows])
    deep_ctl = [r for r in deep_rows if not r['kind'].startswith('datapath')]

    # ---------------- FlexSA overhead
    ov = None
    if a.cmp_gates:
        # the NPU's netlists first: the PE (blackboxed in the comparison run) comes from them
        C = analyse_design(list(a.gates) + list(a.cmp_gates), None, 'synth_cmp')
        ct = C['tot']
        S = a.S
        # (a) is the NPU's own npu_flexsa
        fx = [n for n in D['order'] if base_name(n) == 'npu_flexsa'][0]
        refs = [n for n in C['order'] if base_name(n) == 'npu_core_ref']
        cores = [n for n in C['order'] if base_name(n) == 'npu_core']
        ref_s = [n for n in refs if core_side(C, n) == S][0]
        ref_2s = [n for n in refs if core_side(C, n) == 2 * S][0]
        core_s = [n for n in cores if core_side_core(C, n) == S][0]
        core_2s = [n for n in cores if core_side_core(C, n) == 2 * S][0]
        A = tot[fx]['ge']
        B = 4 * ct[ref_s]['ge']
        B0 = 4 * ct[core_s]['ge']
        M = ct[ref_2s]['ge']
        M0 = ct[core_2s]['ge']
        fx_self = A - 4 * ct[core_s]['ge']
        ov = dict(S=S, flexsa_ge=round(A), four_core_ge=round(B), four_array_ge=round(B0),
                  mono_ge=round(M), mono_array_ge=round(M0), flexsa_glue_ge=round(fx_self),
                  four_core_glue_ge=round(B - B0), mono_glue_ge=round(M - M0),
                  npu_ge=round(npu_ge),
                  ov_vs_four_ge=round(A - B), ov_vs_four_pct=round(100.0 * (A - B) / B, 2),
                  ov_vs_four_pct_npu=round(100.0 * (A - B) / npu_ge, 2),
                  ov_vs_mono_ge=round(A - M), ov_vs_mono_pct=round(100.0 * (A - M) / M, 2),
                  ov_vs_mono_pct_npu=round(100.0 * (A - M) / npu_ge, 2),
                  flexsa_ff=tot[fx]['ff'], four_core_ff=4 * ct[ref_s]['ff'],
                  mono_ff=ct[ref_2s]['ff'],
                  paper_vs_four_pct=1.0, paper_vs_mono_pct=5.0)
        ov_rows = [
            ['(a) FlexSA as built: npu_flexsa (4 cores + muxes + skew + rings + tags)',
             '4x %dx%d' % (S, S), ov['flexsa_ge'], ov['flexsa_glue_ge'], ov['flexsa_ff'], '', '', ''],
            ['(b) naive four cores: 4 x npu_core_ref(S) (core + own skew + tags)',
             '4x %dx%d' % (S, S), ov['four_core_ge'], ov['four_core_glue_ge'], ov['four_core_ff'],
             '%+.2f%%' % ov['ov_vs_four_pct'], '%+.2f%%' % ov['ov_vs_four_pct_npu'], '~1%'],
            ['(c) monolithic: npu_core_ref(2S) (one 2Sx2S core + skew + tags)',
             '1x %dx%d' % (2 * S, 2 * S), ov['mono_ge'], ov['mono_glue_ge'], ov['mono_ff'],
             '%+.2f%%' % ov['ov_vs_mono_pct'], '%+.2f%%' % ov['ov_vs_mono_pct_npu'], '~5%'],
        ]
        ov_hdr = ['design', 'PEs', 'area_ge', 'non_PE_ge', 'ff_bits',
                  'FlexSA_overhead_vs_this', 'overhead_pct_of_NPU', 'paper']
        write_csv(os.path.join(out_dir, 'synth_overhead.csv'),
                  ['config'] + ov_hdr, [[a.config] + r for r in ov_rows])

    # ---------------- JSON
    res = dict(config=a.config, units=dict(area='NAND2 equivalents (GE), Nangate45 X1 areas / '
                                                  'NAND2_X1; see constraints/README.md',
                                             depth='logic levels (every generic gate = 1)'),
               weights=WEIGHT_TABLE,
               npu=dict(area_ge=round(npu_ge), ff_bits=tot[top]['ff'], mem_bits=npu_mem,
                        area_incl_mem_ge=round(npu_ge + MEM_GE_PER_BIT * npu_mem),
                        mul_ge_standalone=round(mul_ge_of(D, top, mul_area))),
               modules=rows, memories=mem_rows, depth=dep_rows, depth_in_npu=ctx_rows,
               pe_depth=pe_d, deeper_than_pe=deep_rows, pe_variants=pe_rows,
               critical_path=dict(depth=best_d, start=best_p.start if best_p else '',
                                  end=best_p.end if best_p else '',
                                  segments=[list(s) for s in best_p.segs] if best_p else [],
                                  kind=cls),
               io_paths=dict(in2reg=[in2reg[0], in2reg[1].start if in2reg[1] else '',
                                     in2reg[1].end if in2reg[1] else ''],
                             reg2out=[reg2out[0], reg2out[1].start if reg2out[1] else ''],
                             in2out=[in2out[0], in2out[1].start if in2out[1] else '',
                                     in2out[1].end if in2out[1] else '']),
               multipliers={mul_label(s): dict(ge=round(g), depth=d) for s, (g, d) in mul_area.items()},
               overhead=ov, comb_loops=sta.loops, runtime_s=a.runtime)
    with open(os.path.join(out_dir, 'synth.json'), 'w') as f:
        json.dump(res, f, indent=1)

    # ---------------- print
    P = print
    P('== synth %s: per module (totals over all instances, submodules included; rows nest)' % a.config)
    P(table(['module', 'inst', 'cells', 'FF bits', '$mul', 'mem bits', 'area GE', 'self GE',
             'mul GE', '% NPU', 'depth'],
            [[r['module'], r['instances'], r['cells'], r['ff_bits'], r['muls'], r['mem_bits'],
              r['area_ge'], r['self_ge'], r['mul_ge'], '%.2f' % r['pct_npu'],
              r['depth'] if r['depth'] >= 0 else '-']
             for r in rows]))
    P('  area GE = gates + flip-flops in NAND2 equivalents (multipliers mapped to gates);'
      ' memories are not in GE (mem bits).')
    P('  multipliers kept as cells (word-level view): %s' %
      ('; '.join('%s %s' % (r['module'], r['mul_shapes']) for r in rows
                 if r['mul_shapes'] and r['module'] not in ('npu_top', 'npu_flexsa', 'npu_core'))
       or 'none'))
    if mul_area:
        P('  each multiplier synthesised alone: ' + '; '.join(
            '%s %d GE %d levels' % (mul_label(s), round(g), d) for s, (g, d) in mul_area.items()))
    P('  NPU: %d GE logic (%d GE in $mul alone), %d FF bits, %d memory bits (%.0f KiB); '
      'with memories at %.2f GE/bit: %d GE'
      % (round(npu_ge), round(mul_ge_of(D, top, mul_area)), tot[top]['ff'], npu_mem,
         npu_mem / 8192.0, MEM_GE_PER_BIT, round(npu_ge + MEM_GE_PER_BIT * npu_mem)))
    if len(pe_rows) > 1:
        P('')
        P('== PE variants, each synthesised alone (issue 15: the bf16 PE beside the int16 one)')
        P(table(['module', 'cells', 'FF bits', 'area GE', 'depth', 'parts (combinational)'],
                [[r['module'], r['cells'], r['ff_bits'], r['area_ge'], r['depth'], r['parts']]
                 for r in pe_rows]))
        P('  depth: register to register (a_in / weight bank -> psum_out), as in the tables below.')
    P('')
    P('== memories (kept as $mem_v2 cells, not expanded)')
    P(table(['module', 'memory', 'inst', 'words', 'width', 'bits', 'async rd'],
            [[r['module'], r['memory'], r['instances'], r['words'], r['width'], r['bits'],
              r['async_read_ports']] for r in mem_rows]))
    P('  async rd = combinational read ports (the OBUF accumulate reads): a register file or a')
    P('  read-modify-write pipeline in silicon, not a single-port SRAM macro.')
    P('')
    P('== logic depth (unit-delay levels, hierarchical, register to register)')
    P(table(['module', 'depth', 'kind', 'start', 'end'],
            [[r['module'], r['depth'], r['kind'].split(' (')[0], r['start'][:48], r['end'][:48]]
             for r in dep_rows]))
    P('')
    P('== deepest path through each module inside the NPU (in context: across module boundaries)')
    P(table(['module', 'depth', 'kind', 'start', 'end'],
            [[r['module'], r['depth'], r['kind'].split(' (')[0], r['start'][:48], r['end'][:48]]
             for r in ctx_rows]))
    for r in ctx_rows:
        if not r['kind'].startswith('datapath'):
            P('  %-15s %3d via %s' % (r['module'], r['depth'], r['route']))
    P('  deepest path of the NPU: ' + fmt_path(best_p, best_d))
    P('  critical path is %s%s' % (cls, '' if cls.startswith('datapath') else
                                   '  <-- WARNING: not a PE/buffer path (issue 7: pipeline it)'))
    P('  end points deeper than the PE (%d levels): %d groups, %d control/NoC%s'
      % (pe_d, len(deep_rows), len(deep_ctl), ':' if deep_ctl else ''))
    for r in deep_ctl[:12]:
        P('    %3d  %s (%d bits) <- %s\n         via %s'
          % (r['depth'], r['end'], r['bits'], r['start'], r['route']))
    if len(deep_ctl) > 12:
        P('    ... %d more in synth_deep.csv' % (len(deep_ctl) - 12))
    P('  I/O (for the SDC budgets): in->reg %d (%s), reg->out %d (%s), in->out %d (%s -> %s)'
      % (in2reg[0], in2reg[1].start if in2reg[1] else '-', reg2out[0],
         reg2out[1].start if reg2out[1] else '-', in2out[0],
         in2out[1].start if in2out[1] else '-', in2out[1].end if in2out[1] else '-'))
    if sta.loops:
        P('  WARNING: combinational loop through the hierarchy in %s' % sta.loops)
    if ov:
        P('')
        P('== FlexSA overhead, S=%d (area GE; non-PE = area outside npu_core)' % a.S)
        P(table(ov_hdr, ov_rows))
        P('  FlexSA overhead vs four cores: %+d GE = %+.2f%% of their area (%+.2f%% of NPU) '
          '-- paper ~1%%' % (ov['ov_vs_four_ge'], ov['ov_vs_four_pct'], ov['ov_vs_four_pct_npu']))
        P('  FlexSA overhead vs monolithic %dx%d: %+d GE = %+.2f%% of its area (%+.2f%% of NPU) '
          '-- paper ~5%%' % (2 * a.S, 2 * a.S, ov['ov_vs_mono_ge'], ov['ov_vs_mono_pct'],
                              ov['ov_vs_mono_pct_npu']))
    P('')
    P('files: %s/{synth_modules.csv,synth_depth.csv,synth_depth_npu.csv,synth_deep.csv,'
      'synth_overhead.csv,synth_pe.csv,synth.json}' % out_dir)
    return 0


def core_side_core(C, n):
    """S of an npu_core: its number of npu_pe instances is S*S."""
    k = sum(c for ch, c in C['st'][n].children.items() if base_name(ch) == 'npu_pe')
    return int(round(math.sqrt(k)))


def core_side(C, n):
    for ch in C['st'][n].children:
        if base_name(ch) == 'npu_core':
            return core_side_core(C, ch)
    return 0


def n_param_s(C, n):
    return core_side_core(C, n) if base_name(n) == 'npu_core' else core_side(C, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sp = ap.add_subparsers(dest='cmd', required=True)
    s = sp.add_parser('split')
    s.add_argument('njobs', type=int)
    s.add_argument('outdir')
    s.add_argument('coarse', nargs='+')
    r = sp.add_parser('report')
    r.add_argument('--config', required=True)
    r.add_argument('--dir', required=True)
    r.add_argument('--S', type=int, required=True)
    r.add_argument('--gates', nargs='+', required=True)
    r.add_argument('--coarse', nargs='*')
    r.add_argument('--cmp-gates', nargs='*')
    r.add_argument('--mul-json')
    r.add_argument('--mul-sigs')
    r.add_argument('--runtime', type=float, default=0.0)
    r.add_argument('--pe-variant', action='append',
                   help='LABEL=gates.json: a PE variant synthesised alone, reported beside npu_pe')
    a = ap.parse_args()
    if a.cmd == 'split':
        return cmd_split(a)
    return cmd_report(a)


if __name__ == '__main__':
    sys.exit(main())
