/* NC_STRING values longer than the default width are never cut (issue 13 item 10).
 * usage: wide_strings write|read URL
 *   write (our library): a variable widened step by step (5 -> 1000 -> 10000 bytes, mixed
 *         lengths, multi-byte UTF-8, written across syncs) and one whose first write is wide;
 *   read  (ours, or netcdf-c 4.10.1): every byte back. Prints "N passed, M failed". */
#include "../check.h"

#define NS 6
static char *expected[NS];
static char *first_wide[2];

static char *repeat(const char *unit, size_t bytes)
{
    size_t n = strlen(unit);
    char *s = malloc(bytes + 1);
    for (size_t i = 0; i < bytes; i++) s[i] = unit[i % n];
    /* never end inside a multi-byte character */
    size_t end = bytes;
    while (end > 0 && ((unsigned char)s[end] & 0xC0) == 0x80) end--;
    s[end] = 0;
    return s;
}

static void make_values(void)
{
    expected[0] = strdup("short");
    expected[1] = repeat("abcdefghij", 1000);
    expected[2] = repeat("0123456789", 10000);
    expected[3] = repeat("xyz", 300);
    expected[4] = strdup("");
    expected[5] = repeat("\xc3\xa9t\xc3\xa9-\xe2\x82\xac", 2000); /* "été-€" */
    first_wide[0] = repeat("W", 1000);
    first_wide[1] = strdup("w");
}

static void write_all(const char *url)
{
    int ncid, d, d2, s, t;
    size_t start[1], count[1];
    OK(nc_create(url, NC_CLOBBER | NC_NETCDF4, &ncid));
    OK(nc_def_dim(ncid, "x", NS, &d));
    OK(nc_def_dim(ncid, "y", 2, &d2));
    OK(nc_def_var(ncid, "s", NC_STRING, 1, &d, &s));
    size_t chunk = 2;
    OK(nc_def_var_chunking(ncid, s, NC_CHUNKED, &chunk));
    OK(nc_def_var(ncid, "t", NC_STRING, 1, &d2, &t));
    OK(nc_enddef(ncid));
    /* 5 bytes fit the default width; 1000 widens with chunk 0 already written. */
    start[0] = 0; count[0] = 1;
    OK(nc_put_vara_string(ncid, s, start, count, (const char **)&expected[0]));
    start[0] = 1;
    OK(nc_put_vara_string(ncid, s, start, count, (const char **)&expected[1]));
    OK(nc_sync(ncid));
    start[0] = 2; count[0] = 2;
    OK(nc_put_vara_string(ncid, s, start, count, (const char **)&expected[2]));
    start[0] = 4; count[0] = 2;
    OK(nc_put_vara_string(ncid, s, start, count, (const char **)&expected[4]));
    OK(nc_put_var_string(ncid, t, (const char **)first_wide));
    OK(nc_close(ncid));
}

static void read_all(const char *url)
{
    int ncid, s, t;
    char *got[NS] = {0}, *got_t[2] = {0};
    OK(nc_open(url, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "s", &s));
    OK(nc_inq_varid(ncid, "t", &t));
    OK(nc_get_var_string(ncid, s, got));
    for (int i = 0; i < NS; i++) {
        /* netcdf-c hands back NULL for an empty fixed-width string */
        int same = strcmp(got[i] ? got[i] : "", expected[i]) == 0;
        CHECK(same);
        if (!same) fprintf(stderr, "s[%d]: %zu bytes back, %zu written\n", i, got[i] ? strlen(got[i]) : 0, strlen(expected[i]));
    }
    nc_free_string(NS, got);
    OK(nc_get_var_string(ncid, t, got_t));
    CHECK(got_t[0] && strcmp(got_t[0], first_wide[0]) == 0);
    CHECK(got_t[1] && strcmp(got_t[1], first_wide[1]) == 0);
    nc_free_string(2, got_t);
    /* The width is recorded where netcdf-c looks: the first write's exact width. */
    int width = 0;
    OK(nc_get_att_int(ncid, t, "_nczarr_maxstrlen", &width));
    CHECK(width == 1000);
    OK(nc_get_att_int(ncid, s, "_nczarr_maxstrlen", &width));
    CHECK(width >= 10000);
    OK(nc_close(ncid));
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    make_values();
    if (strcmp(argv[1], "write") == 0) {
        write_all(argv[2]);
    }
    read_all(argv[2]);
    DONE();
}
