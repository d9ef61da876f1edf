/* A rank killed mid-write leaves the last synced state readable.
 *   mpirun -np N t_par_kill write URL    (the last rank SIGKILLs itself after the second writes)
 *   t_par_kill verify URL N              (serial: the synced records read back exactly) */
#include <mpi.h>
#include <signal.h>
#include "../check.h"
#include "netcdf_par.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, ncid, t, x, v, dims[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3) return 2;
    if (!strcmp(argv[1], "write")) {
        OK(nc_create_par(argv[2], NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
        OK(nc_def_dim(ncid, "t", NC_UNLIMITED, &t));
        OK(nc_def_dim(ncid, "x", 4, &x));
        dims[0] = t; dims[1] = x;
        OK(nc_def_var(ncid, "u", NC_INT, 2, dims, &v));
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){3, 4}));
        OK(nc_enddef(ncid));
        int rec[8];
        for (int i = 0; i < 8; i++) rec[i] = rank * 8 + i;
        OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(2 * rank), 0}, (size_t[]){2, 4}, rec));
        OK(nc_sync(ncid));
        for (int i = 0; i < 8; i++) rec[i] = -1;
        OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(2 * rank), 0}, (size_t[]){2, 4}, rec));
        OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(2 * n + 2 * rank), 0}, (size_t[]){2, 4}, rec));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == n - 1) raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD);
        nc_close(ncid);
        MPI_Finalize();
        return 0;
    }
    int want = argc > 3 ? atoi(argv[3]) : 1;
    size_t len;
    OK(nc_open(argv[2], NC_NOWRITE, &ncid));
    OK(nc_inq_dimid(ncid, "t", &t));
    OK(nc_inq_dimlen(ncid, t, &len));
    CHECK(len == (size_t)(2 * want));
    OK(nc_inq_varid(ncid, "u", &v));
    int *all = malloc(sizeof(int) * 8 * (size_t)want), good = 1;
    OK(nc_get_var_int(ncid, v, all));
    for (int i = 0; i < 8 * want; i++) good &= all[i] == i;
    CHECK(good);
    OK(nc_close(ncid));
    free(all);
    printf("t_par_kill verify (%d ranks wrote): %d passed, %d failed\n", want, check_passed, check_failed);
    MPI_Finalize();
    return check_failed ? 1 : 0;
}
