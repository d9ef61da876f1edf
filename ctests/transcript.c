/* A transcript of one ordinary C program's calls and results: run once against netcdf-c
 * 4.10.1 and once against our library, the two outputs must be identical (ctests/clients/run.sh).
 * Only behaviour where 4.10.1 is right is exercised; values are printed exactly (floats as
 * bit patterns), never paths.
 *
 * usage: transcript <url-of-new-dataset> */
#include <inttypes.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void rc(const char *what, int status) { printf("%-44s -> %d (%s)\n", what, status, nc_strerror(status)); }

static void show_f(const char *what, const float *v, size_t n) {
    printf("%s:", what);
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, &v[i], 4);
        printf(" %.9g/%08" PRIx32, v[i], b);
    }
    printf("\n");
}

static void show_d(const char *what, const double *v, size_t n) {
    printf("%s:", what);
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &v[i], 8);
        printf(" %.17g/%016" PRIx64, v[i], b);
    }
    printf("\n");
}

static void show_i(const char *what, const int *v, size_t n) {
    printf("%s:", what);
    for (size_t i = 0; i < n; i++) printf(" %d", v[i]);
    printf("\n");
}

#define NX 6

static void inquire_all(int ncid) {
    int ndims, nvars, natts, unlim;
    rc("nc_inq", nc_inq(ncid, &ndims, &nvars, &natts, &unlim));
    printf("ndims %d nvars %d natts %d unlimdim %d\n", ndims, nvars, natts, unlim);
    for (int d = 0; d < ndims; d++) {
        char name[NC_MAX_NAME + 1];
        size_t len;
        nc_inq_dim(ncid, d, name, &len);
        printf("dim %d %s %zu\n", d, name, len);
    }
    for (int v = 0; v < nvars; v++) {
        char name[NC_MAX_NAME + 1];
        nc_type t;
        int nd, dimids[NC_MAX_VAR_DIMS], na, qmode = -1, nsd = -1, shuffle, deflate, level, nofill;
        nc_inq_var(ncid, v, name, &t, &nd, dimids, &na);
        nc_inq_var_quantize(ncid, v, &qmode, &nsd);
        nc_inq_var_deflate(ncid, v, &shuffle, &deflate, &level);
        printf("var %d %s type %d ndims %d natts %d quantize %d/%d deflate %d/%d/%d\n", v, name, t, nd, na, qmode, nsd, shuffle,
               deflate, level);
        for (int a = 0; a < na; a++) {
            char an[NC_MAX_NAME + 1];
            nc_type at;
            size_t alen;
            nc_inq_attname(ncid, v, a, an);
            nc_inq_att(ncid, v, an, &at, &alen);
            printf("  att %s type %d len %zu\n", an, at, alen);
        }
        if (t != NC_STRING && t != NC_CHAR) {
            rc("  nc_inq_var_fill", nc_inq_var_fill(ncid, v, &nofill, NULL));
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: transcript <url>\n");
        return 2;
    }
    const char *url = argv[1];
    int ncid, dt, dx, vf, vd, vg, vi, vs, vc, vz;
    rc("nc_create", nc_create(url, NC_NETCDF4 | NC_CLOBBER, &ncid));
    rc("nc_def_dim time", nc_def_dim(ncid, "time", NC_UNLIMITED, &dt));
    rc("nc_def_dim x", nc_def_dim(ncid, "x", NX, &dx));
    int d2[2] = {dt, dx};
    rc("nc_def_var f", nc_def_var(ncid, "f", NC_FLOAT, 2, d2, &vf));
    rc("nc_def_var d", nc_def_var(ncid, "d", NC_DOUBLE, 2, d2, &vd));
    rc("nc_def_var g", nc_def_var(ncid, "g", NC_FLOAT, 2, d2, &vg));
    rc("nc_def_var i", nc_def_var(ncid, "i", NC_INT, 1, &dx, &vi));
    rc("nc_def_var s", nc_def_var(ncid, "s", NC_SHORT, 0, NULL, &vs));
    rc("nc_def_var c", nc_def_var(ncid, "c", NC_CHAR, 1, &dx, &vc));
    rc("nc_def_var z", nc_def_var(ncid, "z", NC_DOUBLE, 1, &dx, &vz));
    size_t ch[2] = {2, 3};
    rc("nc_def_var_chunking f", nc_def_var_chunking(ncid, vf, NC_CHUNKED, ch));
    rc("nc_def_var_quantize f bitgroom 3", nc_def_var_quantize(ncid, vf, NC_QUANTIZE_BITGROOM, 3));
    rc("nc_def_var_quantize d bitround 20", nc_def_var_quantize(ncid, vd, NC_QUANTIZE_BITROUND, 20));
    rc("nc_def_var_quantize g granularbr 4", nc_def_var_quantize(ncid, vg, NC_QUANTIZE_GRANULARBR, 4));
    rc("nc_def_var_quantize i (int) bitgroom", nc_def_var_quantize(ncid, vi, NC_QUANTIZE_BITGROOM, 3));
    rc("nc_def_var_quantize f nsd 0", nc_def_var_quantize(ncid, vf, NC_QUANTIZE_BITGROOM, 0));
    rc("nc_def_var_quantize f nsd 7", nc_def_var_quantize(ncid, vf, NC_QUANTIZE_BITGROOM, 7));
    rc("nc_def_var_quantize d bitround 53", nc_def_var_quantize(ncid, vd, NC_QUANTIZE_BITROUND, 53));
    rc("nc_def_var_quantize mode 4", nc_def_var_quantize(ncid, vd, 4, 3));
    rc("nc_def_var_deflate f", nc_def_var_deflate(ncid, vf, 1, 1, 1));
    int fill_i = -1;
    rc("nc_put_att_int i _FillValue", nc_put_att_int(ncid, vi, "_FillValue", NC_INT, 1, &fill_i));
    float fill_g = -999.0f;
    rc("nc_def_var_fill g", nc_def_var_fill(ncid, vg, NC_FILL, &fill_g));
    rc("nc_put_att_text units", nc_put_att_text(ncid, vf, "units", 1, "K"));
    rc("nc_enddef", nc_enddef(ncid));
    rc("nc_def_var_quantize after enddef", nc_def_var_quantize(ncid, vf, NC_QUANTIZE_BITGROOM, 2));

    /* Quantized writes: one block of two records, then a record on its own, through a
     * converting memory type too. */
    float fin[2 * NX];
    double din[2 * NX];
    for (int k = 0; k < 2 * NX; k++) {
        fin[k] = 3.14159265f * (float)(k + 1) / 7.0f - 1.0f;
        din[k] = 2.718281828459045 * (k + 1) / 3.0 - 4.0;
    }
    fin[3] = 0.0f;
    din[4] = 0.0;
    size_t st[2] = {0, 0}, cnt[2] = {2, NX};
    rc("nc_put_vara_float f [0:2)", nc_put_vara_float(ncid, vf, st, cnt, fin));
    rc("nc_put_vara_double d [0:2)", nc_put_vara_double(ncid, vd, st, cnt, din));
    fin[5] = fill_g;
    rc("nc_put_vara_float g [0:2)", nc_put_vara_float(ncid, vg, st, cnt, fin));
    size_t st1[2] = {2, 1}, cnt1[2] = {1, 4};
    rc("nc_put_vara_double f [2][1:5)", nc_put_vara_double(ncid, vf, st1, cnt1, din));
    rc("nc_put_vara_float d [2][1:5)", nc_put_vara_float(ncid, vd, st1, cnt1, fin));

    /* Conversions and range errors. */
    double big[NX] = {1, -2, 3e10, 4.7, -5.9, 1e300};
    rc("nc_put_var_double i (out of range)", nc_put_var_double(ncid, vi, big));
    short sv = 12345;
    rc("nc_put_var_short s", nc_put_var_short(ncid, vs, &sv));
    rc("nc_put_var_text c", nc_put_var_text(ncid, vc, "abcdef"));
    rc("nc_put_var_int c (char mismatch)", nc_put_var_int(ncid, vc, fill_i ? &fill_i : NULL));
    size_t bad[2] = {0, 7}, one[2] = {1, 1};
    rc("nc_put_vara_float f start x=7", nc_put_vara_float(ncid, vf, bad, one, fin));
    size_t edge[2] = {0, 6}, cnt2[2] = {1, 1};
    rc("nc_put_vara_float f start x=6 count 1", nc_put_vara_float(ncid, vf, edge, cnt2, fin));
    ptrdiff_t zero_stride[2] = {1, 0};
    rc("nc_put_vars_float stride 0", nc_put_vars_float(ncid, vf, st, one, zero_stride, fin));
    size_t zst[1] = {2}, zcnt[1] = {3};
    double zv[3] = {0.1, 0.2, 0.3};
    rc("nc_put_vara_double z [2:5)", nc_put_vara_double(ncid, vz, zst, zcnt, zv));
    rc("nc_close", nc_close(ncid));

    rc("nc_open", nc_open(url, NC_NOWRITE, &ncid));
    inquire_all(ncid);
    size_t len;
    nc_inq_dimlen(ncid, dt, &len);
    float fout[3 * NX];
    double dout[3 * NX];
    rc("nc_get_var_float f", nc_get_var_float(ncid, vf, fout));
    show_f("f", fout, 3 * NX);
    rc("nc_get_var_double d", nc_get_var_double(ncid, vd, dout));
    show_d("d", dout, 3 * NX);
    rc("nc_get_var_float g", nc_get_var_float(ncid, vg, fout));
    show_f("g", fout, 3 * NX);
    int iout[NX];
    rc("nc_get_var_int i", nc_get_var_int(ncid, vi, iout));
    show_i("i", iout, NX);
    signed char bout[NX];
    rc("nc_get_var_schar i (range)", nc_get_var_schar(ncid, vi, bout));
    short sout = 0;
    rc("nc_get_var_short s", nc_get_var_short(ncid, vs, &sout));
    printf("s: %d\n", sout);
    char text[NX + 1] = {0};
    rc("nc_get_var_text c", nc_get_var_text(ncid, vc, text));
    printf("c: %s\n", text);
    rc("nc_get_var_double z", nc_get_var_double(ncid, vz, dout));
    show_d("z", dout, NX);
    ptrdiff_t stride[2] = {2, 2};
    size_t scnt[2] = {2, 3};
    rc("nc_get_vars_float f stride 2x2", nc_get_vars_float(ncid, vf, st, scnt, stride, fout));
    show_f("f strided", fout, 6);
    /* (netcdf-c 4.10.1 also quantizes on a converting read of a quantized variable, which
     * alters stored values; we return them as stored, so mapped reads use the file type.) */
    ptrdiff_t imap[2] = {1, 3};
    size_t mcnt[2] = {3, 2};
    rc("nc_get_varm_float f transposed", nc_get_varm_float(ncid, vf, st, mcnt, NULL, imap, fout));
    show_f("f mapped", fout, 6);
    size_t zst0[1] = {1}, zc[1] = {3};
    ptrdiff_t zs[1] = {2}, zm[1] = {-1};
    rc("nc_get_varm_float z imap -1", nc_get_varm_float(ncid, vz, zst0, zc, zs, zm, fout + 2));
    show_f("z mapped", fout, 3);
    rc("nc_put_var_short s (read-only)", nc_put_var_short(ncid, vs, &sv));
    rc("nc_get_vara_float f past end", nc_get_vara_float(ncid, vf, (size_t[]){4, 0}, (size_t[]){1, 1}, fout));
    rc("nc_close", nc_close(ncid));

    /* The netCDF-2 API (old C and Fortran programs): return values, messages on stderr
     * (NC_VERBOSE without NC_FATAL, so errors do not exit), record I/O, byte maps. */
    ncopts = NC_VERBOSE;
    int id2 = ncopen(url, NC_WRITE);
    printf("ncopen -> %s\n", id2 >= 0 ? "ncid" : "-1");
    printf("ncredef -> %d\n", ncredef(id2));
    int d2x = ncdimdef(id2, "v2x", 4L);
    printf("ncdimdef -> %d\n", d2x);
    int d2v[2] = {dt, d2x};
    int v2v = ncvardef(id2, "v2v", NC_SHORT, 2, d2v);
    printf("ncvardef -> %d\n", v2v);
    printf("ncendef -> %d\n", ncendef(id2));
    int nrec = -1, recids[16];
    long recsz[16];
    printf("ncrecinq -> %d", ncrecinq(id2, &nrec, recids, recsz));
    for (int i = 0; i < nrec; i++) printf(" %d:%ld", recids[i], recsz[i]);
    printf("\n");
    short rec[4] = {1, 2, 3, 4}, back[16];
    void *datap[16] = {0};
    for (int i = 0; i < nrec; i++)
        if (recids[i] == v2v) datap[i] = rec;
    printf("ncrecput 1 -> %d\n", ncrecput(id2, 1L, datap));
    long idx[2] = {2, 3}, badidx[2] = {-1, 0};
    short answer = 42;
    printf("ncvarput1 -> %d\n", ncvarput1(id2, v2v, idx, &answer));
    printf("ncvarget1 bad index -> %d\n", ncvarget1(id2, v2v, badidx, &answer));
    long st2[2] = {0, 0}, ct2[2] = {3, 4}, sd2[2] = {1, 1}, map2[2] = {2, 6}; /* bytes: transposed */
    printf("ncvargetg transposed -> %d\n", ncvargetg(id2, v2v, st2, ct2, sd2, map2, back));
    for (int i = 0; i < 12; i++) printf(" %d", back[i]);
    printf("\n");
    void *getp[16] = {0};
    for (int i = 0; i < nrec; i++)
        if (recids[i] == v2v) getp[i] = back;
    printf("ncrecget 2 -> %d:", ncrecget(id2, 2L, getp));
    for (int i = 0; i < 4; i++) printf(" %d", back[i]);
    printf("\n");
    printf("ncvarputs stride 2 -> %d\n", ncvarputs(id2, v2v, (long[]){0, 0}, (long[]){1, 2}, (long[]){1, 2}, rec));
    printf("ncvarget -> %d:", ncvarget(id2, v2v, (long[]){0, 0}, (long[]){1, 4}, back));
    for (int i = 0; i < 4; i++) printf(" %d", back[i]);
    printf("\n");
    printf("ncvarinq NC_GLOBAL -> %d\n", ncvarinq(id2, NC_GLOBAL, NULL, NULL, NULL, NULL, &nrec));
    printf("ncattinq missing -> %d\n", ncattinq(id2, NC_GLOBAL, "nope", NULL, NULL));
    printf("ncvarput past end -> %d\n", ncvarput(id2, v2v, (long[]){0, 5}, (long[]){1, 1}, rec));
    printf("ncerr %d\n", ncerr);
    printf("ncclose -> %d\n", ncclose(id2));
    return 0;
}
