/* Crash safety (reliability.md §3.7): a writer killed with SIGKILL after nc_sync leaves a
 * dataset that opens and returns everything written up to that sync. */
#include "check.h"
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>

/* Big chunks (256 KiB of ints, one per time step) go into a zip store's next archive as they
 * are put: a kill leaves that temp archive beside the archive. */
#define BIG 65536
static int big[BIG];

static void big_writer(const char *u)
{
    int ncid, t, x, v;
    if (nc_create(u, 0, &ncid) || nc_def_dim(ncid, "time", NC_UNLIMITED, &t) || nc_def_dim(ncid, "x", BIG, &x)) _exit(2);
    int dims[2] = {t, x};
    size_t chunks[2] = {1, BIG};
    if (nc_def_var(ncid, "v", NC_INT, 2, dims, &v) || nc_def_var_chunking(ncid, v, NC_CHUNKED, chunks)) _exit(2);
    for (size_t r = 0; r < 6; r++) {
        for (int i = 0; i < BIG; i++) big[i] = (int)r * 1000000 + i;
        size_t start[2] = {r, 0}, count[2] = {1, BIG};
        if (nc_put_vara_int(ncid, v, start, count, big)) _exit(2);
        if (r == 2 && nc_sync(ncid)) _exit(2);
    }
    raise(SIGKILL);
}

/* Temp archives of `name` in `dir` (".<name>.nczarr-tmp-..."). */
static int temps(const char *dir, const char *name)
{
    char stem[256];
    snprintf(stem, sizeof stem, ".%s.nczarr-tmp-", name);
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strncmp(e->d_name, stem, strlen(stem)) == 0;
    if (d) closedir(d);
    return n;
}

static void writer(const char *u)
{
    int ncid, t, x, v;
    if (nc_create(u, 0, &ncid) || nc_def_dim(ncid, "time", NC_UNLIMITED, &t) || nc_def_dim(ncid, "x", 8, &x)) _exit(2);
    int dims[2] = {t, x};
    if (nc_def_var(ncid, "v", NC_INT, 2, dims, &v) || nc_def_var_deflate(ncid, v, 1, 1, 1)) _exit(2);
    int row[8];
    for (size_t r = 0; r < 70; r++) {
        for (int i = 0; i < 8; i++) row[i] = (int)r * 100 + i;
        size_t start[2] = {r, 0}, count[2] = {1, 8};
        if (nc_put_vara_int(ncid, v, start, count, row)) _exit(2);
        if (r == 49 && nc_sync(ncid)) _exit(2);
    }
    raise(SIGKILL);
}

/* Opens `u`, finds "v": the length of its time dimension. */
static size_t open_v(const char *u, int mode, int *ncid, int *v)
{
    size_t len = 0;
    OK(nc_open(u, mode, ncid));
    OK(nc_inq_dimlen(*ncid, 0, &len));
    OK(nc_inq_varid(*ncid, "v", v));
    return len;
}

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    const char *urls[2] = {url(dir, "crash.file", "nczarr,file"), url(dir, "crash.zip", "nczarr,zip")};
    /* t_fork.c covers forks after the library is in use; here the writers come first. */
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        if (pid == 0) writer(urls[k]);
        int status;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    for (int k = 0; k < 2; k++) {
        const char *u = urls[k];
        int ncid, v;
        CHECK(open_v(u, NC_NOWRITE, &ncid, &v) == 50);
        int all[50][8];
        OK(nc_get_var_int(ncid, v, &all[0][0]));
        CHECK(all[0][0] == 0 && all[49][7] == 4907 && all[25][3] == 2503);
        OK(nc_close(ncid));
    }

    /* Zip with big chunks: killed after 3 synced and 3 unsynced steps. The synced state opens;
     * the killed writer's temp archive goes when the next writer begins one. */
    const char *zu = url(dir, "crash_big.zip", "nczarr,zip");
    pid_t pid = fork();
    if (pid == 0) big_writer(zu);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(temps(dir, "crash_big.zip") == 1);
    int ncid, v;
    CHECK(open_v(zu, NC_WRITE, &ncid, &v) == 3);
    size_t start[2] = {2, 0}, count[2] = {1, BIG};
    OK(nc_get_vara_int(ncid, v, start, count, big));
    CHECK(big[0] == 2000000 && big[BIG - 1] == 2000000 + BIG - 1);
    for (int i = 0; i < BIG; i++) big[i] = -i;
    start[0] = 3;
    OK(nc_put_vara_int(ncid, v, start, count, big));
    OK(nc_close(ncid));
    CHECK(temps(dir, "crash_big.zip") == 0);
    CHECK(open_v(zu, NC_NOWRITE, &ncid, &v) == 4);
    OK(nc_get_vara_int(ncid, v, start, count, big));
    CHECK(big[0] == 0 && big[BIG - 1] == -(BIG - 1));
    start[0] = 1;
    OK(nc_get_vara_int(ncid, v, start, count, big));
    CHECK(big[7] == 1000007);
    OK(nc_close(ncid));
    DONE();
}
