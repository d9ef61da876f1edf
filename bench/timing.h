/* What the timed bench programs share: a monotonic clock, and NC() for a netCDF call that must
 * succeed (main returns 1 with the call and its message otherwise). */
#ifndef NCZARR_BENCH_TIMING_H
#define NCZARR_BENCH_TIMING_H
#include <stdio.h>
#include <time.h>
#include <netcdf.h>

static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define NC(call) do { int s_ = (call); if (s_) { fprintf(stderr, "%s: %s\n", #call, nc_strerror(s_)); return 1; } } while (0)
#endif
