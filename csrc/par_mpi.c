/* The MPI shim of the parallel library (libnetcdf_mpi.so.19 and its preload variant).
 *
 * The Rust core never links MPI: it sees a communicator as the function table
 * `struct nczarr_par_comm` (src/collective.rs). This file, compiled with mpicc, is the only
 * code that calls MPI: it duplicates the caller's communicator (so our messages never mix
 * with the application's), fills the table, and hands it to nczarr_par_create/open.
 *
 * Built with -DNCZARR_PRELOAD for the LD_PRELOAD variant: names that are not Zarr go to the
 * real netcdf-c's nc_create_par/nc_open_par behind us (found with dlsym(RTLD_NEXT)).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NC_EPARINIT (-115)
#define NC_ENOPAR (-114)

struct nczarr_par_comm {
    void *ctx;
    int rank;
    int size;
    int (*barrier)(void *ctx);
    int (*allreduce_max)(void *ctx, uint64_t *values, size_t n);
    int (*alltoallv)(void *ctx, const uint8_t *send, const uint64_t *send_counts, uint8_t **recv, uint64_t *recv_counts);
    void (*free_buf)(uint8_t *buf);
    void (*release)(void *ctx);
};

struct nczarr_par_hooks {
    int (*comm_from_fortran)(int fcomm, struct nczarr_par_comm *out);
};

extern int nczarr_par_create(const char *path, int cmode, const struct nczarr_par_comm *comm, int *ncidp);
extern int nczarr_par_open(const char *path, int mode, const struct nczarr_par_comm *comm, int *ncidp);
extern void nczarr_par_register(struct nczarr_par_hooks *hooks);
#ifdef NCZARR_PRELOAD
extern int nczarr_par_forward(const char *path, int creating);
extern int nczarr_par_claim(int status, int *ncidp, int creating);
#endif

struct ctx {
    MPI_Comm comm;
    int size;
};

static int shim_barrier(void *c) { return MPI_Barrier(((struct ctx *)c)->comm); }

static int shim_allreduce_max(void *c, uint64_t *values, size_t n) {
    if (n == 0) return MPI_SUCCESS;
    if (n > INT_MAX) return MPI_ERR_COUNT;
    return MPI_Allreduce(MPI_IN_PLACE, values, (int)n, MPI_UINT64_T, MPI_MAX, ((struct ctx *)c)->comm);
}

/* Counts travel as 64-bit numbers; the data as MPI_BYTE with int counts and displacements, so
 * one exchange moves at most INT_MAX bytes per rank (larger ones fail with MPI_ERR_COUNT, and
 * the collective call reports NC_EMPI on every rank). */
static int shim_alltoallv(void *c, const uint8_t *send, const uint64_t *send_counts, uint8_t **recv, uint64_t *recv_counts) {
    struct ctx *x = c;
    int n = x->size, rc, i;
    int *sc = malloc(4 * sizeof(int) * (size_t)n);
    if (!sc) return MPI_ERR_NO_MEM;
    int *sd = sc + n, *rcn = sc + 2 * n, *rd = sc + 3 * n;
    rc = MPI_Alltoall(send_counts, 1, MPI_UINT64_T, recv_counts, 1, MPI_UINT64_T, x->comm);
    if (rc != MPI_SUCCESS) { free(sc); return rc; }
    uint64_t soff = 0, roff = 0;
    int too_big = 0;
    for (i = 0; i < n; i++) {
        if (send_counts[i] > INT_MAX || recv_counts[i] > INT_MAX || soff > INT_MAX || roff > INT_MAX) too_big = 1;
        sc[i] = (int)send_counts[i]; sd[i] = (int)soff; soff += send_counts[i];
        rcn[i] = (int)recv_counts[i]; rd[i] = (int)roff; roff += recv_counts[i];
    }
    /* Every rank must take the same branch: agree on "too big" first. */
    int any_too_big = 0;
    rc = MPI_Allreduce(&too_big, &any_too_big, 1, MPI_INT, MPI_MAX, x->comm);
    if (rc != MPI_SUCCESS) { free(sc); return rc; }
    if (any_too_big) { free(sc); return MPI_ERR_COUNT; }
    /* An empty send buffer may arrive as (void *)1, which OpenMPI reads as MPI_IN_PLACE. */
    static uint8_t nothing;
    if (soff == 0) send = &nothing;
    *recv = malloc(roff ? roff : 1);
    if (!*recv) { free(sc); return MPI_ERR_NO_MEM; }
    rc = MPI_Alltoallv(send, sc, sd, MPI_BYTE, *recv, rcn, rd, MPI_BYTE, x->comm);
    free(sc);
    return rc;
}

static void shim_free_buf(uint8_t *buf) { free(buf); }

static void shim_release(void *c) {
    struct ctx *x = c;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&x->comm);
    free(x);
}

static int make_comm(MPI_Comm comm, struct nczarr_par_comm *out) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) return NC_EPARINIT;
    struct ctx *x = malloc(sizeof *x);
    if (!x) return NC_EPARINIT;
    if (MPI_Comm_dup(comm, &x->comm) != MPI_SUCCESS) { free(x); return NC_EPARINIT; }
    /* A failed MPI call becomes NC_EMPI from the netCDF call, not an abort of the job. */
    MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
    memset(out, 0, sizeof *out);
    MPI_Comm_rank(x->comm, &out->rank);
    MPI_Comm_size(x->comm, &out->size);
    x->size = out->size;
    out->ctx = x;
    out->barrier = shim_barrier;
    out->allreduce_max = shim_allreduce_max;
    out->alltoallv = shim_alltoallv;
    out->free_buf = shim_free_buf;
    out->release = shim_release;
    return 0;
}

static int comm_from_fortran(int fcomm, struct nczarr_par_comm *out) {
    return make_comm(MPI_Comm_f2c((MPI_Fint)fcomm), out);
}

static struct nczarr_par_hooks hooks = { comm_from_fortran };

__attribute__((constructor)) static void register_shim(void) { nczarr_par_register(&hooks); }

typedef int (*par_fn)(const char *, int, MPI_Comm, MPI_Info, int *);

/* nc_create_par and nc_open_par: `real_name` is the real netcdf-c's function behind the preload
 * library, `ours` the core's entry point. `info` holds MPI-IO hints; object stores take none. */
static int par_entry(int creating, const char *real_name, int (*ours)(const char *, int, const struct nczarr_par_comm *, int *),
                     const char *path, int mode, MPI_Comm comm, MPI_Info info, int *ncidp)
{
#ifdef NCZARR_PRELOAD
    if (nczarr_par_forward(path, creating)) {
        par_fn real = (par_fn)dlsym(RTLD_NEXT, real_name);
        if (!real) return NC_ENOPAR;
        return nczarr_par_claim(real(path, mode, comm, info, ncidp), ncidp, creating);
    }
#else
    (void)creating; (void)real_name; (void)info;
#endif
    struct nczarr_par_comm c;
    int rc = make_comm(comm, &c);
    if (rc) return rc;
    return ours(path, mode, &c, ncidp);
}

int nc_create_par(const char *path, int cmode, MPI_Comm comm, MPI_Info info, int *ncidp) {
    return par_entry(1, "nc_create_par", nczarr_par_create, path, cmode, comm, info, ncidp);
}

int nc_open_par(const char *path, int mode, MPI_Comm comm, MPI_Info info, int *ncidp) {
    return par_entry(0, "nc_open_par", nczarr_par_open, path, mode, comm, info, ncidp);
}
