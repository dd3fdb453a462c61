// npu_sim.cpp - Verilator harness: clocks the verilated `npu_top` against the C DRAM model and
// exposes the C API of npu_sim.h. The project's only C++ file; compiled once per configuration
// with the build's npu_params.h on the include path (NPU_CFG_S, NPU_CFG_DRAM_ADDR_BITS, ...).
// Define NPU_TRACE (and verilate with --trace-fst) to enable npu_sim_trace().

#include "npu_sim.h"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "Vnpu_top.h"
#if VM_COVERAGE
#include <unistd.h>

#include "verilated_cov.h"
#endif
#include "npu_params.h"
#include "verilated.h"
#ifdef NPU_TRACE
#include "verilated_fst_c.h"
#endif

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npu_sim.cpp views Verilator port words as little-endian bytes"
#endif

namespace {

constexpr unsigned kBeat = NPU_CFG_BEAT_BYTES; // one DRAM beat: 4*S*BEAT_WORDS bytes
constexpr unsigned kResetCycles = 4;

// Byte view of a port whatever its C++ type: CData/SData/IData/QData (integers, little-endian)
// or VlWide<N> (N 32-bit words, word 0 = bits [31:0]). Byte i = bits [8i+7:8i].
template <typename T>
inline uint8_t *port_bytes(T &p) {
    static_assert(std::is_integral<T>::value, "unexpected Verilator port type");
    return reinterpret_cast<uint8_t *>(&p);
}
template <std::size_t N>
inline uint8_t *port_bytes(VlWide<N> &p) {
    return reinterpret_cast<uint8_t *>(p.data());
}
template <typename T>
constexpr std::size_t port_size() {
    return sizeof(typename std::remove_reference<T>::type);
}

// The verilated data ports must be one DRAM beat wide (catches an -GS / -GBEAT_WORDS /
// npu_params.h mismatch).
static_assert(port_size<decltype(std::declval<Vnpu_top &>().m_r_data)>() == kBeat,
              "m_r_data width != NPU_CFG_BEAT_BYTES: RTL verilated with another S or BEAT_WORDS than npu_params.h");
static_assert(port_size<decltype(std::declval<Vnpu_top &>().m_w_data)>() == kBeat,
              "m_w_data width != NPU_CFG_BEAT_BYTES: RTL verilated with another S or BEAT_WORDS than npu_params.h");
static_assert(port_size<decltype(std::declval<Vnpu_top &>().m_w_strb)>() * 8 >= kBeat,
              "m_w_strb narrower than NPU_CFG_BEAT_BYTES bits");

// The model and the Verilator runtime are compiled with -DVL_PRINTF=npu_sim_vl_printf (Makefile):
// every $display goes through here, so the first "NPU_ASSERT <path>: <msg>" line (rtl/npu_assert.vh)
// is kept for npu_sim_assert_msg() and the cycle it was printed in for the report.
char g_assert_msg[512];
uint64_t g_assert_cycle;
const uint64_t *g_cur_cycle;

}  // namespace

extern "C" void npu_sim_vl_printf(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    std::fputs(buf, stdout);
    if (!g_assert_msg[0] && std::strncmp(buf, "NPU_ASSERT ", 11) == 0) {
        std::size_t n = std::strcspn(buf, "\n");
        if (n >= sizeof g_assert_msg) n = sizeof g_assert_msg - 1;
        std::memcpy(g_assert_msg, buf, n);
        g_assert_msg[n] = '\0';
        g_assert_cycle = g_cur_cycle ? *g_cur_cycle : 0;
        std::fflush(stdout);
    }
}

#ifndef VL_USER_FINISH
#error "compile npu_sim.cpp and the model with the Makefile's VHOOKS (-DVL_USER_FINISH ...)"
#endif
// -DVL_USER_FINISH (Makefile): $finish only marks the context finished. Verilator's own vl_finish
// prints a banner and calls exit(0) on a second $finish (two assertions firing in one cycle),
// which would end a test process with a success code.
void vl_finish(const char *filename, int linenum, const char *hier) VL_MT_UNSAFE {
    (void)filename;
    (void)linenum;
    (void)hier;
    Verilated::threadContextp()->gotFinish(true);
}

struct npu_sim {
    VerilatedContext *ctx;
    Vnpu_top *top;
    dram_t *dram;
    uint64_t cycle;
    uint8_t *r_data_port;  // byte view of top->m_r_data
    dram_in_t in;          // w_data / w_strb point into the model's port storage
#ifdef NPU_TRACE
    VerilatedFstC *tfp;
    uint64_t trace_start, trace_end;
#endif
};

