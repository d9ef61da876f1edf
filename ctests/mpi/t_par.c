/* Parallel I/O through netcdf_par.h: run under mpirun with any number of ranks.
 *
 *   t_par <location> <fragment>     e.g.  t_par file:///tmp/d '#mode=nczarr,file'
 *
 * Every rank writes its part of a dataset (whole chunks, chunks split between ranks, strided
 * rows, unlimited growth by different ranks, every type, compressed collective variables, a
 * group); then rank 0 writes the same data serially and compares the two value by value.
 * Also: reads after a collective nc_sync see the other ranks' writes, nc_open_par reads,
 * define-mode divergence is an error on every rank (no hang), the access-mode and error
 * codes of netcdf-c, and the bound on pending pieces. */
#include <mpi.h>
#include <stdint.h>
#include "../check.h"
#include "netcdf_par.h"

static int rank, nranks, is_s3;
static const char *loc, *frag;

static const char *name(const char *n)
{
    static char b[4][4096];
    static int k;
    char *p = b[k++ % 4];
    snprintf(p, sizeof b[0], "%s/%s%s", loc, n, frag);
    return p;
}

static const nc_type types[] = {NC_BYTE, NC_UBYTE, NC_SHORT, NC_USHORT, NC_INT, NC_UINT, NC_INT64, NC_UINT64, NC_FLOAT, NC_DOUBLE, NC_CHAR, NC_STRING};
#define NTYPES 12

/* The value every writer stores at element i of variable `code`. */
static double val(int code, size_t i) { return (double)((i * 7 + (size_t)code * 3) % 97); }

static void define(int ncid, int n, int *unlimdim)
{
    int y, x, y2, x2, t, x4, en, z6, g, gd, v, dims[2];
    OK(nc_def_dim(ncid, "y", (size_t)(8 * n), &y));
    OK(nc_def_dim(ncid, "x", 16, &x));
    dims[0] = y; dims[1] = x;
    OK(nc_def_var(ncid, "a", NC_INT, 2, dims, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){8, 16}));
    OK(nc_def_dim(ncid, "y2", (size_t)(6 * n + 1), &y2));
    OK(nc_def_dim(ncid, "x2", 10, &x2));
    dims[0] = y2; dims[1] = x2;
    OK(nc_def_var(ncid, "b", NC_DOUBLE, 2, dims, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){4, 5}));
    OK(nc_def_dim(ncid, "t", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "x4", 4, &x4));
    dims[0] = t; dims[1] = x4;
    OK(nc_def_var(ncid, "u", NC_INT, 2, dims, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){2, 4}));
    *unlimdim = t;
    OK(nc_def_dim(ncid, "n", (size_t)(5 * n), &en));
    for (int k = 0; k < NTYPES; k++) {
        char vn[16];
        snprintf(vn, sizeof vn, "t%d", (int)types[k]);
        OK(nc_def_var(ncid, vn, types[k], 1, &en, &v));
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){3}));
    }
    OK(nc_def_dim(ncid, "z6", 6, &z6));
    dims[0] = y; dims[1] = z6;
    OK(nc_def_var(ncid, "z", NC_FLOAT, 2, dims, &v));
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, (size_t[]){3, 6}));
    OK(nc_def_var_deflate(ncid, v, 1, 1, 1));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", 8, "parallel"));
    OK(nc_def_grp(ncid, "g", &g));
    OK(nc_def_dim(g, "gn", (size_t)(2 * n + 1), &gd));
    OK(nc_def_var(g, "gv", NC_SHORT, 1, &gd, &v));
    OK(nc_def_var_chunking(g, v, NC_CHUNKED, (size_t[]){3}));
}

