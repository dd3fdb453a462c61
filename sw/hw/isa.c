/* isa.c - instruction encode/decode/disassembly; see isa.h and docs/isa.md. */
#include "hw/isa.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names from the X-macros ---------------------------------------------------------- */

const char *npu_op_name(unsigned op)
{
    switch (op) {
#define X(n, v, q, t) case v: return #n;
        NPU_OPCODES(X)
#undef X
    default: return NULL;
    }
}

char npu_op_queue(unsigned op)
{
    switch (op) {
#define X(n, v, q, t) case v: return (#q)[0];
        NPU_OPCODES(X)
#undef X
    default: return 0;
    }
}

const char *npu_tag_name(unsigned tag)
{
    switch (tag) {
#define X(n, v) case v: return #n;
        NPU_TAGS(X)
#undef X
    default: return NULL;
    }
}

const char *npu_mode_name(unsigned mode)
{
    switch (mode) {
#define X(n, v) case v: return #n;
        NPU_MODES(X)
#undef X
    default: return NULL;
    }
}

const char *npu_vop_name(unsigned vop)
{
    switch (vop) {
#define X(n, v, rb, nw, t) case v: return #n;
        NPU_VOPS(X)
#undef X
    default: return NULL;
    }
}

const char *npu_dtype_name(unsigned dtype)
{
    switch (dtype) {
#define X(n, v, t) case v: return t;
        NPU_DTYPES(X)
#undef X
    default: return "?";
    }
}

/* ---- the field table (NPU_ISA_FIELDS) -------------------------------------------------- */

const npu_isa_field_desc_t npu_isa_fields[NPU_NUM_FIELDS] = {
#define X(fo, nm, w, l, b) {NPU_OP_##fo, #nm, w, l, b, offsetof(npu_fields_t, nm)},
    NPU_ISA_FIELDS(X)
#undef X
};

/* The npu_fields_t member of field id (a switch, as dram_addr is a uint32_t, the rest unsigned). */
static uint32_t member_get(const npu_fields_t *f, unsigned id)
{
    switch (id) {
#define X(fo, nm, w, l, b) case NPU_FLD_##fo##_##nm: return f->nm;
        NPU_ISA_FIELDS(X)
#undef X
    default: return 0;
    }
}

static void member_set(npu_fields_t *f, unsigned id, uint32_t v)
{
    switch (id) {
#define X(fo, nm, w, l, b) case NPU_FLD_##fo##_##nm: f->nm = v; break;
        NPU_ISA_FIELDS(X)
#undef X
    default: break;
    }
}

static uint32_t field_mask(const npu_isa_field_desc_t *d)
{
    return d->width >= 32 ? 0xFFFFFFFFu : (1u << d->width) - 1u;
}

uint32_t npu_insn_get(const npu_insn_t *in, unsigned id)
{
    const npu_isa_field_desc_t *d;
    if (id >= NPU_NUM_FIELDS)
        return 0;
    d = &npu_isa_fields[id];
    return (in->w[d->word] >> d->lsb) & field_mask(d);
}

int npu_insn_put(npu_insn_t *in, unsigned id, uint32_t v)
{
    const npu_isa_field_desc_t *d;
    uint32_t m;
    if (id >= NPU_NUM_FIELDS)
        return -1;
    d = &npu_isa_fields[id];
    m = field_mask(d);
    if (v & ~m)
        return -1; /* range checks come from the widths: never truncate */
    in->w[d->word] = (in->w[d->word] & ~(m << d->lsb)) | (v << d->lsb);
    return 0;
}

/* Does the format of op (with the INSN fields) have the field id? */
static int has_field(unsigned op, unsigned id)
{
    return npu_isa_fields[id].op == NPU_OP_INSN || npu_isa_fields[id].op == op;
}

/* What encoding an opcode checks, derived once from the table: the ids of its fields (INSN's
 * included) and one id per npu_fields_t member the format does not fill, which must be zero.
 * Encoding and decoding run for every instruction emitted or modelled, so they do not search
 * the table. */
typedef struct op_plan {
    unsigned char own[NPU_NUM_FIELDS], other[NPU_NUM_FIELDS];
    unsigned nown, nother;
} op_plan_t;

