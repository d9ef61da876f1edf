/* Attributes: every type, conversions, NC_ERANGE/NC_ECHAR, strings, reserved names,
 * zero-length values, copy/rename/delete, exact round trip through storage (c-api.md §8.6). */
#include "check.h"
#include <math.h>
#include <float.h>

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    const char *u = url(dir, "a.file", "nczarr,file");
    const char *u2 = url(dir, "b.file", "nczarr,zip");
    int ncid, ncid2, v, n, type;
    size_t len;
    char name[NC_MAX_NAME + 1], text[64];

    signed char sc[3] = {-128, 0, 127};
    unsigned char uc[2] = {0, 255};
    short ss[2] = {-32768, 32767};
    unsigned short us[2] = {0, 65535};
    int ii[3] = {-2147483647 - 1, 0, 2147483647};
    unsigned int ui[1] = {4294967295u};
    long long ll[2] = {-9223372036854775807LL - 1, 9223372036854775807LL};
    unsigned long long ull[1] = {18446744073709551615ULL};
    float fl[4] = {3.14159274f, -0.0f, FLT_MAX, 9.96921e36f};
    double db[3] = {3.141592653589793, 1e-300, -2.5};
    const char *strs[3] = {"alpha", "", "ünïcödé"};

    OK(nc_create(u, 0, &ncid));
    OK(nc_def_var(ncid, "v", NC_INT, 0, NULL, &v));
    OK(nc_put_att_schar(ncid, NC_GLOBAL, "b", NC_BYTE, 3, sc));
    OK(nc_put_att_uchar(ncid, NC_GLOBAL, "ub", NC_UBYTE, 2, uc));
    OK(nc_put_att_short(ncid, NC_GLOBAL, "s", NC_SHORT, 2, ss));
    OK(nc_put_att_ushort(ncid, NC_GLOBAL, "us", NC_USHORT, 2, us));
    OK(nc_put_att_int(ncid, NC_GLOBAL, "i", NC_INT, 3, ii));
    OK(nc_put_att_uint(ncid, NC_GLOBAL, "ui", NC_UINT, 1, ui));
    OK(nc_put_att_longlong(ncid, NC_GLOBAL, "i64", NC_INT64, 2, ll));
    OK(nc_put_att_ulonglong(ncid, NC_GLOBAL, "ui64", NC_UINT64, 1, ull));
    OK(nc_put_att_float(ncid, NC_GLOBAL, "f", NC_FLOAT, 4, fl));
    OK(nc_put_att_double(ncid, NC_GLOBAL, "d", NC_DOUBLE, 3, db));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "t", 5, "hello"));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "looks_numeric", 2, "17"));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "looks_json", 9, "[1, 2, 3]"));
    OK(nc_put_att_text(ncid, NC_GLOBAL, "empty", 0, NULL));
    OK(nc_put_att_int(ncid, NC_GLOBAL, "empty_int", NC_INT, 0, NULL));
    OK(nc_put_att_string(ncid, v, "strs", 3, strs));
    OK(nc_put_att_double(ncid, v, "special", NC_DOUBLE, 1, (double[]){NAN}));
    OK(nc_put_att_float(ncid, v, "inf", NC_FLOAT, 2, (float[]){INFINITY, -INFINITY}));
    OK(nc_put_att(ncid, v, "generic", NC_SHORT, 2, ss));

    /* Conversion on put: stored as netcdf-c stores it, NC_ERANGE returned, value kept. */
    int big[2] = {300, -1};
    EXPECT(NC_ERANGE, nc_put_att_int(ncid, v, "wrapped", NC_BYTE, 2, big));
    double dconv[2] = {40000.0, 1.5};
    EXPECT(NC_ERANGE, nc_put_att_double(ncid, v, "dshort", NC_SHORT, 2, dconv));
    EXPECT(NC_ECHAR, nc_put_att_int(ncid, v, "bad", NC_CHAR, 1, ii));
    EXPECT(NC_EBADTYPE, nc_put_att_int(ncid, v, "bad", NC_NAT, 1, ii));
    EXPECT(NC_EBADTYPE, nc_put_att_int(ncid, v, "bad", 20, 1, ii));
    EXPECT(NC_EBADTYPID, nc_put_att_int(ncid, v, "bad", 40, 1, ii));
    EXPECT(NC_EBADNAME, nc_put_att_int(ncid, v, "a\nb", NC_INT, 1, ii));
    /* A NULL name: NC_EBADNAME in the calls that put, get, inquire or copy an attribute,
     * NC_EINVAL in nc_del_att/nc_rename_att (netcdf-c 4.10.1, HDF5 and NCZarr alike). */
    EXPECT(NC_EBADNAME, nc_put_att_int(ncid, v, NULL, NC_INT, 1, ii));
    EXPECT(NC_EBADNAME, nc_get_att_int(ncid, v, NULL, ii));
    EXPECT(NC_EBADNAME, nc_inq_att(ncid, v, NULL, &type, &len));
    EXPECT(NC_EBADNAME, nc_inq_attid(ncid, v, NULL, &type));
    EXPECT(NC_EBADNAME, nc_copy_att(ncid, v, NULL, ncid, NC_GLOBAL));
    EXPECT(NC_EINVAL, nc_del_att(ncid, v, NULL));
    EXPECT(NC_EINVAL, nc_rename_att(ncid, v, NULL, "y"));
    EXPECT(NC_ENOTVAR, nc_put_att_int(ncid, 7, "x", NC_INT, 1, ii));
    EXPECT(NC_EINVAL, nc_put_att_int(ncid, v, "x", NC_INT, 2, NULL));
    /* A failed put leaves nothing behind. */
    EXPECT(NC_ENOTATT, nc_inq_att(ncid, v, "bad", &type, &len));
    /* Reserved names. */
    EXPECT(NC_ENAMEINUSE, nc_put_att_text(ncid, NC_GLOBAL, "_NCProperties", 1, "x"));
    EXPECT(NC_ENAMEINUSE, nc_put_att_text(ncid, v, "_ARRAY_DIMENSIONS", 1, "x"));
    EXPECT(NC_ENAMEINUSE, nc_put_att_text(ncid, v, "_nczarr_array", 1, "x"));
    OK(nc_put_att_text(ncid, v, "_nczarr_foo", 1, "x"));
    OK(nc_put_att_text(ncid, v, "_Storage", 1, "x"));
    EXPECT(NC_ENAMEINUSE, nc_rename_att(ncid, v, "_Storage", "_Codecs"));
    EXPECT(NC_ENOTATT, nc_del_att(ncid, NC_GLOBAL, "_NCProperties"));
    OK(nc_close(ncid));

    OK(nc_open(u, NC_WRITE, &ncid));
    OK(nc_inq_varid(ncid, "v", &v));
    OK(nc_inq_natts(ncid, &n));
    CHECK(n == 15);
    OK(nc_inq_attname(ncid, NC_GLOBAL, 0, name));
    CHECK(strcmp(name, "b") == 0);
    EXPECT(NC_ENOTATT, nc_inq_attname(ncid, NC_GLOBAL, 15, name));
    EXPECT(NC_ENOTATT, nc_inq_attname(ncid, NC_GLOBAL, -1, name));
    OK(nc_inq_attid(ncid, NC_GLOBAL, "t", &n));
    CHECK(n == 10);

    signed char sc2[3];
    unsigned char uc2[2];
    short ss2[2];
    unsigned short us2[2];
    int ii2[3];
    unsigned int ui2[1];
    long long ll2[2];
    unsigned long long ull2[1];
    float fl2[4];
    double db2[3];
    OK(nc_inq_att(ncid, NC_GLOBAL, "b", &type, &len));
    CHECK(type == NC_BYTE && len == 3);
    OK(nc_get_att_schar(ncid, NC_GLOBAL, "b", sc2));
    CHECK(memcmp(sc, sc2, sizeof sc) == 0);
    OK(nc_inq_atttype(ncid, NC_GLOBAL, "ub", &type));
    CHECK(type == NC_UBYTE);
    OK(nc_get_att_uchar(ncid, NC_GLOBAL, "ub", uc2));
    CHECK(memcmp(uc, uc2, sizeof uc) == 0);
    OK(nc_get_att_short(ncid, NC_GLOBAL, "s", ss2));
    CHECK(memcmp(ss, ss2, sizeof ss) == 0);
    OK(nc_inq_atttype(ncid, NC_GLOBAL, "us", &type));
    CHECK(type == NC_USHORT);
    OK(nc_get_att_ushort(ncid, NC_GLOBAL, "us", us2));
    CHECK(memcmp(us, us2, sizeof us) == 0);
    OK(nc_get_att_int(ncid, NC_GLOBAL, "i", ii2));
    CHECK(memcmp(ii, ii2, sizeof ii) == 0);
    OK(nc_inq_atttype(ncid, NC_GLOBAL, "ui", &type));
    CHECK(type == NC_UINT);
    OK(nc_get_att_uint(ncid, NC_GLOBAL, "ui", ui2));
    CHECK(ui2[0] == ui[0]);
    OK(nc_inq_atttype(ncid, NC_GLOBAL, "i64", &type));
    CHECK(type == NC_INT64);
    OK(nc_get_att_longlong(ncid, NC_GLOBAL, "i64", ll2));
    CHECK(memcmp(ll, ll2, sizeof ll) == 0);
    OK(nc_get_att_ulonglong(ncid, NC_GLOBAL, "ui64", ull2));
    CHECK(ull2[0] == ull[0]);
    OK(nc_inq_atttype(ncid, NC_GLOBAL, "f", &type));
    CHECK(type == NC_FLOAT);
    OK(nc_get_att_float(ncid, NC_GLOBAL, "f", fl2));
    CHECK(memcmp(fl, fl2, sizeof fl) == 0); /* exact, incl. -0.0 and FLT_MAX */
    OK(nc_get_att_double(ncid, NC_GLOBAL, "d", db2));
    CHECK(memcmp(db, db2, sizeof db) == 0);
    OK(nc_inq_att(ncid, NC_GLOBAL, "t", &type, &len));
    CHECK(type == NC_CHAR && len == 5);
    memset(text, 0, sizeof text);
    OK(nc_get_att_text(ncid, NC_GLOBAL, "t", text));
    CHECK(strcmp(text, "hello") == 0);
    memset(text, 0, sizeof text);
    OK(nc_get_att_text(ncid, NC_GLOBAL, "looks_numeric", text));
    CHECK(strcmp(text, "17") == 0);
    memset(text, 0, sizeof text);
    OK(nc_get_att_text(ncid, NC_GLOBAL, "looks_json", text));
    CHECK(strcmp(text, "[1, 2, 3]") == 0);
    OK(nc_inq_att(ncid, NC_GLOBAL, "empty", &type, &len));
    CHECK(type == NC_CHAR && len == 0);
    OK(nc_inq_att(ncid, NC_GLOBAL, "empty_int", &type, &len));
    CHECK(type == NC_INT && len == 0);
    char *got[3];
    OK(nc_inq_att(ncid, v, "strs", &type, &len));
    CHECK(type == NC_STRING && len == 3);
    OK(nc_get_att_string(ncid, v, "strs", got));
    CHECK(strcmp(got[0], "alpha") == 0 && strcmp(got[1], "") == 0 && strcmp(got[2], strs[2]) == 0);
    OK(nc_free_string(3, got));
    OK(nc_get_att_double(ncid, v, "special", db2));
    CHECK(isnan(db2[0]));
    OK(nc_get_att_float(ncid, v, "inf", fl2));
    CHECK(isinf(fl2[0]) && fl2[0] > 0 && isinf(fl2[1]) && fl2[1] < 0);
    OK(nc_get_att_schar(ncid, v, "wrapped", sc2));
    CHECK(sc2[0] == 44 && sc2[1] == -1);
    OK(nc_get_att_short(ncid, v, "dshort", ss2));
    CHECK(ss2[0] == -25536 && ss2[1] == 1);
    OK(nc_get_att(ncid, v, "generic", ss2));
    CHECK(ss2[0] == -32768 && ss2[1] == 32767);

    /* Conversion on get. */
    OK(nc_get_att_double(ncid, NC_GLOBAL, "i", db2));
    CHECK(db2[0] == -2147483648.0 && db2[2] == 2147483647.0);
    EXPECT(NC_ERANGE, nc_get_att_schar(ncid, NC_GLOBAL, "s", sc2));
    EXPECT(NC_ERANGE, nc_get_att_uchar(ncid, NC_GLOBAL, "b", uc2));
    CHECK(uc2[0] == 128);
    EXPECT(NC_ECHAR, nc_get_att_int(ncid, NC_GLOBAL, "t", ii2));
    EXPECT(NC_ECHAR, nc_get_att_text(ncid, NC_GLOBAL, "i", text));
    EXPECT(NC_ECHAR, nc_get_att_text(ncid, v, "strs", text));
    EXPECT(NC_ECHAR, nc_get_att_string(ncid, NC_GLOBAL, "t", got));
    OK(nc_get_att_int(ncid, NC_GLOBAL, "i", NULL));
    EXPECT(NC_ENOTATT, nc_get_att_int(ncid, NC_GLOBAL, "nope", ii2));
    EXPECT(NC_ENOTVAR, nc_get_att_int(ncid, 9, "i", ii2));

    /* Virtual attributes: readable by name, not listed. */
    OK(nc_inq_att(ncid, NC_GLOBAL, "_NCProperties", &type, &len));
    CHECK(type == NC_CHAR && len > 10);
    char props[256] = {0};
    OK(nc_get_att_text(ncid, NC_GLOBAL, "_NCProperties", props));
    CHECK(strncmp(props, "version=2,netcdf=", 17) == 0);
    EXPECT(NC_EATTMETA, nc_inq_attid(ncid, NC_GLOBAL, "_NCProperties", &n));
    OK(nc_get_att_int(ncid, NC_GLOBAL, "_IsNetcdf4", &n));
    CHECK(n == 1);
    OK(nc_get_att_int(ncid, NC_GLOBAL, "_SuperblockVersion", &n));
    CHECK(n == 2);
    EXPECT(NC_ENOTATT, nc_inq_att(ncid, NC_GLOBAL, "_Format", &type, &len));

    /* Rename keeps the position, delete renumbers, overwrite keeps the position. */
    OK(nc_rename_att(ncid, NC_GLOBAL, "t", "text"));
    OK(nc_inq_attid(ncid, NC_GLOBAL, "text", &n));
    CHECK(n == 10);
    EXPECT(NC_ENAMEINUSE, nc_rename_att(ncid, NC_GLOBAL, "text", "b"));
    EXPECT(NC_ENOTATT, nc_rename_att(ncid, NC_GLOBAL, "nope", "x"));
    EXPECT(NC_EBADNAME, nc_rename_att(ncid, NC_GLOBAL, "text", "a/b"));
    OK(nc_del_att(ncid, NC_GLOBAL, "b"));
    OK(nc_inq_attid(ncid, NC_GLOBAL, "text", &n));
    CHECK(n == 9);
    EXPECT(NC_ENOTATT, nc_del_att(ncid, NC_GLOBAL, "b"));
    OK(nc_put_att_double(ncid, NC_GLOBAL, "ub", NC_DOUBLE, 1, db));
    OK(nc_inq_attid(ncid, NC_GLOBAL, "ub", &n));
    CHECK(n == 0);
    OK(nc_inq_atttype(ncid, NC_GLOBAL, "ub", &type));
    CHECK(type == NC_DOUBLE);

    /* Copy: same dataset (variable -> global, onto itself) and across datasets/drivers. */
    OK(nc_copy_att(ncid, v, "strs", ncid, NC_GLOBAL));
    OK(nc_copy_att(ncid, v, "strs", ncid, v));
    OK(nc_create(u2, 0, &ncid2));
    OK(nc_copy_att(ncid, NC_GLOBAL, "f", ncid2, NC_GLOBAL));
    OK(nc_copy_att(ncid, NC_GLOBAL, "text", ncid2, NC_GLOBAL));
    EXPECT(NC_ENOTATT, nc_copy_att(ncid, NC_GLOBAL, "gone", ncid2, NC_GLOBAL));
    OK(nc_close(ncid2));
    OK(nc_close(ncid));

    OK(nc_open(u2, 0, &ncid2));
    OK(nc_get_att_float(ncid2, NC_GLOBAL, "f", fl2));
    CHECK(memcmp(fl, fl2, sizeof fl) == 0);
    memset(text, 0, sizeof text);
    OK(nc_get_att_text(ncid2, NC_GLOBAL, "text", text));
    CHECK(strcmp(text, "hello") == 0);
    OK(nc_close(ncid2));
    OK(nc_open(u, 0, &ncid));
    OK(nc_inq_attid(ncid, NC_GLOBAL, "text", &n));
    CHECK(n == 9);
    OK(nc_inq_att(ncid, NC_GLOBAL, "strs", &type, &len));
    CHECK(type == NC_STRING && len == 3);
    OK(nc_close(ncid));
    /* The same NCZarr store through mode=zarr: recorded types still hold (NC_STRING stays
     * NC_STRING, as in netcdf-c 4.10.1; NC_CHAR stays NC_CHAR, where netcdf-c says NC_STRING). */
    {
        char zu[4200];
        snprintf(zu, sizeof zu, "%s", u);
        char *hash = strstr(zu, "#mode=");
        if (hash) snprintf(hash, sizeof zu - (size_t)(hash - zu), "#mode=zarr,file");
        OK(nc_open(zu, 0, &ncid));
        OK(nc_inq_att(ncid, NC_GLOBAL, "strs", &type, &len));
        CHECK(type == NC_STRING && len == 3);
        OK(nc_inq_att(ncid, NC_GLOBAL, "text", &type, &len));
        CHECK(type == NC_CHAR && len == 5);
        OK(nc_close(ncid));
    }
    DONE();
}
