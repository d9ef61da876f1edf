/* Prints the Zarr codec JSON a netcdf-c codec library (NCZ_codec_t, 4.8-4.10) writes for an
 * HDF5 filter and parameters:  codec_json <library> <hdf5 id> [params...]
 * ctests/plugins/run.sh compares it with the JSON we write for the same filter. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct NCZ_codec_t {
    int version, sort;
    const char *codecid;
    unsigned int hdf5id;
    void (*initialize)(void);
    void (*finalize)(void);
    int (*to_hdf5)(const char *, size_t *, unsigned **);
    int (*to_codec)(size_t, const unsigned *, char **);
    void *modify;
} NCZ_codec_t;

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    const void *(*defaults)(void) = (const void *(*)(void))dlsym(lib, "NCZ_codec_info_defaults");
    if (!defaults) return 1;
    unsigned id = (unsigned)atoi(argv[2]), params[16];
    size_t n = 0;
    for (int i = 3; i < argc && n < 16; i++) params[n++] = (unsigned)strtoul(argv[i], NULL, 0);
    for (const NCZ_codec_t *const *c = defaults(); *c; c++) {
        if ((*c)->hdf5id != id) continue;
        char *json = NULL;
        if ((*c)->to_codec(n, params, &json)) return 1;
        printf("%s\n", json);
        return 0;
    }
    return 1;
}
