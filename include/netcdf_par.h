/* netcdf_par.h: parallel I/O over MPI (nczarr-rs parallel library, libnetcdf_mpi).
 * The same declarations as netcdf-c's netcdf_par.h; link with -lnetcdf_mpi. */
#ifndef NETCDF_PAR_H
#define NETCDF_PAR_H 1

#include <mpi.h>

#ifndef EXTERNL
#define EXTERNL extern
#endif

/* nc_var_par_access modes. */
#define NC_INDEPENDENT 0
#define NC_COLLECTIVE 1

#if defined(__cplusplus)
extern "C" {
#endif

EXTERNL int nc_create_par(const char *path, int cmode, MPI_Comm comm, MPI_Info info, int *ncidp);
EXTERNL int nc_open_par(const char *path, int mode, MPI_Comm comm, MPI_Info info, int *ncidp);
EXTERNL int nc_var_par_access(int ncid, int varid, int par_access);
EXTERNL int nc_create_par_fortran(const char *path, int cmode, int comm, int info, int *ncidp);
EXTERNL int nc_open_par_fortran(const char *path, int mode, int comm, int info, int *ncidp);

#if defined(__cplusplus)
}
#endif

#endif /* NETCDF_PAR_H */
