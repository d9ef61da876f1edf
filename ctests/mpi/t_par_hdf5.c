/* Built against Debian's parallel netcdf-c (its netcdf_par.h and libnetcdf_mpi): a netCDF-4/HDF5
 * file written by all ranks with nc_create_par, and (argument 2, under the preload library) a
 * Zarr dataset written in the same run. Run plain, the HDF5 part checks Debian's library; with
 * LD_PRELOAD=libnczarr_mpi_preload.so the HDF5 file must still go through netcdf-c. */
#include <mpi.h>
#include "../check.h"
#include "netcdf_par.h"

static void roundtrip(const char *path, int rank, int n)
{
    int ncid, d, v, fmt;
    OK(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_def_dim(ncid, "d", (size_t)(4 * n), &d));
    OK(nc_def_var(ncid, "v", NC_INT, 1, &d, &v));
    OK(nc_enddef(ncid));
    OK(nc_var_par_access(ncid, v, NC_COLLECTIVE));
    int mine[4] = {rank * 4, rank * 4 + 1, rank * 4 + 2, rank * 4 + 3};
    OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(4 * rank)}, (size_t[]){4}, mine));
    OK(nc_close(ncid));
    OK(nc_open_par(path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_inq_format_extended(ncid, &fmt, NULL));
    printf("rank %d: %s format %d\n", rank, path, fmt);
    int *all = malloc(sizeof(int) * 4 * (size_t)n), good = 1;
    OK(nc_get_var_int(ncid, v, all));
    for (int i = 0; i < 4 * n; i++) good &= all[i] == i;
    CHECK(good);
    free(all);
    OK(nc_close(ncid));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, failed = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int a = 1; a < argc; a++) roundtrip(argv[a], rank, n);
    MPI_Allreduce(&check_failed, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("t_par_hdf5 (%d ranks): %d passed, %d failed\n", n, check_passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