/* Rank r's part of every variable (the serial writer calls it for every r). */
static void write_part(int ncid, int r, int n)
{
    int v, g;
    /* a: rows [8r, 8r+8), whole chunks. */
    int a[8 * 16];
    for (int i = 0; i < 8 * 16; i++) a[i] = (int)val(1, (size_t)(8 * r * 16 + i));
    OK(nc_inq_varid(ncid, "a", &v));
    OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(8 * r), 0}, (size_t[]){8, 16}, a));
    /* b: every n-th row from row r (strided; every chunk is shared by several ranks). */
    size_t rows = (size_t)((6 * n + 1 - r + n - 1) / n);
    double *b = malloc(rows * 10 * sizeof *b);
    for (size_t j = 0; j < rows; j++)
        for (size_t c = 0; c < 10; c++) b[j * 10 + c] = val(2, (r + j * n) * 10 + c);
    OK(nc_inq_varid(ncid, "b", &v));
    OK(nc_put_vars_double(ncid, v, (size_t[]){(size_t)r, 0}, (size_t[]){rows, 10}, (ptrdiff_t[]){n, 1}, b));
    free(b);
    /* u: records [3r, 3r+3) of the unlimited dimension (chunks of 2 records: shared). */
    int u[12];
    for (int i = 0; i < 12; i++) u[i] = (int)val(3, (size_t)(3 * r * 4 + i));
    OK(nc_inq_varid(ncid, "u", &v));
    OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(3 * r), 0}, (size_t[]){3, 4}, u));
    /* Every type: elements [5r, 5r+5), chunks of 3 (shared). */
    for (int k = 0; k < NTYPES; k++) {
        char vn[16];
        snprintf(vn, sizeof vn, "t%d", (int)types[k]);
        OK(nc_inq_varid(ncid, vn, &v));
        size_t st = (size_t)(5 * r), ct = 5;
        if (types[k] == NC_CHAR) {
            char c[5];
            for (int i = 0; i < 5; i++) c[i] = (char)('a' + (int)val(4, st + i) % 26);
            OK(nc_put_vara_text(ncid, v, &st, &ct, c));
        } else if (types[k] == NC_STRING) {
            char buf[5][32];
            const char *s[5];
            for (int i = 0; i < 5; i++) {
                snprintf(buf[i], sizeof buf[i], "rank-value-%d", (int)val(5, st + i));
                s[i] = buf[i];
            }
            OK(nc_put_vara_string(ncid, v, &st, &ct, s));
        } else {
            double d[5];
            for (int i = 0; i < 5; i++) d[i] = val(6 + k, st + i);
            OK(nc_put_vara_double(ncid, v, &st, &ct, d));
        }
    }
    /* z: compressed, rows [8r, 8r+8) in chunks of 3 rows (shared), collective access. */
    float z[8 * 6];
    for (int i = 0; i < 48; i++) z[i] = (float)val(20, (size_t)(8 * r * 6 + i)) / 4;
    OK(nc_inq_varid(ncid, "z", &v));
    OK(nc_put_vara_float(ncid, v, (size_t[]){(size_t)(8 * r), 0}, (size_t[]){8, 6}, z));
    /* g/gv: elements [2r, 2r+2). */
    short gv[2] = {(short)val(21, (size_t)(2 * r)), (short)val(21, (size_t)(2 * r + 1))};
    OK(nc_inq_grp_ncid(ncid, "g", &g));
    OK(nc_inq_varid(g, "gv", &v));
    OK(nc_put_vara_short(g, v, (size_t[]){(size_t)(2 * r)}, (size_t[]){2}, gv));
}