static void plan_build(unsigned op, op_plan_t *p)
{
    p->nown = p->nother = 0;
    for (unsigned id = 0; id < NPU_NUM_FIELDS; id++) {
        int filled = 0, dup = 0;
        if (has_field(op, id)) {
            p->own[p->nown++] = (unsigned char)id;
            continue;
        }
        for (unsigned j = 0; j < NPU_NUM_FIELDS; j++) {
            if (npu_isa_fields[j].offset != npu_isa_fields[id].offset)
                continue;
            filled |= has_field(op, j);
            dup |= j < id && !has_field(op, j); /* an earlier id stands for this member */
        }
        if (!filled && !dup)
            p->other[p->nother++] = (unsigned char)id;
    }
}

/* The plan of an opcode (lazily built; the host is single-threaded). */
static const op_plan_t *op_plan(unsigned op)
{
    static op_plan_t plans[256];
    static unsigned char built[256];
    unsigned o = op & 0xFFu; /* callers pass an 8-bit opcode field or a named opcode */
    if (!built[o]) {
        plan_build(o, &plans[o]);
        built[o] = 1;
    }
    return &plans[o];
}

/* ---- encoding ------------------------------------------------------------------------- */

int npu_dram_stride_shift(unsigned pitch)
{
    unsigned wmax = field_mask(&npu_isa_fields[NPU_FLD_LOAD_dram_stride]),
             smax = field_mask(&npu_isa_fields[NPU_FLD_LOAD_stride_shift]);
    for (unsigned s = 0; s <= smax; s++)
        if (pitch % (1u << s) == 0 && (pitch >> s) <= wmax)
            return (int)s;
    return -1;
}

static int is_dma(unsigned op) { return op == NPU_OP_LOAD || op == NPU_OP_STORE; }

/* A LOAD / STORE's fields as the instruction holds them: dram_stride >> stride_shift (the given
 * shift, or the smallest that fits). -1 when the pitch cannot be held. */
static int dma_raw_stride(npu_fields_t *f)
{
    int s = f->stride_shift ? (int)f->stride_shift : npu_dram_stride_shift(f->dram_stride);
    if (s < 0 || s > 31 || f->dram_stride % (1u << s))
        return -1;
    f->stride_shift = (unsigned)s;
    f->dram_stride >>= s;
    return 0;
}

/* Every field of the opcode's format must fit its width; every other member must be zero. */
int npu_encode(const npu_fields_t *fin, npu_insn_t *out)
{
    npu_insn_t r = {{0, 0, 0, 0}};
    npu_fields_t raw = *fin;
    const npu_fields_t *f = &raw;
    const op_plan_t *p;
    if (!npu_op_name(f->op) || (is_dma(f->op) && dma_raw_stride(&raw) != 0))
        return -1;
    p = op_plan(f->op);
    for (unsigned i = 0; i < p->nown; i++)
        if (npu_insn_put(&r, p->own[i], member_get(f, p->own[i])) != 0)
            return -1;
    for (unsigned i = 0; i < p->nother; i++)
        if (member_get(f, p->other[i]))
            return -1;
    *out = r;
    return 0;
}

int npu_decode(const npu_insn_t *in, npu_fields_t *f)
{
    /* an unknown opcode's plan holds the INSN fields only: they are decoded, the call fails */
    const op_plan_t *p = op_plan(npu_insn_get(in, NPU_FLD_INSN_op));
    memset(f, 0, sizeof *f);
    for (unsigned i = 0; i < p->nown; i++)
        member_set(f, p->own[i], npu_insn_get(in, p->own[i]));
    if (is_dma(f->op))
        f->dram_stride <<= f->stride_shift; /* the pitch in bytes */
    return npu_op_name(f->op) ? 0 : -1;
}

/* LOAD and STORE share the DMA format (transposed: int16 elements for LOAD, int32 for STORE). */
static int enc_dma(npu_insn_t *out, unsigned op, unsigned tag, unsigned transpose, unsigned rows,
                   uint32_t dram_addr, unsigned spm_addr, unsigned spm_stride, unsigned row_bytes,
                   unsigned dram_stride)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = op;
    f.tag = tag;
    f.transpose = transpose;
    f.rows = rows;
    f.dram_addr = dram_addr;
    f.spm_addr = spm_addr;
    f.spm_stride = spm_stride;
    f.row_bytes = row_bytes;
    f.dram_stride = dram_stride;
    return npu_encode(&f, out);
}

