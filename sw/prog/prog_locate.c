/* prog_locate.c - the first-divergence locator of a GEMM program; see prog_locate.h. */
#include "prog/prog_locate.h"

#include <stdio.h>
#include <string.h>

/* The element inside its tile: row and column in the tile, the index of the STORE that writes
 * it (its tile's; with the C band its m-tile's), and its staging word: the buffer's first word
 * and the word in the row. */
typedef struct elem {
    int r_in, c_in;
    long t;
    unsigned base, word;
} elem_t;

/* The t-th STORE of C; -1 when there is none. */
static long find_store(const npu_insn_t *prog, size_t n, unsigned tag_c, long t)
{
    long seen = -1;
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        if (npu_decode(&prog[i], &f) == 0 && f.op == NPU_OP_STORE && f.tag == tag_c && ++seen == t)
            return (long)i;
    }
    return -1;
}

/* Does DRAIN f move the element's C staging word (2 per 2S-column block, S int32 each)? Sets
 * *orow to the element's OBUF row (skinny: lanes 0..S-1 of row r -> row r, S..2S-1 -> row r +
 * split, and loc->skinny_hi to its half). */
static int drain_hits(const npu_fields_t *f, unsigned word, unsigned w0, const elem_t *el,
                      npu_gemm_loc_t *loc, unsigned *orow)
{
    unsigned r = (unsigned)el->r_in;
    if (!f->split_rows) { /* normal: words w0, w0+1 of each row */
        *orow = f->obuf_addr + r;
        return f->pack || word == w0 || word == w0 + 1; /* packed: the tile's one DRAIN */
    }
    loc->skinny_hi = r >= f->split_rows;
    *orow = f->obuf_addr + (r < f->split_rows ? r : r - f->split_rows);
    return f->pack || word == w0;
}

/* The DRAIN that moved the element: back over the tile's DRAINs from its STORE. 0 or -1. */
static int find_drain(const npu_insn_t *prog, unsigned tag_c, const elem_t *el, npu_gemm_loc_t *loc)
{
    for (long i = loc->store_pc - 1; i >= 0; i--) {
        npu_fields_t f;
        unsigned orow;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_STORE && f.tag == tag_c)
            break; /* the previous tile */
        if (f.op == NPU_OP_DRAIN &&
            drain_hits(&f, el->word, f.spm_addr - el->base, el, loc, &orow)) {
            loc->drain_pc = i;
            loc->obuf_row = orow;
            return 0;
        }
    }
    return -1;
}

/* WAVEs before the DRAIN writing that OBUF row, back to the previous DRAIN of the same rows (or
 * the wave that started the accumulation). */
static void find_waves(const npu_insn_t *prog, npu_gemm_loc_t *loc)
{
    for (long i = loc->drain_pc - 1; i >= 0; i--) {
        npu_fields_t f;
        npu_wave_sets_t ws;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_DRAIN && f.obuf_addr <= loc->obuf_row && loc->obuf_row < f.obuf_addr + f.rows)
            break;
        if (f.op != NPU_OP_WAVE)
            continue;
        npu_wave_sets_f(&f, &ws);
        if (f.obuf_addr <= loc->obuf_row && loc->obuf_row < f.obuf_addr + ws.obuf_rows) {
            if (loc->wave_pc[1] < 0)
                loc->wave_pc[1] = i;
            loc->wave_pc[0] = i;
            loc->waves++;
            loc->modes |= 1u << f.mode;
            if (!f.acc)
                break; /* the first k-block starts the accumulation */
        }
    }
}

/* The cores of the last WAVE whose outputs hold the element: the row set that wrote its OBUF row
 * and lane (wide: lane = column in the 2S-block; skinny: the drain's half), and of that set's
 * cores the ones in the element's column (left {0,2} / right {1,3}) for wide sets. */
