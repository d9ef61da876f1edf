/* t_errors.c: the reason behind an error is reachable without tracing. nczarr_last_error()
 * gives the calling thread's last failed call with its cause and fix. The common mistakes
 * each name theirs: a misspelled mode word, a plain netCDF file given to the drop-in alone,
 * an S3 endpoint nothing listens on. */
#include <netcdf_nczarr.h>
#include <pthread.h>
#include <string.h>
#include "check.h"

static int has(const char *text) {
    const char *last = nczarr_last_error();
    int found = last != NULL && strstr(last, text) != NULL;
    if (!found) fprintf(stderr, "last error %s lacks \"%s\"\n", last ? last : "(null)", text);
    return found;
}

static void *other_thread(void *arg) {
    (void)arg;
    /* Each thread has its own last error: none here yet. */
    return (void *)(size_t)(nczarr_last_error() != NULL && nczarr_last_error()[0] == '\0');
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char url[4096], plain[4096];
    int ncid;
    CHECK(nczarr_last_error() != NULL && nczarr_last_error()[0] == '\0');

    snprintf(url, sizeof url, "file://%s/x.zarr#mode=nczar,file", dir);
    EXPECT(NC_EINVAL, nc_open(url, NC_NOWRITE, &ncid));
    CHECK(has("unknown mode word \"nczar\""));
    CHECK(has("did you mean \"nczarr\"?"));
    CHECK(has("nc_open"));

    /* A call that succeeds leaves it (errno's rule). */
    snprintf(url, sizeof url, "file://%s/ok.zarr#mode=nczarr,file", dir);
    EXPECT(NC_NOERR, nc_create(url, NC_CLOBBER, &ncid));
    EXPECT(NC_NOERR, nc_close(ncid));
    CHECK(has("nczar"));

    /* Per thread. */
    pthread_t t;
    void *clean = NULL;
    CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0 && pthread_join(t, &clean) == 0 && clean != NULL);

    /* The drop-in alone (this program links only it) reads a netCDF-3 file itself (an empty
     * one: the signature, no records, no lists); one whose header its scanner cannot read
     * is NC_ENOTNC, saying where a real netcdf-c would help. */
    snprintf(plain, sizeof plain, "%s/plain.nc", dir);
    FILE *f = fopen(plain, "wb");
    unsigned char classic[32] = {'C', 'D', 'F', 1};
    CHECK(f != NULL && fwrite(classic, 1, sizeof classic, f) == sizeof classic && fclose(f) == 0);
    EXPECT(NC_NOERR, nc_open(plain, NC_NOWRITE, &ncid));
    EXPECT(NC_NOERR, nc_close(ncid));
    memset(classic + 4, 0xff, sizeof classic - 4);
    f = fopen(plain, "wb");
    CHECK(f != NULL && fwrite(classic, 1, sizeof classic, f) == sizeof classic && fclose(f) == 0);
    EXPECT(NC_ENOTNC, nc_open(plain, NC_NOWRITE, &ncid));
    CHECK(has("NCZARR_FALLBACK_LIB"));
    CHECK(has("libnczarr_preload.so"));

    /* An S3 endpoint nothing listens on (port 9, discard, on loopback; one attempt). */
    setenv("NCZARR_S3_MAX_ATTEMPTS", "1", 1);
    setenv("AWS_ACCESS_KEY_ID", "AKIATEST", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "never-shown", 1);
    EXPECT(NC_ES3, nc_open("http://127.0.0.1:9/bucket/x#mode=nczarr,s3", NC_NOWRITE, &ncid));
    CHECK(has("connection failed"));
    CHECK(has("is the endpoint in the name right"));
    CHECK(strstr(nczarr_last_error(), "never-shown") == NULL);
    DONE();
}
