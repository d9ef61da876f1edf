#include <stdio.h>
#include <string.h>
#include <netcdf.h>
#include <netcdf_meta.h>

int main(int argc, char **argv)
{
    char url[4096];
    int ncid, dimid, varid;
    snprintf(url, sizeof url, "file://%s/consumer.file#mode=nczarr,file", argc > 1 ? argv[1] : "/tmp");
    if (nc_create(url, 0, &ncid) || nc_def_dim(ncid, "x", 3, &dimid) ||
        nc_def_var(ncid, "v", NC_INT, 1, &dimid, &varid) || nc_close(ncid))
        return 1;
    if (nc_open(url, NC_NOWRITE, &ncid) || nc_inq_varid(ncid, "v", &varid) || nc_close(ncid))
        return 1;
    printf("consumer: %s (NC_VERSION %s, NC_HAS_NCZARR %d)\n", nc_inq_libvers(), NC_VERSION, NC_HAS_NCZARR);
    return strstr(nc_inq_libvers(), "nczarr-rs") ? 0 : 1;
}