int npu_enc_load(npu_insn_t *out, unsigned tag, int transpose, unsigned rows, uint32_t dram_addr,
                 unsigned spm_addr, unsigned spm_stride, unsigned row_bytes, unsigned dram_stride)
{
    return enc_dma(out, NPU_OP_LOAD, tag, transpose ? 1u : 0u, rows, dram_addr, spm_addr,
                   spm_stride, row_bytes, dram_stride);
}

int npu_enc_store(npu_insn_t *out, unsigned tag, unsigned rows, uint32_t dram_addr,
                  unsigned spm_addr, unsigned spm_stride, unsigned row_bytes, unsigned dram_stride)
{
    return enc_dma(out, NPU_OP_STORE, tag, 0, rows, dram_addr, spm_addr, spm_stride, row_bytes,
                   dram_stride);
}

int npu_enc_store_tr(npu_insn_t *out, unsigned tag, unsigned rows, uint32_t dram_addr,
                     unsigned spm_addr, unsigned spm_stride, unsigned row_bytes, unsigned dram_stride)
{
    return enc_dma(out, NPU_OP_STORE, tag, 1, rows, dram_addr, spm_addr, spm_stride, row_bytes,
                   dram_stride);
}

int npu_enc_ldw(npu_insn_t *out, unsigned wbank, unsigned mode, unsigned spm_addr,
                unsigned spm_stride, unsigned k, unsigned n)
{
    return npu_enc_ldw_cores(out, wbank, mode, spm_addr, spm_stride, k, n, 0);
}

int npu_enc_wave(npu_insn_t *out, unsigned wbank, unsigned mode, int acc, unsigned m,
                 unsigned spm_addr, unsigned spm_stride, unsigned k, unsigned n, unsigned obuf_addr)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_WAVE;
    f.wbank = wbank;
    f.mode = mode;
    f.acc = acc ? 1u : 0u;
    f.m = m;
    f.spm_addr = spm_addr;
    f.spm_stride = spm_stride;
    f.k = k;
    f.n = n;
    f.obuf_addr = obuf_addr;
    return npu_encode(&f, out);
}

int npu_enc_drain(npu_insn_t *out, unsigned rows, unsigned obuf_addr, unsigned spm_addr,
                  unsigned spm_stride)
{
    return npu_enc_drain_split(out, rows, obuf_addr, spm_addr, spm_stride, 0, 0);
}

int npu_enc_ldw_cores(npu_insn_t *out, unsigned wbank, unsigned mode, unsigned spm_addr,
                      unsigned spm_stride, unsigned k, unsigned n, unsigned core_mask)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LDW;
    f.wbank = wbank;
    f.mode = mode;
    f.spm_addr = spm_addr;
    f.spm_stride = spm_stride;
    f.k = k;
    f.n = n;
    f.core_mask = core_mask;
    return npu_encode(&f, out);
}

int npu_insn_drain_acc(npu_insn_t *in)
{
    if (npu_insn_op(in) != NPU_OP_DRAIN)
        return -1;
    return npu_insn_put(in, NPU_FLD_DRAIN_acc, 1);
}

int npu_insn_drain_narrow(npu_insn_t *in, unsigned shift)
{
    if (npu_insn_op(in) != NPU_OP_DRAIN || npu_insn_put(in, NPU_FLD_DRAIN_shift, shift) != 0)
        return -1;
    return npu_insn_put(in, NPU_FLD_DRAIN_narrow, 1);
}

int npu_insn_drain_pack(npu_insn_t *in, unsigned n)
{
    if (npu_insn_op(in) != NPU_OP_DRAIN || n == 0)
        return -1;
    return npu_insn_put(in, NPU_FLD_DRAIN_pack, n);
}

int npu_insn_k_lo(npu_insn_t *in, unsigned k_lo)
{
    switch (npu_insn_op(in)) {
    case NPU_OP_LDW: return npu_insn_put(in, NPU_FLD_LDW_k_lo, k_lo);
    case NPU_OP_WAVE: return npu_insn_put(in, NPU_FLD_WAVE_k_lo, k_lo);
    default: return -1;
    }
}