static inline void trace_close(npu_sim *s) {
#ifdef NPU_TRACE
    if (s->tfp) {
        s->tfp->close();
        delete s->tfp;
        s->tfp = nullptr;
    }
#else
    (void)s;
#endif
}

// One clock cycle; see the contract in npu_sim.h.
static inline void step(npu_sim *s) {
    Vnpu_top *t = s->top;
    if (s->ctx->gotFinish()) return;  // an RTL assertion stopped the model: it stays frozen
    dram_out_t o;
    dram_drive(s->dram, &o);
    t->m_ar_ready = o.ar_ready;
    t->m_r_valid = o.r_valid;
    if (o.r_valid) std::memcpy(s->r_data_port, o.r_data, kBeat);
    t->m_r_last = o.r_last;
    t->m_r_id = o.r_id;
    t->m_r_resp = o.r_resp;
    t->m_aw_ready = o.aw_ready;
    t->m_w_ready = o.w_ready;
    t->m_b_valid = o.b_valid;
    t->m_b_resp = o.b_resp;
    t->clk = 0;
    s->ctx->time(10 * s->cycle);
    t->eval();
#ifdef NPU_TRACE
    bool dump = s->tfp && s->cycle >= s->trace_start && (!s->trace_end || s->cycle < s->trace_end);
    if (dump) s->tfp->dump(10 * s->cycle);
#endif

    dram_in_t &in = s->in;
    in.ar_valid = t->m_ar_valid;
    in.ar_addr = t->m_ar_addr;
    in.ar_len = t->m_ar_len;
    in.ar_id = t->m_ar_id;
    in.r_ready = t->m_r_ready;
    in.aw_valid = t->m_aw_valid;
    in.aw_addr = t->m_aw_addr;
    in.aw_len = t->m_aw_len;
    in.w_valid = t->m_w_valid;
    in.w_last = t->m_w_last;
    in.b_ready = t->m_b_ready;
    dram_sample(s->dram, &in);

    t->clk = 1;
    s->ctx->time(10 * s->cycle + 5);
    t->eval();
#ifdef NPU_TRACE
    if (dump) s->tfp->dump(10 * s->cycle + 5);
    if (s->tfp && s->trace_end && s->cycle + 1 >= s->trace_end) trace_close(s);
#endif
    s->cycle++;
}

