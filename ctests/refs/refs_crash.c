/* refs_crash.c: writes a reference set by value (a chunk inline, a chunk beside the set) for
 * the crash-point case of the refs suite. `refs_crash URL old|new` writes the variables with
 * the old or the new values; the writes happen between crashpoint_arm() and
 * crashpoint_disarm() (ctests/crash/crashpoint.c, looked up at run time), and the number of
 * file-system mutations they made is printed. */
#include <dlfcn.h>
#include <netcdf.h>
#include <stdio.h>
#include <string.h>

#define CHECK(e) do { int s_ = (e); if (s_) { fprintf(stderr, "%s: %s\n", #e, nc_strerror(s_)); return 1; } } while (0)

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: refs_crash URL old|new\n");
        return 2;
    }
    double big[3000];
    short small[4];
    double k = strcmp(argv[2], "new") ? 1.0 : 2.0;
    for (int i = 0; i < 3000; i++) big[i] = k * i / 3;
    for (int i = 0; i < 4; i++) small[i] = (short)(k * 10 + i);
    void (*arm)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "crashpoint_arm");
    long (*disarm)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "crashpoint_disarm");
    if (arm) arm();
    int nc, n, s, vb, vs;
    CHECK(nc_create(argv[1], NC_CLOBBER, &nc));
    CHECK(nc_def_dim(nc, "n", 3000, &n));
    CHECK(nc_def_dim(nc, "s", 4, &s));
    CHECK(nc_def_var(nc, "big", NC_DOUBLE, 1, &n, &vb));
    CHECK(nc_def_var(nc, "small", NC_SHORT, 1, &s, &vs));
    CHECK(nc_enddef(nc));
    CHECK(nc_put_var_double(nc, vb, big));
    CHECK(nc_put_var_short(nc, vs, small));
    CHECK(nc_close(nc));
    printf("%ld\n", disarm ? disarm() : 0L);
    return 0;
}