int npu_enc_fill(npu_insn_t *out, unsigned rows, unsigned spm_addr, unsigned spm_stride,
                 unsigned row_bytes)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_FILL;
    f.rows = rows;
    f.spm_addr = spm_addr;
    f.spm_stride = spm_stride;
    f.row_bytes = row_bytes;
    return npu_encode(&f, out);
}

int npu_enc_load_spm(npu_insn_t *out, unsigned tag, int transpose, unsigned rows, unsigned src_addr,
                     unsigned src_stride, unsigned spm_addr, unsigned spm_stride, unsigned row_bytes)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD_SPM;
    f.tag = tag;
    f.transpose = transpose ? 1u : 0u;
    f.rows = rows;
    f.src_addr = src_addr;
    f.src_stride = src_stride;
    f.spm_addr = spm_addr;
    f.spm_stride = spm_stride;
    f.row_bytes = row_bytes;
    return npu_encode(&f, out);
}

int npu_insn_lane_hi(npu_insn_t *in)
{
    switch (npu_insn_op(in)) {
    case NPU_OP_LDW: return npu_insn_put(in, NPU_FLD_LDW_lane_hi, 1);
    case NPU_OP_WAVE: return npu_insn_put(in, NPU_FLD_WAVE_lane_hi, 1);
    default: return -1;
    }
}

int npu_insn_ldw_mono(npu_insn_t *in)
{
    if (npu_insn_op(in) != NPU_OP_LDW)
        return -1;
    return npu_insn_put(in, NPU_FLD_LDW_mono, 1);
}

int npu_insn_bcast(npu_insn_t *in)
{
    if (npu_insn_op(in) != NPU_OP_WAVE)
        return -1;
    return npu_insn_put(in, NPU_FLD_WAVE_bcast, 1);
}

int npu_enc_drain_split(npu_insn_t *out, unsigned rows, unsigned obuf_addr, unsigned spm_addr,
                        unsigned spm_stride, unsigned split_rows, unsigned hi_rows)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_DRAIN;
    f.rows = rows;
    f.obuf_addr = obuf_addr;
    f.spm_addr = spm_addr;
    f.spm_stride = spm_stride;
    f.split_rows = split_rows;
    f.hi_rows = hi_rows;
    return npu_encode(&f, out);
}

int npu_mode_fits(unsigned mode, unsigned k, unsigned n, unsigned S)
{
    switch (mode) {
    case NPU_MODE_FW: return 1;
    case NPU_MODE_HSW: return k <= S;
    case NPU_MODE_VSW: return n <= S;
    case NPU_MODE_ISW: return k <= S && n <= S;
    default: return 0;
    }
}

int npu_wave_sets(unsigned mode, unsigned m, npu_wave_sets_t *ws)
{
    unsigned ha = (m + 1) / 2, hb = m - ha, qa = (ha + 1) / 2, qb = (hb + 1) / 2;
    memset(ws, 0, sizeof *ws);
    ws->amode = mode;
    ws->tiles = 1;
    switch (mode) {
    case NPU_MODE_FW:
        ws->len[0] = m;
        ws->cores[0] = 0xF;
        ws->obuf_rows = m;
        return 1;
    case NPU_MODE_HSW: /* top {0,1} rows [0,ha), bottom {2,3} rows [ha,m); wide layout */
        ws->len[0] = ha; ws->len[1] = hb;
        ws->start[1] = ha; ws->orow[1] = ha;
        ws->cores[0] = 0x3; ws->cores[1] = 0xC;
        ws->obuf_rows = m;
        return 2;
    case NPU_MODE_VSW: /* left {0,2} rows [0,ha) lanes 0..S-1, right {1,3} [ha,m) lanes S.. */
        ws->len[0] = ha; ws->len[1] = hb;
        ws->start[1] = ha; ws->lane_hi[1] = 1;
        ws->cores[0] = 0x5; ws->cores[1] = 0xA;
        ws->obuf_rows = ha;
        return 2;
    default: /* ISW: core 0 [0,qa), core 2 [qa,ha), core 1 [ha,ha+qb), core 3 [ha+qb,m) */
        ws->len[0] = qa; ws->len[1] = ha - qa; ws->len[2] = qb; ws->len[3] = hb - qb;
        ws->start[1] = qa; ws->start[2] = ha; ws->start[3] = ha + qb;
        ws->orow[1] = qa; ws->orow[3] = qb;
        ws->lane_hi[2] = ws->lane_hi[3] = 1;
        ws->cores[0] = 0x1; ws->cores[1] = 0x4; ws->cores[2] = 0x2; ws->cores[3] = 0x8;
        ws->obuf_rows = ha;
        return 4;
    }
}

