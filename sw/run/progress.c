/* progress.c - the progress line and SIGINT; see progress.h. */
#define _POSIX_C_SOURCE 200809L /* sigaction, clock_gettime */
#include "run/progress.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw/npu_defs.h"

static volatile sig_atomic_t g_interrupted;
static int g_show; /* stderr is a terminal and the CLI asked for the line */

static void on_sigint(int sig)
{
    (void)sig;
    g_interrupted = 1;
}

void npu_progress_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills a run that does not stop */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    g_show = isatty(STDERR_FILENO);
}

int npu_progress_interrupted(void) { return g_interrupted != 0; }

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void npu_progress_start(npu_progress_t *p, npu_sim_t *sim, size_t n)
{
    memset(p, 0, sizeof *p);
    p->t0 = p->last = wall_s();
    p->c0 = npu_sim_cycle(sim);
    p->n = n;
}

void npu_progress_update(npu_progress_t *p, npu_sim_t *sim)
{
    double t, el, frac;
    uint64_t c;
    unsigned l, e, s;
    if (!g_show || (t = wall_s()) - p->last < 1.0)
        return;
    p->last = t;
    el = t - p->t0;
    c = npu_sim_cycle(sim) - p->c0;
    l = npu_sim_csr_read(sim, NPU_CSR_PC_L);
    e = npu_sim_csr_read(sim, NPU_CSR_PC_E);
    s = npu_sim_csr_read(sim, NPU_CSR_PC_S);
    /* the three queues walk the same program: their mean position is the share done */
    frac = p->n ? ((double)l + e + s) / (3.0 * (double)p->n) : 0;
    fprintf(stderr, "\r%llu cycles, %.0f cycles/s, PC L %u E %u S %u of %zu, ",
            (unsigned long long)c, el > 0 ? (double)c / el : 0, l, e, s, p->n);
    if (frac > 0.001)
        fprintf(stderr, "~%.0f s left\033[K", el * (1 - frac) / frac);
    else
        fprintf(stderr, "time left unknown\033[K");
    fflush(stderr);
    p->shown = 1;
}

void npu_progress_end(npu_progress_t *p)
{
    if (p->shown) /* the report starts on a clean line */
        fprintf(stderr, "\r\033[K");
    p->shown = 0;
}
