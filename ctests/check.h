/* A minimal test harness for the C tests: each CHECK counts as one test; main() ends with
 * DONE(), which prints the closing "N passed, M failed" line and sets the exit status. */
#ifndef NCZARR_CHECK_H
#define NCZARR_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "netcdf.h"

static int check_passed, check_failed;

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (cond) {                                                                \
            check_passed++;                                                        \
        } else {                                                                   \
            check_failed++;                                                        \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                          \
    } while (0)

/* A call that must return exactly `want` (0 = NC_NOERR). */
#define EXPECT(want, call)                                                         \
    do {                                                                           \
        int got_ = (call);                                                         \
        if (got_ == (want)) {                                                      \
            check_passed++;                                                        \
        } else {                                                                   \
            check_failed++;                                                        \
            fprintf(stderr, "%s:%d: FAILED: %s returned %d (%s), expected %d\n",   \
                    __FILE__, __LINE__, #call, got_, nc_strerror(got_), (want));   \
        }                                                                          \
    } while (0)

#define OK(call) EXPECT(NC_NOERR, call)

#define DONE()                                                                     \
    do {                                                                           \
        printf("%s: %d passed, %d failed\n", __FILE__, check_passed, check_failed);\
        return check_failed ? 1 : 0;                                               \
    } while (0)

/* A dataset URL in the test's scratch directory (argv[1]). */
static char url_buf[8][4096];
static int url_next;
static inline const char *url(const char *dir, const char *name, const char *mode)
{
    char *b = url_buf[url_next++ % 8];
    snprintf(b, sizeof url_buf[0], "file://%s/%s#mode=%s", dir, name, mode);
    return b;
}
static inline const char *path_in(const char *dir, const char *name)
{
    char *b = url_buf[url_next++ % 8];
    snprintf(b, sizeof url_buf[0], "%s/%s", dir, name);
    return b;
}
#endif