int npu_wave_sets_f(const npu_fields_t *f, npu_wave_sets_t *ws)
{
    if (!f->bcast)
        return npu_wave_sets(f->mode, f->m, ws);
    /* the HSW sets of 2m rows, both reading rows [0, m) */
    npu_wave_sets(NPU_MODE_HSW, 2 * f->m, ws);
    ws->start[1] = 0;
    ws->tiles = 2;
    return 2;
}

int npu_enc_vec(npu_insn_t *out, unsigned vop, int wide, unsigned rows, unsigned a_addr,
                unsigned a_stride, unsigned b_addr, unsigned b_stride, unsigned d_addr,
                unsigned d_stride)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VEC;
    f.vop = vop;
    f.wide = wide ? 1u : 0u;
    f.rows = rows;
    f.a_addr = a_addr;
    f.a_stride = a_stride;
    f.b_addr = b_addr;
    f.b_stride = b_stride;
    f.d_addr = d_addr;
    f.d_stride = d_stride;
    return npu_encode(&f, out);
}

int npu_enc_vset(npu_insn_t *out, uint32_t alpha, uint32_t beta, unsigned len, unsigned shift)
{
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VSET;
    f.alpha = alpha;
    f.beta = beta;
    f.len = len;
    f.shift = shift;
    return npu_encode(&f, out);
}

int npu_enc_sync(npu_insn_t *out, unsigned op)
{
    npu_fields_t f;
    if (op != NPU_OP_SYNC_L && op != NPU_OP_SYNC_E && op != NPU_OP_SYNC_S)
        return -1;
    memset(&f, 0, sizeof f);
    f.op = op;
    return npu_encode(&f, out);
}

void npu_insn_tok(npu_insn_t *in, unsigned tok_flags) { in->w[0] |= tok_flags & NPU_TOK_MASK; }

void npu_insn_set_tok(npu_insn_t *in, unsigned tok_flags)
{
    in->w[0] = (in->w[0] & ~NPU_TOK_MASK) | (tok_flags & NPU_TOK_MASK);
}

/* ---- disassembly ---------------------------------------------------------------------- */

