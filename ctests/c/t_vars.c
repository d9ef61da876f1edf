/* Variables: definition, inquiry, storage settings and their round trip (c-api.md §8). */
#include "check.h"
#include "netcdf_filter.h"

int main(int argc, char **argv)
{
    const char *dir = argv[1];
    const char *u = url(dir, "v.file", "nczarr,file");
    int ncid, t, x, y, v, s, f, str, c, n, ids[8], type, ndims, natts, a, b, l;
    char name[NC_MAX_NAME + 1];
    size_t chunks[4], nparams;
    unsigned int fids[8], params[8], id;
    float ff;
    double dd;

    OK(nc_create(u, 0, &ncid));
    OK(nc_def_dim(ncid, "time", NC_UNLIMITED, &t));
    OK(nc_def_dim(ncid, "y", 300, &y));
    OK(nc_def_dim(ncid, "x", 400, &x));
    int dims3[3] = {t, y, x}, dims2[2] = {y, x};

    /* Checks in netcdf-c's order. */
    EXPECT(NC_EINVAL, nc_def_var(ncid, NULL, NC_INT, 0, NULL, &v));
    EXPECT(NC_EBADNAME, nc_def_var(ncid, "a/b", NC_INT, 0, NULL, &v));
    EXPECT(NC_EBADTYPE, nc_def_var(ncid, "bad", NC_NAT, 0, NULL, &v));
    EXPECT(NC_EINVAL, nc_def_var(ncid, "bad", NC_INT, -1, NULL, &v));
    EXPECT(NC_EINVAL, nc_def_var(ncid, "bad", NC_INT, 2, NULL, &v));
    int baddims[2] = {y, 42};
    EXPECT(NC_EBADDIM, nc_def_var(ncid, "bad", NC_INT, 2, baddims, &v));
    EXPECT(NC_EBADTYPE, nc_def_var(ncid, "bad", 99, 0, NULL, &v));
    EXPECT(NC_EBADTYPE, nc_def_var(ncid, "bad", NC_VLEN, 0, NULL, &v));

    OK(nc_def_var(ncid, "temp", NC_FLOAT, 3, dims3, &v));
    CHECK(v == 0);
    EXPECT(NC_ENAMEINUSE, nc_def_var(ncid, "temp", NC_INT, 0, NULL, NULL));
    OK(nc_def_var(ncid, "scalar", NC_DOUBLE, 0, NULL, &s));
    OK(nc_def_var(ncid, "field", NC_DOUBLE, 2, dims2, &f));
    OK(nc_def_var(ncid, "names", NC_STRING, 1, &y, &str));
    OK(nc_def_var(ncid, "code", NC_CHAR, 2, dims2, &c));
    OK(nc_def_var(ncid, "rec", NC_INT, 1, &t, NULL));
    OK(nc_def_var(ncid, "y", NC_INT, 1, &x, NULL)); /* same name as a dimension, other dims: legal */

    /* Inquiry. */
    OK(nc_inq_var(ncid, v, name, &type, &ndims, ids, &natts));
    CHECK(strcmp(name, "temp") == 0 && type == NC_FLOAT && ndims == 3 && ids[0] == t && ids[2] == x && natts == 0);
    OK(nc_inq_var(ncid, v, NULL, NULL, NULL, NULL, NULL));
    EXPECT(NC_ENOTVAR, nc_inq_var(ncid, 99, name, NULL, NULL, NULL, NULL));
    EXPECT(NC_ENOTVAR, nc_inq_var(ncid, -5, name, NULL, NULL, NULL, NULL));
    EXPECT(NC_ENOTVAR, nc_inq_var(ncid, NC_GLOBAL, name, NULL, NULL, NULL, NULL));
    OK(nc_inq_varnatts(ncid, NC_GLOBAL, &n));
    OK(nc_inq_varid(ncid, "field", &n));
    CHECK(n == f);
    EXPECT(NC_ENOTVAR, nc_inq_varid(ncid, "nope", &n));
    EXPECT(NC_ENOTVAR, nc_inq_varid(ncid, "", &n));
    EXPECT(NC_EINVAL, nc_inq_varid(ncid, NULL, &n));
    OK(nc_inq_varids(ncid, &n, ids));
    CHECK(n == 7 && ids[6] == 6);
    OK(nc_inq_nvars(ncid, &n));
    CHECK(n == 7);

    /* Default chunking (netcdf-c's algorithm) and explicit chunking. */
    OK(nc_inq_var_chunking(ncid, f, &s, chunks));
    CHECK(s == NC_CHUNKED && chunks[0] == 300 && chunks[1] == 400);
    OK(nc_inq_var_chunking(ncid, v, &s, chunks));
    CHECK(chunks[0] == 1 && chunks[1] == 300 && chunks[2] == 400);
    OK(nc_inq_varid(ncid, "rec", &n));
    OK(nc_inq_var_chunking(ncid, n, &s, chunks));
    CHECK(chunks[0] == 1024);
    size_t want[3] = {1, 100, 200};
    OK(nc_def_var_chunking(ncid, v, NC_CHUNKED, want));
    OK(nc_inq_var_chunking(ncid, v, &s, chunks));
    CHECK(chunks[1] == 100 && chunks[2] == 200);
    size_t toobig[2] = {301, 1};
    EXPECT(NC_EBADCHUNK, nc_def_var_chunking(ncid, f, NC_CHUNKED, toobig));
    EXPECT(NC_EINVAL, nc_def_var_chunking(ncid, v, NC_CONTIGUOUS, NULL));
    EXPECT(NC_EINVAL, nc_def_var_chunking(ncid, f, 5, NULL));
    OK(nc_def_var_chunking(ncid, f, NC_CONTIGUOUS, NULL));
    OK(nc_inq_var_chunking(ncid, f, &s, chunks));
    CHECK(s == NC_CHUNKED && chunks[0] == 300 && chunks[1] == 400);
    OK(nc_inq_varid(ncid, "scalar", &n));
    EXPECT(NC_EINVAL, nc_def_var_chunking(ncid, n, NC_CHUNKED, NULL));
    EXPECT(NC_EINVAL, nc_def_var_deflate(ncid, n, 0, 1, 1));

    /* Filters: deflate + shuffle, fletcher32, zstd, bzip2, blosc; validation. */
    EXPECT(NC_EINVAL, nc_def_var_deflate(ncid, v, 1, 1, 10));
    OK(nc_def_var_deflate(ncid, v, 1, 1, 4));
    OK(nc_inq_var_deflate(ncid, v, &a, &b, &l));
    CHECK(a == 1 && b == 1 && l == 4);
    OK(nc_def_var_fletcher32(ncid, f, 0));
    OK(nc_inq_var_fletcher32(ncid, f, &a));
    CHECK(a == 0);
    OK(nc_def_var_fletcher32(ncid, f, 1));
    OK(nc_inq_var_fletcher32(ncid, f, &a));
    CHECK(a == 1);
    OK(nc_def_var_zstandard(ncid, f, 5));
    EXPECT(NC_EINVAL, nc_def_var_bzip2(ncid, f, 0));
    OK(nc_inq_var_filter_ids(ncid, v, &nparams, NULL));
    CHECK(nparams == 2);
    OK(nc_inq_var_filter_ids(ncid, v, &nparams, fids));
    CHECK(fids[0] == H5Z_FILTER_SHUFFLE && fids[1] == H5Z_FILTER_DEFLATE);
    OK(nc_inq_var_filter_info(ncid, v, H5Z_FILTER_DEFLATE, &nparams, params));
    CHECK(nparams == 1 && params[0] == 4);
    EXPECT(NC_ENOFILTER, nc_inq_var_filter_info(ncid, v, H5Z_FILTER_ZSTD, &nparams, params));
    OK(nc_inq_var_filter(ncid, v, &id, &nparams, params));
    CHECK(id == H5Z_FILTER_SHUFFLE && nparams == 0);
    OK(nc_inq_var_filter(ncid, c, &id, NULL, NULL));
    CHECK(id == 0);
    unsigned int lvl = 7;
    OK(nc_def_var_filter(ncid, v, H5Z_FILTER_DEFLATE, 1, &lvl)); /* replaces in place */
    OK(nc_inq_var_deflate(ncid, v, NULL, NULL, &l));
    CHECK(l == 7);
    EXPECT(NC_EINVAL, nc_def_var_filter(ncid, v, 99999, 0, NULL));     /* past HDF5's 65535 */
    EXPECT(NC_ENOFILTER, nc_def_var_filter(ncid, v, 40000, 0, NULL));  /* no plugin provides it */
    EXPECT(NC_ENOFILTER, nc_def_var_szip(ncid, v, 32, 32));
    OK(nc_inq_var_szip(ncid, v, &a, &b));
    CHECK(a == 0 && b == 0);
    OK(nc_def_var_blosc(ncid, c, BLOSC_LZ4, 5, 0, BLOSC_SHUFFLE));
    OK(nc_inq_var_blosc(ncid, c, &a, &id, NULL, NULL, NULL));
    CHECK(a == 1 && id == BLOSC_LZ4);
    EXPECT(NC_EINVAL, nc_def_var_blosc(ncid, c, 9, 5, 0, 1));
    OK(nc_inq_filter_avail(ncid, H5Z_FILTER_DEFLATE));
    OK(nc_inq_filter_avail(ncid, H5Z_FILTER_ZSTD));
    EXPECT(NC_ENOFILTER, nc_inq_filter_avail(ncid, H5Z_FILTER_SZIP));
    EXPECT(NC_ENOFILTER, nc_inq_filter_avail(ncid, 5));

    /* Fill values. */
    OK(nc_inq_var_fill(ncid, f, &a, &dd));
    CHECK(a == 0 && dd == NC_FILL_DOUBLE);
    ff = -999.0f;
    OK(nc_def_var_fill(ncid, v, 0, &ff));
    ff = 0;
    OK(nc_inq_var_fill(ncid, v, &a, &ff));
    CHECK(a == 0 && ff == -999.0f);
    EXPECT(NC_EGLOBAL, nc_def_var_fill(ncid, NC_GLOBAL, 0, &ff));
    EXPECT(NC_EINVAL, nc_def_var_fill(ncid, str, 1, NULL));
    OK(nc_def_var_fill(ncid, c, 1, NULL));
    OK(nc_inq_var_fill(ncid, c, &a, NULL));
    CHECK(a == 1);
    char *sfill = NULL;
    OK(nc_inq_var_fill(ncid, str, &a, &sfill));
    CHECK(a == 0 && sfill && strcmp(sfill, "") == 0);
    nc_free_string(1, &sfill);
    double wrongtype = 1;
    EXPECT(NC_EBADTYPE, nc_put_att_double(ncid, v, "_FillValue", NC_DOUBLE, 1, &wrongtype));
    EXPECT(NC_EINVAL, nc_put_att_float(ncid, v, "_FillValue", NC_FLOAT, 2, &ff));

    /* Endianness and quantize. */
    OK(nc_inq_var_endian(ncid, f, &a));
    CHECK(a == NC_ENDIAN_LITTLE);
    OK(nc_def_var_endian(ncid, f, NC_ENDIAN_BIG));
    EXPECT(NC_EINVAL, nc_def_var_endian(ncid, f, 7));
    EXPECT(NC_EINVAL, nc_def_var_endian(ncid, c, NC_ENDIAN_BIG));
    EXPECT(NC_EINVAL, nc_def_var_quantize(ncid, c, NC_QUANTIZE_BITGROOM, 3));
    EXPECT(NC_EINVAL, nc_def_var_quantize(ncid, v, NC_QUANTIZE_BITGROOM, 7));
    EXPECT(NC_EINVAL, nc_def_var_quantize(ncid, v, 4, 3));
    OK(nc_def_var_quantize(ncid, v, NC_QUANTIZE_BITROUND, 10));
    OK(nc_inq_var_quantize(ncid, v, &a, &b));
    CHECK(a == NC_QUANTIZE_BITROUND && b == 10);
    /* The attribute recording it appears at enddef, after the variable's own attributes. */
    EXPECT(NC_ENOTATT, nc_inq_att(ncid, v, NC_QUANTIZE_BITROUND_ATT_NAME, &type, &nparams));
    OK(nc_enddef(ncid));
    OK(nc_redef(ncid));
    OK(nc_inq_att(ncid, v, NC_QUANTIZE_BITROUND_ATT_NAME, &type, &nparams));
    CHECK(type == NC_INT && nparams == 1);
    EXPECT(NC_ELATEDEF, nc_def_var_quantize(ncid, v, NC_QUANTIZE_BITROUND, 11));

    /* Chunk caches. */
    size_t csize, cnelems;
    float cpre;
    OK(nc_get_var_chunk_cache(ncid, v, &csize, &cnelems, &cpre));
    CHECK(csize > 0 && cpre >= 0 && cpre <= 1);
    EXPECT(NC_EINVAL, nc_set_var_chunk_cache(ncid, v, 1000, 10, 1.5f));
    EXPECT(NC_ENOTVAR, nc_set_var_chunk_cache(ncid, NC_GLOBAL, 1000, 10, 0.5f));
    OK(nc_set_var_chunk_cache(ncid, v, 1 << 20, 10, 0.5f));
    OK(nc_get_var_chunk_cache(ncid, v, &csize, &cnelems, &cpre));
    CHECK(csize == 1 << 20 && cnelems == 10 && cpre == 0.5f);
    OK(nc_set_chunk_cache(32 << 20, 500, 0.25f));
    OK(nc_get_chunk_cache(&csize, &cnelems, &cpre));
    CHECK(csize == 32 << 20 && cnelems == 500 && cpre == 0.25f);
    EXPECT(NC_EINVAL, nc_set_chunk_cache(1, 1, 2.0f));

    /* The first enddef locks every existing variable. */
    OK(nc_enddef(ncid));
    EXPECT(NC_ELATEDEF, nc_def_var_deflate(ncid, f, 0, 1, 1));
    EXPECT(NC_ELATEDEF, nc_def_var_chunking(ncid, f, NC_CHUNKED, NULL));
    EXPECT(NC_ELATEDEF, nc_def_var_fill(ncid, f, 1, NULL));
    /* Created without NC_NETCDF4: netCDF-3 rules take a late _FillValue (t_reliability.c has
     * NC_ELATEFILL for a netCDF-4 dataset). */
    OK(nc_put_att_float(ncid, v, "_FillValue", NC_FLOAT, 1, &ff));
    OK(nc_def_var(ncid, "late", NC_SHORT, 1, &y, &n)); /* implicit redef; new var unlocked */
    OK(nc_def_var_deflate(ncid, n, 0, 1, 2));
    OK(nc_rename_var(ncid, f, "field2"));
    EXPECT(NC_ENAMEINUSE, nc_rename_var(ncid, f, "temp"));
    OK(nc_close(ncid));

    /* Everything round-trips through storage. */
    OK(nc_open(u, NC_NOWRITE, &ncid));
    OK(nc_inq_varid(ncid, "temp", &v));
    OK(nc_inq_var_chunking(ncid, v, &s, chunks));
    CHECK(chunks[0] == 1 && chunks[1] == 100 && chunks[2] == 200);
    OK(nc_inq_var_filter_ids(ncid, v, &nparams, fids));
    CHECK(nparams == 2 && fids[0] == H5Z_FILTER_SHUFFLE && fids[1] == H5Z_FILTER_DEFLATE);
    OK(nc_inq_var_deflate(ncid, v, &a, &b, &l));
    CHECK(a == 1 && b == 1 && l == 7);
    OK(nc_inq_var_fill(ncid, v, &a, &ff));
    CHECK(a == 0 && ff == -999.0f);
    OK(nc_inq_varid(ncid, "field2", &f));
    OK(nc_inq_var_endian(ncid, f, &a));
    CHECK(a == NC_ENDIAN_BIG);
    OK(nc_inq_var_filter_ids(ncid, f, &nparams, fids));
    CHECK(nparams == 2 && fids[0] == H5Z_FILTER_FLETCHER32 && fids[1] == H5Z_FILTER_ZSTD);
    OK(nc_inq_var_zstandard(ncid, f, &a, &l));
    CHECK(a == 1 && l == 5);
    OK(nc_inq_varid(ncid, "code", &c));
    OK(nc_inq_vartype(ncid, c, &type));
    CHECK(type == NC_CHAR);
    OK(nc_inq_var_fill(ncid, c, &a, NULL));
    CHECK(a == 1);
    OK(nc_inq_varid(ncid, "names", &str));
    OK(nc_inq_vartype(ncid, str, &type));
    CHECK(type == NC_STRING);
    OK(nc_inq_varid(ncid, "scalar", &n));
    OK(nc_inq_varndims(ncid, n, &ndims));
    CHECK(ndims == 0);
    OK(nc_inq_var_chunking(ncid, n, &s, NULL));
    CHECK(s == NC_CHUNKED);
    OK(nc_inq_var_quantize(ncid, v, &a, &b));
    OK(nc_inq_varid(ncid, "late", &n));
    OK(nc_inq_var_deflate(ncid, n, NULL, &b, &l));
    CHECK(b == 1 && l == 2);
    /* _Codecs: the variable's codec chain as JSON text. */
    OK(nc_inq_attlen(ncid, v, "_Codecs", &nparams));
    char codecs[256] = {0};
    OK(nc_get_att_text(ncid, v, "_Codecs", codecs));
    CHECK(strstr(codecs, "\"zlib\"") != NULL && strstr(codecs, "\"shuffle\"") != NULL);
    OK(nc_close(ncid));
    DONE();
}
