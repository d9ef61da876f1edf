/* Parallel write/read benchmark: N ranks write then read one 256 MiB float variable in 256 KiB
 * chunks (64 rows x 1024 columns), through netcdf_par.h. Built against Debian's parallel
 * netcdf-c and run either plainly (an .nc path: netCDF-4/HDF5 through parallel HDF5) or with
 * our preload library in front (a Zarr URL: ours). Prints "write <s> read <s>" from rank 0,
 * each the slowest rank's time between barriers.
 *
 *   par <path> <aligned|split> <indep|coll> [MiB]
 * aligned: rank r owns rows [r*R/n, (r+1)*R/n), whole chunks; split: the boundaries move half a
 * chunk, so every boundary chunk is written by two ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netcdf.h>
#include <netcdf_par.h>

#define COLS 4096
#define CHUNK_ROWS 64

static void die(int st, const char *what)
{
    if (st) {
        fprintf(stderr, "%s: %s\n", what, nc_strerror(st));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 4) return 2;
    const char *path = argv[1];
    int split = !strcmp(argv[2], "split"), coll = !strcmp(argv[3], "coll");
    size_t mib = argc > 4 ? (size_t)atoi(argv[4]) : 256, rows = mib * 1024 * 1024 / 4 / COLS;
    size_t first = rows * (size_t)rank / (size_t)n, last = rows * (size_t)(rank + 1) / (size_t)n;
    if (split) {
        if (rank > 0) first += CHUNK_ROWS / 2;
        if (rank < n - 1) last += CHUNK_ROWS / 2;
    }
    size_t count = last - first;
    float *buf = malloc(count * COLS * sizeof *buf);
    for (size_t i = 0; i < count * COLS; i++) buf[i] = (float)(first * COLS + i);
    int ncid, dims[2], v;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    die(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid), "create");
    die(nc_def_dim(ncid, "y", rows, &dims[0]), "def_dim");
    die(nc_def_dim(ncid, "x", COLS, &dims[1]), "def_dim");
    die(nc_def_var(ncid, "v", NC_FLOAT, 2, dims, &v), "def_var");
    die(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){CHUNK_ROWS, COLS / 4}), "chunking");
    die(nc_def_var_fill(ncid, v, NC_NOFILL, NULL), "nofill");
    die(nc_enddef(ncid), "enddef");
    die(nc_var_par_access(ncid, v, coll ? NC_COLLECTIVE : NC_INDEPENDENT), "par_access");
    die(nc_put_vara_float(ncid, v, (size_t[]){first, 0}, (size_t[]){count, COLS}, buf), "put");
    die(nc_close(ncid), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    memset(buf, 0, count * COLS * sizeof *buf);
    die(nc_open_par(path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid), "open");
    die(nc_var_par_access(ncid, v, coll ? NC_COLLECTIVE : NC_INDEPENDENT), "par_access");
    die(nc_get_vara_float(ncid, v, (size_t[]){first, 0}, (size_t[]){count, COLS}, buf), "get");
    die(nc_close(ncid), "close");
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    int good = 1;
    for (size_t i = 0; i < count * COLS; i++) good &= buf[i] == (float)(first * COLS + i);
    int all = 0;
    MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) printf("write %.4f read %.4f %s\n", t1 - t0, t2 - t1, all ? "ok" : "WRONG");
    free(buf);
    MPI_Finalize();
    return all ? 0 : 1;
}
