/* crashpoint.c: an LD_PRELOAD shim that kills the process at a chosen file-system mutation.
 *
 * Every call that changes a file system (open for writing or creating, write, link, rename,
 * unlink, mkdir, rmdir, truncate, copy_file_range) is counted once the program calls
 * crashpoint_arm(). With CRASH_AT=N in the environment the process SIGKILLs itself just
 * before the N-th such call, so calls 1..N-1 are done and nothing after them: exactly what a
 * writer killed at that instant leaves (the kernel keeps what was written; nothing is flushed
 * from user space by a SIGKILL). crashpoint_disarm() stops counting and returns the count, so
 * a run without CRASH_AT tells the tester how many crash points an update has.
 *
 * The program under test looks the two functions up with dlsym(RTLD_DEFAULT, ...), so it runs
 * without the shim too. Build: cc -shared -fPIC -O2 crashpoint.c -o crashpoint.so -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static atomic_int armed;
static atomic_long count;
static long target;

void crashpoint_arm(void) {
    const char *at = getenv("CRASH_AT");
    target = at ? atol(at) : 0;
    atomic_store(&count, 0);
    atomic_store(&armed, 1);
}

long crashpoint_disarm(void) {
    atomic_store(&armed, 0);
    return atomic_load(&count);
}

/* One mutation is about to happen: die first if it is the chosen one. */
static void step(void) {
    if (!atomic_load(&armed)) return;
    long n = atomic_fetch_add(&count, 1) + 1;
    if (target > 0 && n == target) kill(getpid(), SIGKILL);
}

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name) static __typeof__(name) *real_##name; if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static int writes(int flags) { return flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | __O_TMPFILE); }

/* open/openat and their 64-bit names: the mode argument is there only with O_CREAT or
 * O_TMPFILE. PARAMS are the arguments before `flags`, ARGS the same names. */
#define OPEN_LIKE(name, PARAMS, ARGS)                                            \
    int name(PARAMS, int flags, ...) {                                           \
        mode_t mode = 0;                                                         \
        if (flags & (O_CREAT | __O_TMPFILE)) {                                   \
            va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); \
        }                                                                        \
        REAL(name);                                                              \
        if (writes(flags)) step();                                               \
        return real_##name(ARGS, flags, mode);                                   \
    }
#define COMMA ,
OPEN_LIKE(open, const char *path, path)
OPEN_LIKE(open64, const char *path, path)
OPEN_LIKE(openat, int dirfd COMMA const char *path, dirfd COMMA path)
OPEN_LIKE(openat64, int dirfd COMMA const char *path, dirfd COMMA path)

int creat(const char *path, mode_t mode) { REAL(creat); step(); return real_creat(path, mode); }
int creat64(const char *path, mode_t mode) { REAL(creat64); step(); return real_creat64(path, mode); }

ssize_t write(int fd, const void *buf, size_t n) { REAL(write); step(); return real_write(fd, buf, n); }
ssize_t writev(int fd, const struct iovec *iov, int n) { REAL(writev); step(); return real_writev(fd, iov, n); }
ssize_t pwrite(int fd, const void *buf, size_t n, off_t at) { REAL(pwrite); step(); return real_pwrite(fd, buf, n, at); }
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t at) { REAL(pwrite64); step(); return real_pwrite64(fd, buf, n, at); }
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t at) { REAL(pwritev); step(); return real_pwritev(fd, iov, n, at); }
ssize_t copy_file_range(int a, off64_t *ao, int b, off64_t *bo, size_t n, unsigned f) {
    REAL(copy_file_range); step(); return real_copy_file_range(a, ao, b, bo, n, f);
}
int ftruncate(int fd, off_t n) { REAL(ftruncate); step(); return real_ftruncate(fd, n); }
int ftruncate64(int fd, off64_t n) { REAL(ftruncate64); step(); return real_ftruncate64(fd, n); }

int rename(const char *a, const char *b) { REAL(rename); step(); return real_rename(a, b); }
int renameat(int fa, const char *a, int fb, const char *b) { REAL(renameat); step(); return real_renameat(fa, a, fb, b); }
int renameat2(int fa, const char *a, int fb, const char *b, unsigned f) {
    REAL(renameat2); step(); return real_renameat2(fa, a, fb, b, f);
}
int link(const char *a, const char *b) { REAL(link); step(); return real_link(a, b); }
int linkat(int fa, const char *a, int fb, const char *b, int f) { REAL(linkat); step(); return real_linkat(fa, a, fb, b, f); }
int unlink(const char *p) { REAL(unlink); step(); return real_unlink(p); }
int unlinkat(int fd, const char *p, int f) { REAL(unlinkat); step(); return real_unlinkat(fd, p, f); }
int rmdir(const char *p) { REAL(rmdir); step(); return real_rmdir(p); }
int mkdir(const char *p, mode_t m) { REAL(mkdir); step(); return real_mkdir(p, m); }
int mkdirat(int fd, const char *p, mode_t m) { REAL(mkdirat); step(); return real_mkdirat(fd, p, m); }
