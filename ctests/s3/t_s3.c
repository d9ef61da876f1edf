/* S3 through the nc_* API: create, write, reopen and read a dataset named by any URL form.
 * usage: t_s3 <url> roundtrip | read | open-expect <code> | create-expect <code> */
#include <stdlib.h>
#include "../check.h"

#define NX 40
#define NT 6

static void write_ds(const char *url) {
    int ncid, t, x, v, s, g, gv;
    OK(nc_create(url, NC_NETCDF4 | NC_CLOBBER, &ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "x", NX, &x));
    int d2[2] = {t, x};
    OK(nc_def_var(ncid, "v", NC_FLOAT, 2, d2, &v));
    size_t ch[2] = {1, 8};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, ch));
    OK(nc_def_var_deflate(ncid, v, 1, 1, 1));
    OK(nc_def_var(ncid, "names", NC_STRING, 1, &x, &s));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "title", 6, "on S3!"));
    OK(nc_def_grp(ncid, "g", &g));
    OK(nc_def_var(g, "gv", NC_INT, 1, &x, &gv));
    OK(nc_enddef(ncid));
    float row[NX];
    for (int r = 0; r < NT; r++) {
        for (int i = 0; i < NX; i++) row[i] = (float)(r * 1000 + i);
        size_t st[2] = {r, 0}, cnt[2] = {1, NX};
        OK(nc_put_vara_float(ncid, v, st, cnt, row));
    }
    const char *nm[NX];
    for (int i = 0; i < NX; i++) nm[i] = (i % 3) ? "abc" : "";
    OK(nc_put_var_string(ncid, s, nm));
    int iv[NX];
    for (int i = 0; i < NX; i++) iv[i] = -i;
    OK(nc_put_var_int(g, gv, iv));
    OK(nc_close(ncid));
}