extern "C" {

npu_sim_t *npu_sim_open(const npu_dram_timing_t *t) {
    npu_dram_timing_t def;
    if (!t) {
        def.bytes_per_cycle = NPU_CFG_DRAM_BW;
        def.latency = NPU_CFG_DRAM_LATENCY;
        def.burst_cost = NPU_CFG_DRAM_BURST_COST;
        def.stall_pct = 0;
        def.seed = 1;
        t = &def;
    }
    npu_sim *s = new (std::nothrow) npu_sim();
    if (!s) return nullptr;
    s->dram = dram_create(NPU_CFG_DRAM_ADDR_BITS, kBeat, t);
    if (!s->dram) {
        delete s;
        return nullptr;
    }
    s->ctx = new VerilatedContext;
    g_assert_msg[0] = '\0';
    g_cur_cycle = &s->cycle;
#ifdef NPU_TRACE
    s->ctx->traceEverOn(true);
#endif
    // Vnpu_top is cache-line aligned; plain new only honours that from C++17 on.
    void *mem = nullptr;
    const std::size_t align = alignof(Vnpu_top) > sizeof(void *) ? alignof(Vnpu_top) : sizeof(void *);
    if (posix_memalign(&mem, align, sizeof(Vnpu_top))) {
        delete s->ctx;
        dram_free(s->dram);
        delete s;
        return nullptr;
    }
    s->top = new (mem) Vnpu_top(s->ctx, "npu");
    Vnpu_top *top = s->top;
    s->r_data_port = port_bytes(top->m_r_data);
    std::memset(&s->in, 0, sizeof s->in);
    s->in.w_data = port_bytes(top->m_w_data);
    s->in.w_strb = port_bytes(top->m_w_strb);

    top->clk = 0;
    top->rst_n = 0;
    top->csr_addr = 0;
    top->csr_wdata = 0;
    top->csr_we = 0;
    top->eval();
    for (unsigned i = 0; i < kResetCycles; i++) step(s);
    top->rst_n = 1;
    dram_reset(s->dram);  // forget anything sampled while the NPU was in reset
    return s;
}

void npu_sim_close(npu_sim_t *s) {
    if (!s) return;
    if (g_cur_cycle == &s->cycle) g_cur_cycle = nullptr;
    // Verilator routes scope teardown through Verilated::threadContextp(), which the newest
    // VerilatedContext set: with several simulators open, closing one out of order would tear its
    // scopes down in another (possibly freed) context and deadlock on its mutex.
    Verilated::threadContextp(s->ctx);
    trace_close(s);
    s->top->final();
#if VM_COVERAGE
    // coverage builds (make coverage): each simulator instance writes its own counts
    if (const char *dir = std::getenv("NPU_COV_DIR")) {
        static unsigned n = 0;
        char path[512];
        std::snprintf(path, sizeof path, "%s/cov_%ld_%u.dat", dir, (long)getpid(), n++);
        s->ctx->coveragep()->write(path);
    }
#endif
    s->top->~Vnpu_top();
    std::free(s->top);
    delete s->ctx;
    dram_free(s->dram);
    delete s;
}

uint8_t *npu_sim_dram(npu_sim_t *s, size_t *bytes) { return dram_mem(s->dram, bytes); }

void npu_sim_csr_write(npu_sim_t *s, uint32_t addr, uint32_t v) {
    s->top->csr_addr = addr & 0xFFFu;
    s->top->csr_wdata = v;
    s->top->csr_we = 1;
    step(s);
    s->top->csr_we = 0;
}

uint32_t npu_sim_csr_read(npu_sim_t *s, uint32_t addr) {
    s->top->csr_addr = addr & 0xFFFu;
    s->top->eval();
    return s->top->csr_rdata;
}

int npu_sim_run(npu_sim_t *s, uint64_t max_cycles) {
    if (s->ctx->gotFinish()) return -1;
    if (s->top->halted) return 1;
    for (uint64_t i = 0; i < max_cycles; i++) {
        step(s);
        if (s->ctx->gotFinish()) return -1;
        if (s->top->halted) return 1;
    }
    return 0;
}

void npu_sim_step(npu_sim_t *s, uint64_t n) {
    for (uint64_t i = 0; i < n && !s->ctx->gotFinish(); i++) step(s);
}

int npu_sim_finished(npu_sim_t *s) { return s->ctx->gotFinish() ? 1 : 0; }

const char *npu_sim_assert_msg(npu_sim_t *s, uint64_t *cycle) {
    (void)s;
    if (!g_assert_msg[0]) return nullptr;
    if (cycle) *cycle = g_assert_cycle;
    return g_assert_msg;
}

uint64_t npu_sim_cycle(npu_sim_t *s) { return s->cycle; }

int npu_sim_trace(npu_sim_t *s, const char *fst_path, uint64_t start_cycle, uint64_t end_cycle) {
#ifdef NPU_TRACE
    trace_close(s);
    if (!fst_path || (end_cycle && end_cycle <= start_cycle)) return -1;
    s->tfp = new VerilatedFstC;
    s->top->trace(s->tfp, 99);
    s->tfp->open(fst_path);
    if (!s->tfp->isOpen()) {
        delete s->tfp;
        s->tfp = nullptr;
        return -1;
    }
    s->trace_start = start_cycle;
    s->trace_end = end_cycle;
    return 0;
#else
    (void)s;
    (void)fst_path;
    (void)start_cycle;
    (void)end_cycle;
    return -1;
#endif
}

void npu_sim_dram_stats(npu_sim_t *s, uint64_t *rd_beats, uint64_t *wr_beats, uint64_t *rd_bursts,
                        uint64_t *wr_bursts, uint64_t *stall_cycles) {
    dram_stats_t st;
    dram_get_stats(s->dram, &st);
    if (rd_beats) *rd_beats = st.rd_beats;
    if (wr_beats) *wr_beats = st.wr_beats;
    if (rd_bursts) *rd_bursts = st.rd_bursts;
    if (wr_bursts) *wr_bursts = st.wr_bursts;
    if (stall_cycles) *stall_cycles = st.stall_cycles;
}

unsigned npu_sim_beat_bytes(void) { return kBeat; }

dram_t *npu_sim_dram_model(npu_sim_t *s) { return s->dram; }

int npu_sim_burst_hook(npu_sim_t *s, dram_burst_fn fn, void *ctx) {
    dram_set_burst_hook(s->dram, fn, ctx);
    return 0;
}

}  // extern "C"
