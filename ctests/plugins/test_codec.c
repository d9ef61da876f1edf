/* A codec plugin in netcdf-c's form (NCZ_codec_t, netcdf-c 4.8-4.10), for HDF5's LZ4 filter
 * (32004): {"id": "test_lz4"} or {"id": "test_lz4", "blocksize": N} <-> HDF5 parameters [] or
 * [N]. ctests/plugins/run.sh builds it into a plugin directory next to the LZ4 filter plugin:
 * stores then name the filter by this codec, and read it back through it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct NCZ_codec_t {
    int version;
    int sort;
    const char *codecid;
    unsigned int hdf5id;
    void (*NCZ_codec_initialize)(void);
    void (*NCZ_codec_finalize)(void);
    int (*NCZ_codec_to_hdf5)(const char *codec, size_t *nparamsp, unsigned **paramsp);
    int (*NCZ_hdf5_to_codec)(size_t nparams, const unsigned *params, char **codecp);
    int (*NCZ_modify_parameters)(int ncid, int varid, size_t *vnparamsp, unsigned **vparamsp, size_t *wnparamsp, unsigned **wparamsp);
} NCZ_codec_t;

static int to_hdf5(const char *codec, size_t *nparamsp, unsigned **paramsp) {
    if (strstr(codec, "\"test_lz4\"") == NULL) return -36; /* NC_EINVAL */
    const char *b = strstr(codec, "\"blocksize\"");
    *nparamsp = 0;
    *paramsp = NULL;
    if (b != NULL) {
        unsigned n = 0;
        if (sscanf(strchr(b, ':') + 1, " %u", &n) != 1) return -36;
        *paramsp = malloc(sizeof(unsigned));
        (*paramsp)[0] = n;
        *nparamsp = 1;
    }
    return 0;
}

static int to_codec(size_t nparams, const unsigned *params, char **codecp) {
    char buf[128];
    if (nparams > 1) return -36;
    if (nparams == 0) snprintf(buf, sizeof buf, "{\"id\": \"test_lz4\"}");
    else snprintf(buf, sizeof buf, "{\"id\": \"test_lz4\", \"blocksize\": %u}", params[0]);
    *codecp = strdup(buf);
    return 0;
}

static const NCZ_codec_t codec = {1, 1, "test_lz4", 32004, NULL, NULL, to_hdf5, to_codec, NULL};

const void *NCZ_get_codec_info(void) { return &codec; }