static void read_ds(const char *url) {
    int ncid, v, s, g, gv, t;
    OK(nc_open(url, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "v", &v));
    OK(nc_inq_dimid(ncid, "time", &t));
    size_t len = 0;
    OK(nc_inq_dimlen(ncid, t, &len));
    CHECK(len == NT);
    static float all[NT][NX];
    OK(nc_get_var_float(ncid, v, &all[0][0]));
    int bad = 0;
    for (int r = 0; r < NT; r++)
        for (int i = 0; i < NX; i++) bad += all[r][i] != (float)(r * 1000 + i);
    CHECK(bad == 0);
    /* A strided series touching every chunk of a column. */
    float col[NT];
    size_t st[2] = {0, 13}, cnt[2] = {NT, 1};
    OK(nc_get_vara_float(ncid, v, st, cnt, col));
    CHECK(col[NT - 1] == (float)((NT - 1) * 1000 + 13));
    char title[8] = {0};
    OK(nc_get_att_text(ncid, NC_GLOBAL, "title", title));
    CHECK(strcmp(title, "on S3!") == 0);
    OK(nc_inq_varid(ncid, "names", &s));
    char *nm[NX] = {0};
    OK(nc_get_var_string(ncid, s, nm));
    CHECK(nm[0] && nm[1] && strcmp(nm[0], "") == 0 && strcmp(nm[1], "abc") == 0);
    if (nm[0]) OK(nc_free_string(NX, nm));
    OK(nc_inq_ncid(ncid, "g", &g));
    OK(nc_inq_varid(g, "gv", &gv));
    int iv[NX];
    OK(nc_get_var_int(g, gv, iv));
    CHECK(iv[NX - 1] == -(NX - 1));
    OK(nc_close(ncid));
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *url = argv[1], *mode = argv[2];
    if (!strcmp(mode, "roundtrip")) {
        write_ds(url);
        read_ds(url);
        /* NOCLOBBER on an existing dataset. */
        int ncid;
        EXPECT(NC_EEXIST, nc_create(url, NC_NETCDF4 | NC_NOCLOBBER, &ncid));
    } else if (!strcmp(mode, "read")) {
        read_ds(url);
    } else if (!strcmp(mode, "big")) {
        /* One 12 MiB chunk: a multipart upload of several parts when NCZARR_S3_MULTIPART_MB
         * and NCZARR_S3_PART_MB say so; every byte must come back. */
        enum { N = 3 << 20 };
        int ncid, d, v;
        int *buf = malloc(sizeof(int) * N), *back = malloc(sizeof(int) * N);
        for (int i = 0; i < N; i++) buf[i] = i * 7 + 1;
        OK(nc_create(url, NC_NETCDF4 | NC_CLOBBER, &ncid));
        OK(nc_def_dim(ncid, "n", N, &d));
        OK(nc_def_var(ncid, "big", NC_INT, 1, &d, &v));
        size_t chunk = N;
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, &chunk));
        OK(nc_put_var_int(ncid, v, buf));
        OK(nc_close(ncid));
        OK(nc_open(url, NC_NOWRITE, &ncid));
        OK(nc_get_var_int(ncid, v, back));
        CHECK(memcmp(buf, back, sizeof(int) * N) == 0);
        OK(nc_close(ncid));
        free(buf);
        free(back);
    } else if (!strcmp(mode, "open-expect") && argc > 3) {
        int ncid = -1, want = atoi(argv[3]);
        int got = nc_open(url, NC_NOWRITE, &ncid);
        if (got == NC_NOERR) {
            /* Opening may succeed and the data read fail: report the first error. */
            int v;
            float buf[NT * NX];
            got = nc_inq_varid(ncid, "v", &v);
            if (!got) got = nc_get_var_float(ncid, v, buf);
            nc_close(ncid);
        }
        if (got != want) printf("%s: got %d (%s), want %d\n", url, got, nc_strerror(got), want);
        CHECK(got == want);
    } else if (!strcmp(mode, "modify-expect") && argc > 3) {
        /* Change an existing dataset; the close (where everything is written) must fail with
         * the expected code and leave the previous state readable. */
        int ncid, v, want = atoi(argv[3]);
        OK(nc_open(url, NC_WRITE, &ncid));
        OK(nc_inq_varid(ncid, "v", &v));
        float row[NX] = {0};
        size_t st[2] = {NT, 0}, cnt[2] = {1, NX};
        int got = nc_put_vara_float(ncid, v, st, cnt, row);
        if (!got) got = nc_put_att_text(ncid, NC_GLOBAL, "title", 4, "lost");
        int c = nc_close(ncid);
        if (!got) got = c;
        if (got != want) printf("%s: got %d (%s), want %d\n", url, got, nc_strerror(got), want);
        CHECK(got == want);
    } else if (!strcmp(mode, "chunks-expect") && argc > 3) {
        /* 16 MiB in 64 chunks, more than the chunk cache holds: chunks go out during the
         * put and at the close. The first error either reports must be the expected code. */
        enum { N = 4 << 20 };
        int ncid, d, v, want = atoi(argv[3]);
        float *buf = malloc(sizeof(float) * N);
        for (int i = 0; i < N; i++) buf[i] = (float)i;
        OK(nc_create(url, NC_NETCDF4 | NC_CLOBBER, &ncid));
        OK(nc_def_dim(ncid, "n", N, &d));
        OK(nc_def_var(ncid, "big", NC_FLOAT, 1, &d, &v));
        size_t chunk = N / 64;
        OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, &chunk));
        OK(nc_set_var_chunk_cache(ncid, v, 4 << 20, 16, 0.75f));
        OK(nc_enddef(ncid));
        int got = nc_put_var_float(ncid, v, buf);
        int c = nc_close(ncid);
        if (!got) got = c;
        if (got != want) printf("%s: got %d (%s), want %d\n", url, got, nc_strerror(got), want);
        CHECK(got == want);
        if (want == NC_NOERR) {
            float *back = malloc(sizeof(float) * N);
            OK(nc_open(url, NC_NOWRITE, &ncid));
            OK(nc_get_var_float(ncid, v, back));
            CHECK(memcmp(buf, back, sizeof(float) * N) == 0);
            OK(nc_close(ncid));
            free(back);
        }
        free(buf);
    } else if (!strcmp(mode, "chunks-read")) {
        /* After a failed chunk upload: the dataset opens and every chunk reads (data or fill). */
        int ncid, v;
        float *back = malloc(sizeof(float) * (4 << 20));
        OK(nc_open(url, NC_NOWRITE, &ncid));
        OK(nc_inq_varid(ncid, "big", &v));
        OK(nc_get_var_float(ncid, v, back));
        OK(nc_close(ncid));
        free(back);
    } else if (!strcmp(mode, "create-expect") && argc > 3) {
        int ncid = -1, want = atoi(argv[3]);
        int got = nc_create(url, NC_NETCDF4 | NC_CLOBBER, &ncid);
        if (got == NC_NOERR) {
            int x, v;
            got = nc_def_dim(ncid, "x", 4, &x);
            if (!got) got = nc_def_var(ncid, "v", NC_INT, 1, &x, &v);
            int data[4] = {1, 2, 3, 4};
            if (!got) got = nc_put_var_int(ncid, v, data);
            int c = nc_close(ncid);
            if (!got) got = c;
        }
        if (got != want) printf("%s: got %d (%s), want %d\n", url, got, nc_strerror(got), want);
        CHECK(got == want);
    } else {
        return 2;
    }
    printf("%s ", mode);
    DONE();
}
