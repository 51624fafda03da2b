/*
 * fuzz_executor.c - libFuzzer harness: the pipeline executor.  The input picks a
 * schedule, pp, vp and microbatches, and each stage's F, B, W and F&B times and
 * sends; the run must end (no deadlock) or refuse with a usage error, never go
 * below its own lower bounds, and never run two ops of a rank at once.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modules.h"

static void require(bool ok)
{
    if (!ok)
        abort();
}

/* the next byte of the input, or 0 past its end */
static unsigned byte(const uint8_t *d, size_t n, size_t *at)
{
    return *at < n ? d[(*at)++] : 0u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t at = 0;
    ppl_passes st[16];
    double hop[16];
    ppl_pipe_in in;
    memset(&in, 0, sizeof in);
    in.schedule = (int)(byte(data, size, &at) % PPL_SCHEDULE_COUNT);
    in.pp = 1 + byte(data, size, &at) % 16;
    in.vp = 1 + byte(data, size, &at) % 4;
    in.microbatches = byte(data, size, &at) % 64; /* 0 must be refused */
    in.group = byte(data, size, &at) % 8;
    for (int64_t k = 0; k < in.pp; k++) {
        /* times of 0 .. 2.55 s, F&B at most the passes alone */
        double f = byte(data, size, &at) / 100.0, b = byte(data, size, &at) / 100.0,
               w = byte(data, size, &at) / 100.0;
        st[k] = (ppl_passes){f, b, w, (f + b + w) * (byte(data, size, &at) / 255.0)};
        hop[k] = byte(data, size, &at) / 1000.0;
    }
    in.stage = st;
    in.hop_s = hop;
    /* the configurations the cost model runs: the schedule's rules (pipeline.c) */
    const ppl_schedule_row *row = ppl_schedule_of(in.schedule);
    if (row->chunks)
        in.vp = row->chunks;
    else if (in.schedule != PPL_SCHEDULE_1F1B)
        in.vp = 1;
    ppl_pipe_out out;
    ppl_error err;
    ppl_status rc = ppl_pipe_run(&in, true, &out, &err);
    if (rc != PPL_OK) {
        require(rc == PPL_EUSAGE && err.message[0] != '\0');
        return 0;
    }
    require(isfinite(out.time_s) && out.time_s >= out.bound_s * (1.0 - 1e-12));
    /* the run without events (a line's own loop or sweep, or the memo): the same
     * figures, but for the rounding of a sweep's carried periods (linesweep.h) */
    ppl_pipe_out quick;
    require(ppl_pipe_run(&in, false, &quick, &err) == PPL_OK &&
            fabs(quick.time_s - out.time_s) <= ppl_steady_bound_s(in.microbatches, out.time_s) &&
            quick.peak_in_flight == out.peak_in_flight && quick.peak_rank == out.peak_rank);
    ppl_pipe_out_free(&quick);
    require(out.bound_s == ppl_pipe_bound_s(&in));
    /* a rank's events come in the order it runs them: each starts after the last */
    double last_end[16] = {0};
    for (size_t i = 0; i < out.n_events; i++) {
        const ppl_pipe_event *e = &out.events[i];
        require(e->rank >= 0 && e->rank < in.pp && e->start_s <= e->end_s &&
                e->end_s <= out.time_s && e->start_s >= last_end[e->rank] - 1e-12);
        last_end[e->rank] = e->end_s;
    }
    ppl_pipe_out_free(&out);
    return 0;
}