static void find_cores(const npu_insn_t *prog, unsigned S, unsigned lane, npu_gemm_loc_t *loc)
{
    npu_fields_t f;
    npu_wave_sets_t ws;
    npu_decode(&prog[loc->wave_pc[1]], &f);
    npu_wave_sets_f(&f, &ws);
    int skinny = ws.amode == NPU_MODE_VSW || ws.amode == NPU_MODE_ISW;
    if (skinny)
        lane = lane % S + (loc->skinny_hi ? S : 0);
    unsigned side = lane < S ? 0x5u : 0xAu;
    for (int j = 0; j < 4; j++) {
        unsigned r0 = f.obuf_addr + ws.orow[j];
        if (!ws.len[j] || loc->obuf_row < r0 || loc->obuf_row >= r0 + ws.len[j])
            continue;
        if (skinny && (lane >= S) != (ws.lane_hi[j] != 0))
            continue;
        loc->set = j;
        loc->cores = skinny ? ws.cores[j] : ws.cores[j] & side;
        break;
    }
}

/* "a+b+c" of the names of the set bits of mask (name(i) for bit i < 4). */
static void bit_names(unsigned mask, const char *(*name)(unsigned), char *buf, size_t n)
{
    buf[0] = '\0';
    for (unsigned i = 0; i < 4; i++)
        if (mask >> i & 1u) {
            size_t l = strlen(buf);
            snprintf(buf + l, n - l, "%s%s", l ? "+" : "", name(i));
        }
}

static const char *core_name(unsigned c)
{
    static const char *const names[4] = {"0", "1", "2", "3"};
    return names[c];
}

static void render(const npu_gemm_loc_t *loc, char *buf, size_t bufn)
{
    char ms[32], cs[16];
    bit_names(loc->cores, core_name, cs, sizeof cs);
    bit_names(loc->modes, npu_mode_name, ms, sizeof ms);
    snprintf(buf, bufn, "tile (%d,%d) n-block %d: STORE #%ld, DRAIN #%ld, %d WAVE%s #%ld..#%ld in %s, "
             "OBUF row %u, core %s (row set %d)", loc->m_tile, loc->n_tile, loc->n_block,
             loc->store_pc, loc->drain_pc, loc->waves, loc->waves == 1 ? "" : "s",
             loc->wave_pc[0], loc->wave_pc[1], ms[0] ? ms : "-", loc->obuf_row,
             cs[0] ? cs : "?", loc->set);
}

int npu_prog_locate_gemm(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                    const npu_insn_t *prog, size_t n, int row, int col, npu_gemm_loc_t *loc,
                    char *buf, size_t bufn)
{
    unsigned tag_c = args->tag_c ? args->tag_c : NPU_TAG_Y, S = (unsigned)cfg->s;
    elem_t el;
    memset(loc, 0, sizeof *loc);
    loc->store_pc = loc->drain_pc = loc->wave_pc[0] = loc->wave_pc[1] = -1;
    if (row < 0 || col < 0 || row >= plan->M || col >= plan->N || plan->Mt < 1 || plan->Nt < 1)
        return -1;
    loc->m_tile = npu_gemm_mtile_of(plan, row);
    loc->n_tile = col / plan->Nt;
    el.r_in = row - npu_gemm_m0(plan, loc->m_tile);
    el.c_in = col % plan->Nt;
    el.t = npu_gemm_tile_index(plan, loc->m_tile, loc->n_tile);
    loc->n_block = el.c_in / plan->F;
    el.base = plan->spm_c[(unsigned)el.t % 2u];
    el.word = (unsigned)(2 * loc->n_block) + (unsigned)((el.c_in % plan->F) / (int)S);
    if (plan->cband) { /* band m_tile % 2, all of N in its rows; one STORE per m-tile */
        el.t = loc->m_tile;
        el.base = plan->spm_c[(unsigned)loc->m_tile % 2u];
        el.word += 2u * (unsigned)(loc->n_tile * plan->Nt / plan->F);
    }
    loc->store_pc = find_store(prog, n, tag_c, el.t);
    if (loc->store_pc < 0 || find_drain(prog, tag_c, &el, loc) != 0)
        return -1;
    find_waves(prog, loc);
    if (loc->wave_pc[1] >= 0)
        find_cores(prog, S, (unsigned)(el.c_in % plan->F), loc);
    if (buf && bufn)
        render(loc, buf, bufn);
    return 0;
}
