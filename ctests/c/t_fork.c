/* Crash consistency at random kill points (reliability.md §4.7 K1–K5, K7), with the parent
 * using the library between forks: each child is forked from a process whose worker threads
 * already exist, which is how a test harness or a pre-forking server meets the library.
 *
 *  K1/K2  killed right after nc_create / nc_enddef: NC_ENOTNC or an openable dataset of fill.
 *  K5     a writer appends records (one chunk each) and rewrites a generation-stamped array,
 *         syncing as it goes; the parent SIGKILLs it after a pseudo-random delay. Every reopen
 *         must succeed once a sync happened, every record below the stored length must hold
 *         exactly what was written, and every chunk of the rewritten array must be one whole
 *         generation (old or new, never torn). Directory and zip drivers.
 *  K7     the file size limit (RLIMIT_FSIZE, the portable stand-in for a full disk) stops a
 *         flush: nc_sync/nc_close fail with an errno code and the last synced state survives.
 */
#include "check.h"
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#define X 64      /* elements per record (one chunk per record) */
#define G 16      /* rows of the generation array, one chunk each */

static unsigned rng_state = 12345;
static unsigned rng(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) & 0xffffff;
}

/* The child: create, then append records and rewrite generations forever, syncing often. */
static void writer(const char *u)
{
    int ncid, t, x, g, rec, gen;
    if (nc_create(u, NC_CLOBBER, &ncid)) _exit(2);
    if (nc_def_dim(ncid, "time", NC_UNLIMITED, &t) || nc_def_dim(ncid, "x", X, &x) || nc_def_dim(ncid, "g", G, &g)) _exit(2);
    int d1[2] = {t, x}, d2[2] = {g, x};
    size_t c1[2] = {1, X};
    if (nc_def_var(ncid, "rec", NC_INT, 2, d1, &rec) || nc_def_var_chunking(ncid, rec, NC_CHUNKED, c1)) _exit(2);
    if (nc_def_var(ncid, "gen", NC_INT, 2, d2, &gen) || nc_def_var_chunking(ncid, gen, NC_CHUNKED, c1)) _exit(2);
    if (nc_def_var_deflate(ncid, gen, 1, 1, 1)) _exit(2);
    if (nc_enddef(ncid) || nc_sync(ncid)) _exit(2);
    int row[X], all[G][X];
    for (int r = 0;; r++) {
        for (int i = 0; i < X; i++) row[i] = r * 1000 + i;
        size_t start[2] = {(size_t)r, 0};
        if (nc_put_vara_int(ncid, rec, start, c1, row)) _exit(3);
        for (int j = 0; j < G; j++)
            for (int i = 0; i < X; i++) all[j][i] = r + 1;
        if (nc_put_var_int(ncid, gen, &all[0][0])) _exit(3);
        if (r % 3 == 2 && nc_sync(ncid)) _exit(4);
    }
}

/* What the parent finds after the kill; returns the stored record count (or -1: no dataset). */
static int verify(const char *u)
{
    int ncid, rec, gen, status = nc_open(u, NC_NOWRITE, &ncid);
    /* Killed before the dataset's folder existed (a slow start on a loaded machine): an
     * explicit URL to nothing is NC_ENOOBJECT, a plain path ENOENT. */
    if (status == NC_ENOTNC || status == NC_ENOTFOUND || status == NC_ENOOBJECT || status == ENOENT) return -1;
    OK(status);
    if (status) return -1;
    /* Killed between nc_create and the first nc_enddef (K1 on a slow start): an empty
     * dataset, as early_kills expects. */
    int nvars = -1;
    OK(nc_inq_nvars(ncid, &nvars));
    if (nvars == 0) {
        OK(nc_close(ncid));
        return -1;
    }
    size_t len = 0;
    OK(nc_inq_dimlen(ncid, 0, &len));
    OK(nc_inq_varid(ncid, "rec", &rec));
    OK(nc_inq_varid(ncid, "gen", &gen));
    int bad_records = 0, torn = 0;
    int row[X];
    for (size_t r = 0; r < len; r++) {
        size_t start[2] = {r, 0}, count[2] = {1, X};
        if (nc_get_vara_int(ncid, rec, start, count, row)) { bad_records++; continue; }
        for (int i = 0; i < X; i++)
            if (row[i] != (int)r * 1000 + i) { bad_records++; break; }
    }
    int all[G][X];
    OK(nc_get_var_int(ncid, gen, &all[0][0]));
    for (int j = 0; j < G; j++) {
        for (int i = 1; i < X; i++)
            if (all[j][i] != all[j][0]) torn++;
    }
    CHECK(bad_records == 0);
    CHECK(torn == 0);
    OK(nc_close(ncid));
    return (int)len;
}

