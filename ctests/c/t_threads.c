/* Threads (reliability.md §4.6): the library may be called from many threads at once.
 *  T1  16 threads each open/read/close its own store repeatedly: correct data every time.
 *  T2  16 threads read disjoint hyperslabs of one open ncid: correct data.
 *  T3  one thread rewrites whole chunks with a generation stamp while others read the same
 *      ncid: every chunk read is one generation (old or new), never torn.
 *  T4  one thread closes an ncid other threads are reading: they get data or NC_EBADID,
 *      and the process survives (no use after free).
 */
#include "check.h"
#include <pthread.h>
#include <stdatomic.h>

#define NT 16
#define ROWS 64
#define COLS 256

static const char *dir;
static atomic_int failures;
static int shared_ncid, shared_var;
static int t1_rounds;

/* Resident memory in KiB (Linux). */
static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

static void fail(const char *what, int code)
{
    atomic_fetch_add(&failures, 1);
    fprintf(stderr, "thread failure: %s (%d %s)\n", what, code, nc_strerror(code));
}

/* A store of v(ROWS, COLS) int, chunks 8×64, zlib: v[r][c] = seed * 1000000 + r * COLS + c. */
static int make_store(const char *u, int seed)
{
    int ncid, d[2], v, st;
    if ((st = nc_create(u, NC_CLOBBER, &ncid))) return st;
    if ((st = nc_def_dim(ncid, "r", ROWS, &d[0])) || (st = nc_def_dim(ncid, "c", COLS, &d[1]))) return st;
    if ((st = nc_def_var(ncid, "v", NC_INT, 2, d, &v))) return st;
    size_t chunk[2] = {8, 64};
    if ((st = nc_def_var_chunking(ncid, v, NC_CHUNKED, chunk)) || (st = nc_def_var_deflate(ncid, v, 1, 1, 1))) return st;
    static _Thread_local int data[ROWS][COLS];
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) data[r][c] = seed * 1000000 + r * COLS + c;
    if ((st = nc_put_var_int(ncid, v, &data[0][0]))) return st;
    return nc_close(ncid);
}

static void *own_store(void *arg)
{
    int id = (int)(long)arg;
    char mine[4096]; /* not check.h's url(): its buffers are shared between threads */
    snprintf(mine, sizeof mine, "file://%s/t1_%d#mode=%s", dir, id, id % 2 ? "nczarr,zip" : "nczarr,file");
    int st = make_store(mine, id);
    if (st) { fail("T1 create", st); return NULL; }
    static _Thread_local int back[ROWS][COLS];
    for (int round = 0; round < t1_rounds; round++) {
        int ncid, v;
        if ((st = nc_open(mine, NC_NOWRITE, &ncid))) { fail("T1 open", st); return NULL; }
        if ((st = nc_inq_varid(ncid, "v", &v)) || (st = nc_get_var_int(ncid, v, &back[0][0]))) { fail("T1 read", st); }
        for (int r = 0; r < ROWS; r += 7)
            for (int c = 0; c < COLS; c += 13)
                if (back[r][c] != id * 1000000 + r * COLS + c) { fail("T1 value", 0); r = ROWS; break; }
        if ((st = nc_close(ncid))) fail("T1 close", st);
    }
    return NULL;
}

static void *disjoint_rows(void *arg)
{
    int id = (int)(long)arg;
    int rows = ROWS / NT;
    static _Thread_local int part[ROWS / NT][COLS];
    for (int round = 0; round < 200; round++) {
        size_t start[2] = {(size_t)(id * rows), 0}, count[2] = {(size_t)rows, COLS};
        int st = nc_get_vara_int(shared_ncid, shared_var, start, count, &part[0][0]);
        if (st) { fail("T2 read", st); return NULL; }
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < COLS; c++)
                if (part[r][c] != 7 * 1000000 + (id * rows + r) * COLS + c) { fail("T2 value", 0); return NULL; }
    }
    return NULL;
}

static atomic_int writer_done;

static void *generation_writer(void *arg)
{
    (void)arg;
    static int data[ROWS][COLS];
    for (int g = 1; g <= 150; g++) {
        for (int r = 0; r < ROWS; r++)
            for (int c = 0; c < COLS; c++) data[r][c] = g;
        int st = nc_put_var_int(shared_ncid, shared_var, &data[0][0]);
        if (st) { fail("T3 write", st); break; }
        if (g % 10 == 0 && (st = nc_sync(shared_ncid))) { fail("T3 sync", st); break; }
    }
    atomic_store(&writer_done, 1);
    return NULL;
}