/* Appends to buf like snprintf, tracking the would-be length in *len. */
static void app(char *buf, size_t n, int *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void app(char *buf, size_t n, int *len, const char *fmt, ...)
{
    va_list ap;
    size_t off = (size_t)*len;
    int r;
    va_start(ap, fmt);
    if (off < n)
        r = vsnprintf(buf + off, n - off, fmt, ap);
    else
        r = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (r > 0)
        *len += r;
}

static const char *name_or(const char *s, const char *dflt) { return s ? s : dflt; }

static void disasm_vec(const npu_fields_t *f, char *buf, size_t n, int *len)
{
    if (f->op == NPU_OP_VSET) {
        app(buf, n, len, " len=%u alpha=0x%08x beta=0x%08x shift=%u", f->len, (unsigned)f->alpha,
            (unsigned)f->beta, f->shift);
        return;
    }
    app(buf, n, len, " %s w%u rows=%u a=0x%04x+%u*r b=0x%04x+%u*r d=0x%04x+%u*r",
        name_or(npu_vop_name(f->vop), "?"), f->wide ? 32u : 16u, f->rows, f->a_addr, f->a_stride,
        f->b_addr, f->b_stride, f->d_addr, f->d_stride);
}

int npu_disasm(const npu_insn_t *in, char *buf, size_t n)
{
    npu_fields_t f;
    int len = 0;
    if (n)
        buf[0] = '\0';
    if (npu_decode(in, &f) != 0) {
        app(buf, n, &len, "ILLEGAL op=0x%02x w=%08x_%08x_%08x_%08x", f.op, (unsigned)in->w[0],
            (unsigned)in->w[1], (unsigned)in->w[2], (unsigned)in->w[3]);
        return len;
    }
    app(buf, n, &len, "%s", npu_op_name(f.op));
    switch (f.op) {
    case NPU_OP_LOAD:
        app(buf, n, &len, " %s%s rows=%u bytes=%u dram=0x%06x+%u*r spm=0x%04x+%u*r",
            name_or(npu_tag_name(f.tag), "?"), f.transpose ? " trans" : "", f.rows, f.row_bytes,
            (unsigned)f.dram_addr, f.dram_stride, f.spm_addr, f.spm_stride);
        break;
    case NPU_OP_FILL:
        app(buf, n, &len, " rows=%u bytes=%u spm=0x%04x+%u*r", f.rows, f.row_bytes, f.spm_addr,
            f.spm_stride);
        break;
    case NPU_OP_LOAD_SPM:
        app(buf, n, &len, " %s%s rows=%u bytes=%u src=0x%04x+%u*r spm=0x%04x+%u*r",
            name_or(npu_tag_name(f.tag), "?"), f.transpose ? " trans" : "", f.rows, f.row_bytes,
            f.src_addr, f.src_stride, f.spm_addr, f.spm_stride);
        break;
    case NPU_OP_STORE:
        app(buf, n, &len, " %s%s rows=%u bytes=%u spm=0x%04x+%u*r dram=0x%06x+%u*r",
            name_or(npu_tag_name(f.tag), "?"), f.transpose ? " trans" : "", f.rows, f.row_bytes,
            f.spm_addr, f.spm_stride, (unsigned)f.dram_addr, f.dram_stride);
        break;
    case NPU_OP_LDW:
        app(buf, n, &len, " %s k=%u n=%u spm=0x%04x+%u*r bank=%u",
            name_or(npu_mode_name(f.mode), "?"), f.k, f.n, f.spm_addr, f.spm_stride, f.wbank);
        if (f.core_mask)
            app(buf, n, &len, " cores=0x%x", f.core_mask);
        if (f.lane_hi)
            app(buf, n, &len, " b_hi");
        if (f.mono)
            app(buf, n, &len, " mono");
        if (f.k_lo)
            app(buf, n, &len, " k_lo=%u", f.k_lo);
        break;
    case NPU_OP_WAVE:
        app(buf, n, &len, " %s m=%u k=%u n=%u spm=0x%04x+%u*i bank=%u%s obuf=%u",
            name_or(npu_mode_name(f.mode), "?"), f.m, f.k, f.n, f.spm_addr, f.spm_stride, f.wbank,
            f.acc ? " acc" : "", f.obuf_addr);
        if (f.lane_hi)
            app(buf, n, &len, " a_hi");
        if (f.bcast)
            app(buf, n, &len, " bcast");
        if (f.k_lo)
            app(buf, n, &len, " k_lo=%u", f.k_lo);
        break;
    case NPU_OP_DRAIN:
        app(buf, n, &len, " rows=%u obuf=%u spm=0x%04x+%u*%s", f.rows, f.obuf_addr, f.spm_addr,
            f.spm_stride, f.pack ? "seg" : "r");
        if (f.split_rows || f.hi_rows)
            app(buf, n, &len, " split=%u hi=%u", f.split_rows, f.hi_rows);
        if (f.pack)
            app(buf, n, &len, " pack=%u", f.pack);
        if (f.acc)
            app(buf, n, &len, " acc");
        if (f.narrow)
            app(buf, n, &len, " narrow");
        if (f.shift)
            app(buf, n, &len, " shift=%u", f.shift);
        break;
    case NPU_OP_VEC:
    case NPU_OP_VSET: disasm_vec(&f, buf, n, &len); break;
    default:
        break;
    }
    if (f.pop_prev | f.pop_next | f.push_prev | f.push_next) {
        const char *sep = "";
        app(buf, n, &len, " [");
        if (f.pop_prev) { app(buf, n, &len, "%spop_prev", sep); sep = " "; }
        if (f.pop_next) { app(buf, n, &len, "%spop_next", sep); sep = " "; }
        if (f.push_prev) { app(buf, n, &len, "%spush_prev", sep); sep = " "; }
        if (f.push_next) { app(buf, n, &len, "%spush_next", sep); }
        app(buf, n, &len, "]");
    }
    return len;
}
