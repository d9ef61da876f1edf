/* The variadic functions: the netCDF-2 error globals with nc_advise, and nclog.
 * Variadic definitions are not available in stable Rust, so this stays in C; everything
 * else of the v2 API is Rust (src/ffi/misc.rs). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int ncerr = 0;
int ncopts = 3; /* NC_FATAL | NC_VERBOSE, as netcdf-c */

const char *nc_strerror(int err);

void nc_advise(const char *routine, int err, const char *fmt, ...)
{
    va_list args;
    ncerr = err > 0 ? -31 /* NC_SYSERR */ : err;
    if (ncopts & 2) {
        fprintf(stderr, "%s: ", routine ? routine : "");
        if (fmt) {
            va_start(args, fmt);
            vfprintf(stderr, fmt, args);
            va_end(args);
        }
        if (err != 0)
            fprintf(stderr, ": %s", nc_strerror(err));
        fputc('\n', stderr);
        fflush(stderr);
    }
    if ((ncopts & 1) && err != 0)
        exit(ncopts);
}

/* netcdf-c's internal logger, imported by Debian's ncgen: prints only when NCTRACING is set. */
void nclog(int tag, const char *fmt, ...)
{
    va_list args;
    const char *env = getenv("NCTRACING");
    static const char *tags[] = {"Note", "Warning", "Error", "Debug"};
    if (env == NULL || atoi(env) <= 0 || fmt == NULL)
        return;
    fprintf(stderr, "%s: ", (tag >= 0 && tag < 4) ? tags[tag] : "Log");
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
}