static void *generation_reader(void *arg)
{
    (void)arg;
    static _Thread_local int chunk[8][64];
    int reads = 0;
    while (!atomic_load(&writer_done) || reads < 10) {
        for (int cr = 0; cr < ROWS; cr += 8)
            for (int cc = 0; cc < COLS; cc += 64) {
                size_t start[2] = {(size_t)cr, (size_t)cc}, count[2] = {8, 64};
                int st = nc_get_vara_int(shared_ncid, shared_var, start, count, &chunk[0][0]);
                if (st) { fail("T3 read", st); return NULL; }
                for (int i = 1; i < 8 * 64; i++)
                    if ((&chunk[0][0])[i] != chunk[0][0]) { fail("T3 torn chunk", 0); return NULL; }
            }
        reads++;
    }
    return NULL;
}

static atomic_int reads_ok, reads_badid;

static void *reader_until_closed(void *arg)
{
    (void)arg;
    static _Thread_local int all[ROWS][COLS];
    for (int i = 0; i < 100000; i++) {
        int st = nc_get_var_int(shared_ncid, shared_var, &all[0][0]);
        if (st == NC_EBADID) { atomic_fetch_add(&reads_badid, 1); return NULL; }
        if (st) { fail("T4 read", st); return NULL; }
        if (all[5][5] != 9 * 1000000 + 5 * COLS + 5) { fail("T4 value", 0); return NULL; }
        atomic_fetch_add(&reads_ok, 1);
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *), int n)
{
    pthread_t th[NT + 1];
    for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, fn, (void *)(long)i);
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
    dir = argv[1];
    /* T1: a warm-up pass, then 1000 rounds per thread; resident memory must not grow with
     * the number of open/close cycles. */
    t1_rounds = 100;
    run_threads(own_store, NT);
    long before = rss_kib();
    t1_rounds = 1000;
    run_threads(own_store, NT);
    long after = rss_kib();
    CHECK(atomic_load(&failures) == 0);
    CHECK(after - before < 16 * 1024);
    printf("T1: 16 threads x 1000 open/read/close, resident %ld -> %ld KiB\n", before, after);

    /* T2 */
    const char *u2 = url(dir, "t2", "nczarr,file");
    OK(make_store(u2, 7));
    OK(nc_open(u2, NC_NOWRITE, &shared_ncid));
    OK(nc_inq_varid(shared_ncid, "v", &shared_var));
    atomic_store(&failures, 0);
    run_threads(disjoint_rows, NT);
    CHECK(atomic_load(&failures) == 0);
    OK(nc_close(shared_ncid));

    /* T3: one writer, seven readers on the same ncid. */
    const char *u3 = url(dir, "t3", "nczarr,file");
    OK(make_store(u3, 0));
    OK(nc_open(u3, NC_WRITE, &shared_ncid));
    OK(nc_inq_varid(shared_ncid, "v", &shared_var));
    {
        /* Generation 0 everywhere before the threads start: make_store's values differ within
         * a chunk, and a reader scheduled before the writer's first put would see them. */
        static int zeros[ROWS][COLS];
        OK(nc_put_var_int(shared_ncid, shared_var, &zeros[0][0]));
    }
    atomic_store(&failures, 0);
    {
        pthread_t w, r[7];
        pthread_create(&w, NULL, generation_writer, NULL);
        for (int i = 0; i < 7; i++) pthread_create(&r[i], NULL, generation_reader, NULL);
        pthread_join(w, NULL);
        for (int i = 0; i < 7; i++) pthread_join(r[i], NULL);
    }
    CHECK(atomic_load(&failures) == 0);
    OK(nc_close(shared_ncid));
    {
        int ncid, v, all[ROWS][COLS];
        OK(nc_open(u3, NC_NOWRITE, &ncid));
        OK(nc_inq_varid(ncid, "v", &v));
        OK(nc_get_var_int(ncid, v, &all[0][0]));
        CHECK(all[0][0] == 150 && all[ROWS - 1][COLS - 1] == 150);
        OK(nc_close(ncid));
    }

    /* T4: close under the readers' feet. */
    const char *u4 = url(dir, "t4", "nczarr,file");
    OK(make_store(u4, 9));
    OK(nc_open(u4, NC_NOWRITE, &shared_ncid));
    OK(nc_inq_varid(shared_ncid, "v", &shared_var));
    atomic_store(&failures, 0);
    {
        pthread_t r[8];
        for (int i = 0; i < 8; i++) pthread_create(&r[i], NULL, reader_until_closed, NULL);
        while (atomic_load(&reads_ok) < 50) sched_yield();
        OK(nc_close(shared_ncid));
        for (int i = 0; i < 8; i++) pthread_join(r[i], NULL);
    }
    CHECK(atomic_load(&failures) == 0);
    CHECK(atomic_load(&reads_badid) == 8);
    /* The library still works after all that. */
    {
        int ncid, v, x;
        OK(nc_open(u4, NC_NOWRITE, &ncid));
        OK(nc_inq_varid(ncid, "v", &v));
        size_t idx[2] = {5, 5};
        OK(nc_get_var1_int(ncid, v, idx, &x));
        CHECK(x == 9 * 1000000 + 5 * COLS + 5);
        OK(nc_close(ncid));
    }
    DONE();
}