/* Every value of every variable of two datasets is equal. */
static void compare(int p, int s)
{
    int nvars;
    OK(nc_inq_nvars(p, &nvars));
    for (int v = 0; v < nvars; v++) {
        char vn[NC_MAX_NAME + 1];
        nc_type t;
        int nd, dims[NC_MAX_VAR_DIMS];
        size_t total = 1;
        OK(nc_inq_var(p, v, vn, &t, &nd, dims, NULL));
        for (int d = 0; d < nd; d++) {
            size_t len;
            OK(nc_inq_dimlen(p, dims[d], &len));
            total *= len;
        }
        int sv;
        OK(nc_inq_varid(s, vn, &sv));
        if (t == NC_STRING) {
            char **x = calloc(total, sizeof *x), **y = calloc(total, sizeof *y);
            OK(nc_get_var_string(p, v, x));
            OK(nc_get_var_string(s, sv, y));
            int same = 1;
            for (size_t i = 0; i < total; i++) same &= x[i] && y[i] && !strcmp(x[i], y[i]);
            CHECK(same);
            nc_free_string(total, x);
            nc_free_string(total, y);
            free(x); free(y);
        } else {
            size_t sz;
            OK(nc_inq_type(p, t, NULL, &sz));
            char *x = malloc(total * sz + 1), *y = malloc(total * sz + 1);
            OK(nc_get_var(p, v, x));
            OK(nc_get_var(s, sv, y));
            if (memcmp(x, y, total * sz)) fprintf(stderr, "variable %s differs from the serial copy\n", vn);
            CHECK(!memcmp(x, y, total * sz));
            free(x); free(y);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc < 3) { fprintf(stderr, "usage: t_par location fragment\n"); return 2; }
    loc = argv[1];
    frag = argv[2];
    is_s3 = strstr(frag, "s3") != NULL;
    int n = nranks, ncid, unlim, v, fmt, mode;

    /* The whole dataset, written in parallel. */
    OK(nc_create_par(name("par"), NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_inq_format_extended(ncid, &fmt, &mode));
    CHECK(fmt == NC_FORMATX_NCZARR && (mode & NC_MPIIO));
    define(ncid, n, &unlim);
    OK(nc_enddef(ncid));
    OK(nc_inq_varid(ncid, "z", &v));
    OK(nc_var_par_access(ncid, v, NC_COLLECTIVE));
    EXPECT(NC_EINVAL, nc_var_par_access(ncid, v, 7));
    EXPECT(NC_ENOTVAR, nc_var_par_access(ncid, 999, NC_COLLECTIVE));
    write_part(ncid, rank, n);
    /* After a collective sync every rank sees the unlimited dimension at its largest and
     * reads what the others wrote. */
    OK(nc_sync(ncid));
    size_t tlen = 0;
    OK(nc_inq_dimlen(ncid, unlim, &tlen));
    CHECK(tlen == (size_t)(3 * n));
    int *u = malloc(sizeof(int) * 12 * (size_t)n), good = 1;
    OK(nc_inq_varid(ncid, "u", &v));
    OK(nc_get_var_int(ncid, v, u));
    for (int i = 0; i < 12 * n; i++) good &= u[i] == (int)val(3, (size_t)i);
    CHECK(good);
    free(u);
    OK(nc_close(ncid));

    /* Rank 0: the same data written serially, compared value by value. */
    if (rank == 0) {
        int s, p;
        OK(nc_create(name("serial"), NC_NETCDF4 | NC_CLOBBER, &s));
        define(s, n, &unlim);
        OK(nc_enddef(s));
        for (int r = 0; r < n; r++) write_part(s, r, n);
        OK(nc_close(s));
        OK(nc_open(name("par"), NC_NOWRITE, &p));
        OK(nc_open(name("serial"), NC_NOWRITE, &s));
        compare(p, s);
        int g1, g2;
        OK(nc_inq_grp_ncid(p, "g", &g1));
        OK(nc_inq_grp_ncid(s, "g", &g2));
        compare(g1, g2);
        size_t alen = 0;
        OK(nc_inq_attlen(p, NC_GLOBAL, "title", &alen));
        CHECK(alen == 8);
        OK(nc_close(p));
        OK(nc_close(s));
        /* Access modes belong to parallel datasets only. */
        OK(nc_open(name("serial"), NC_NOWRITE, &s));
        EXPECT(NC_ENOPAR, nc_var_par_access(s, 0, NC_COLLECTIVE));
        OK(nc_close(s));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* nc_open_par: each rank reads its own rows, no coordination. */
    OK(nc_open_par(name("par"), NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_inq_format_extended(ncid, &fmt, &mode));
    CHECK(mode & NC_MPIIO);
    int a[8 * 16];
    OK(nc_inq_varid(ncid, "a", &v));
    OK(nc_get_vara_int(ncid, v, (size_t[]){(size_t)(8 * rank), 0}, (size_t[]){8, 16}, a));
    good = 1;
    for (int i = 0; i < 128; i++) good &= a[i] == (int)val(1, (size_t)(8 * rank * 16 + i));
    CHECK(good);
    EXPECT(NC_EPERM, nc_put_vara_int(ncid, v, (size_t[]){0, 0}, (size_t[]){1, 1}, a));
    OK(nc_close(ncid));

    /* Reopened for writing in parallel: more records, from the last rank only. */
    OK(nc_open_par(name("par"), NC_WRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_inq_varid(ncid, "u", &v));
    if (rank == nranks - 1) {
        int more[4] = {1, 2, 3, 4};
        OK(nc_put_vara_int(ncid, v, (size_t[]){(size_t)(3 * n + 1), 0}, (size_t[]){1, 4}, more));
    }
    OK(nc_close(ncid));
    OK(nc_open_par(name("par"), NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_inq_dimid(ncid, "t", &unlim));
    OK(nc_inq_dimlen(ncid, unlim, &tlen));
    CHECK(tlen == (size_t)(3 * n + 2));
    OK(nc_close(ncid));
    if (rank == 0) { /* the serial copy gets the same record (zarr-python compares the two) */
        int s, more[4] = {1, 2, 3, 4};
        OK(nc_open(name("serial"), NC_WRITE, &s));
        OK(nc_inq_varid(s, "u", &v));
        OK(nc_put_vara_int(s, v, (size_t[]){(size_t)(3 * n + 1), 0}, (size_t[]){1, 4}, more));
        OK(nc_close(s));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A rank that defines a variable the others do not: every rank gets an error at the
     * collective call, none hangs, and the dataset can still be closed. */
    if (nranks > 1) {
        OK(nc_create_par(name("diverge"), NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
        int d;
        OK(nc_def_dim(ncid, "d", 4, &d));
        if (rank == 1) OK(nc_def_var(ncid, "extra", NC_INT, 1, &d, &v));
        EXPECT(NC_EMPI, nc_enddef(ncid));
        CHECK(nc_close(ncid) != NC_NOERR);
    }

    /* Partly written chunks beyond NCZARR_PAR_PENDING_MB: independent writers get NC_ENOMEM,
     * collective ones have them merged at the call. */
    setenv("NCZARR_PAR_PENDING_MB", "1", 1);
    OK(nc_create_par(name("bound"), NC_NETCDF4 | NC_CLOBBER | NC_MPIIO, /* NC_MPIIO/NC_MPIPOSIX: accepted, as netcdf-c */ MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    int d, w;
    OK(nc_def_dim(ncid, "big", (size_t)(2 << 20) * (size_t)n, &d));
    OK(nc_def_var(ncid, "w", NC_INT, 1, &d, &w));
    OK(nc_def_var_chunking(ncid, w, NC_CHUNKED, (size_t[]){(size_t)(2 << 20) * (size_t)n}));
    OK(nc_enddef(ncid));
    size_t part = 1 << 20;
    int *big = malloc(part * sizeof *big);
    for (size_t i = 0; i < part; i++) big[i] = (int)(rank * 1000 + (int)(i % 1000));
    EXPECT(NC_ENOMEM, nc_put_vara_int(ncid, w, (size_t[]){(size_t)rank * part}, &part, big));
    OK(nc_var_par_access(ncid, w, NC_COLLECTIVE));
    OK(nc_put_vara_int(ncid, w, (size_t[]){(size_t)(n + rank) * part}, &part, big));
    OK(nc_close(ncid));
    unsetenv("NCZARR_PAR_PENDING_MB");
    OK(nc_open_par(name("bound"), NC_NOWRITE | NC_MPIPOSIX, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    OK(nc_get_vara_int(ncid, w, (size_t[]){(size_t)(n + rank) * part}, &part, big));
    good = 1;
    for (size_t i = 0; i < part; i++) good &= big[i] == (int)(rank * 1000 + (int)(i % 1000));
    CHECK(good);
    OK(nc_close(ncid));
    free(big);

    /* zip stores take no parallel writes. */
    if (!is_s3) {
        char zip[4096];
        snprintf(zip, sizeof zip, "%s/p.zip#mode=nczarr,zip", loc);
        EXPECT(NC_EINVAL, nc_create_par(zip, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    }

    int failed = 0;
    MPI_Allreduce(&check_failed, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("t_par (%d ranks, %s): %d passed, %d failed\n", nranks, frag, check_passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