static void kill_after(const char *u, long micros)
{
    pid_t pid = fork();
    if (pid == 0) writer(u);
    struct timespec ts = {micros / 1000000, (micros % 1000000) * 1000};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    /* The child must still have been running: exits 2–4 would be writer failures. */
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void early_kills(const char *dir)
{
    /* K1: killed right after nc_create. */
    const char *u1 = url(dir, "k1.file", "nczarr,file");
    pid_t pid = fork();
    if (pid == 0) {
        int ncid;
        if (nc_create(u1, 0, &ncid) == 0) raise(SIGKILL);
        _exit(2);
    }
    int status, ncid, nvars = -1;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    status = nc_open(u1, NC_NOWRITE, &ncid);
    CHECK(status == NC_ENOTNC || status == NC_NOERR);
    if (status == NC_NOERR) {
        OK(nc_inq_nvars(ncid, &nvars));
        CHECK(nvars == 0);
        OK(nc_close(ncid));
    }
    /* K2: killed after nc_enddef, before any data: the arrays read as fill. */
    const char *u2 = url(dir, "k2.file", "nczarr,file");
    pid = fork();
    if (pid == 0) {
        int v, d;
        if (nc_create(u2, 0, &ncid) || nc_def_dim(ncid, "x", 5, &d) || nc_def_var(ncid, "v", NC_SHORT, 1, &d, &v)) _exit(2);
        if (nc_enddef(ncid) == 0) raise(SIGKILL);
        _exit(2);
    }
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    status = nc_open(u2, NC_NOWRITE, &ncid);
    CHECK(status == NC_ENOTNC || status == NC_NOERR);
    if (status == NC_NOERR) {
        short v[5] = {0};
        int varid;
        OK(nc_inq_varid(ncid, "v", &varid));
        OK(nc_get_var_short(ncid, varid, v));
        CHECK(v[0] == NC_FILL_SHORT && v[4] == NC_FILL_SHORT);
        OK(nc_close(ncid));
    }
}

static void disk_full(const char *u)
{
    int ncid, d, v;
    /* The synced state: 4 records of 16 KiB. */
    OK(nc_create(u, 0, &ncid));
    OK(nc_def_dim(ncid, "t", NC_UNLIMITED, &d));
    int dims[1] = {d};
    OK(nc_def_var(ncid, "v", NC_INT, 1, dims, &v));
    size_t chunk[1] = {4096};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunk));
    static int data[4096 * 8];
    for (int i = 0; i < 4096 * 8; i++) data[i] = i;
    size_t start[1] = {0}, count[1] = {4096 * 4};
    OK(nc_put_vara_int(ncid, v, start, count, data));
    OK(nc_close(ncid));

    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {8192, 8192};
        setrlimit(RLIMIT_FSIZE, &lim);
        int id, vv;
        if (nc_open(u, NC_WRITE, &id) || nc_inq_varid(id, "v", &vv)) _exit(10);
        for (int i = 0; i < 4096 * 8; i++) data[i] = -i;
        size_t s[1] = {0}, c[1] = {4096 * 8};
        int put = nc_put_vara_int(id, vv, s, c, data);
        int sync = put ? put : nc_sync(id);
        int close = nc_close(id);
        /* Exit code 0: a flush failed with an errno-style code and close reported it too
         * (or the put itself failed); anything else tells which step misbehaved. */
        if (sync == NC_NOERR) _exit(11);
        if (sync != EFBIG && sync != NC_EIO && sync != ENOSPC) _exit(12);
        (void)close;
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) fprintf(stderr, "disk-full child: status %d\n", status);
    /* The previous synced state is intact. */
    OK(nc_open(u, NC_NOWRITE, &ncid));
    size_t len;
    OK(nc_inq_dimlen(ncid, d, &len));
    CHECK(len == 4096 * 4);
    static int back[4096 * 4];
    OK(nc_get_vara_int(ncid, v, start, count, back));
    int same = 1;
    for (int i = 0; i < 4096 * 4; i++)
        if (back[i] != i) same = 0;
    CHECK(same);
    OK(nc_close(ncid));
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    /* Use the library before the first fork so its worker threads exist. */
    {
        int ncid, d, v;
        OK(nc_create(url(dir, "warm.file", "nczarr,file"), 0, &ncid));
        OK(nc_def_dim(ncid, "x", 1 << 16, &d));
        OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
        size_t chunk[1] = {4096};
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, chunk));
        OK(nc_def_var_deflate(ncid, v, 0, 1, 1));
        static int w[1 << 16];
        OK(nc_put_var_int(ncid, v, w));
        OK(nc_close(ncid));
    }
    early_kills(dir);
    const char *modes[2] = {"nczarr,file", "nczarr,zip"};
    int runs = 0, opened = 0;
    for (int m = 0; m < 2; m++) {
        for (int k = 0; k < 40; k++) {
            char name[64];
            snprintf(name, sizeof name, "k5_%d_%d", m, k);
            const char *u = url(dir, name, modes[m]);
            kill_after(u, 2000 + (long)(rng() % 60000));
            if (verify(u) >= 0) opened++;
            runs++;
        }
    }
    /* Most runs get past the first sync within the delays above. */
    CHECK(opened > runs / 2);
    printf("kill runs: %d, reopened with data: %d\n", runs, opened);
    disk_full(url(dir, "k7.file", "nczarr,file"));
    disk_full(url(dir, "k7.zip", "nczarr,zip"));
    DONE();
}
