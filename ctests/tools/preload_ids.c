/* Built against the system's netcdf-c; run with our preload library in front of it.
 * Our datasets must take slots top-down from 0x7FFF so they never collide with netcdf-c's
 * (spec/passthrough.md §5.2). */
#include <stdio.h>
#include <netcdf.h>

int main(int argc, char **argv)
{
    char url[4096];
    int a, b;
    snprintf(url, sizeof url, "file://%s/a.file#mode=nczarr,file", argv[1]);
    if (nc_create(url, 0, &a)) return 1;
    snprintf(url, sizeof url, "file://%s/b.file#mode=nczarr,file", argv[1]);
    if (nc_create(url, 0, &b)) return 1;
    printf("%x %x\n", a, b);
    nc_close(a);
    nc_close(b);
    return 0;
}
