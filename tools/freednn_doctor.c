/* freednn doctor: diagnoses a cuDNN setup (FreeDNN's or NVIDIA's): the libcudnn* files the
 * loader can see and which one wins, each one's version (read in a child process, so a broken
 * library cannot crash the doctor), mixed sets, headers against the library, the CUDA driver
 * and devices, cudnnCreate and a tiny convolution on each backend. Prints every problem with
 * the command that fixes it; exit 0 only when there is none. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cudnn.h"
#include "freednn.h"
#include "freednn_dev.h"
#include "freednn_ref.h"
#include "freednn_tools.h"

#ifndef FREEDNN_TOOLS_CUDA_ARCHS
#define FREEDNN_TOOLS_CUDA_ARCHS ""
#endif

/* ------------------------------------------------------------------ findings */
typedef struct { char what[1024]; char fix[1024]; } finding;
static finding problems[64], notes[64];
static int nproblems, nnotes;

static void add(finding *arr, int *n, const char *fix, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void add(finding *arr, int *n, const char *fix, const char *fmt, ...)
{
    if (*n >= 64) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(arr[*n].what, sizeof arr[*n].what, fmt, ap);
    va_end(ap);
    snprintf(arr[*n].fix, sizeof arr[*n].fix, "%s", fix ? fix : "");
    (*n)++;
}
#define PROBLEM(fix, ...) add(problems, &nproblems, fix, __VA_ARGS__)
#define NOTE(fix, ...) add(notes, &nnotes, fix, __VA_ARGS__)

static int json_mode;
static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
    if (json_mode) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* ------------------------------------------------------------------ libraries */
typedef struct {
    char path[PATH_MAX];     /* as found */
    char real[PATH_MAX];     /* symlinks resolved */
    char name[128];          /* file name */
    char origin[64];         /* where it was found */
    int loader_visible;      /* searched by the dynamic loader */
    int probed, loaded, freednn, crashed;
    long version;            /* cudnnGetVersion(), -1 if none */
    char file_version[32];   /* from the real file name: libcudnn.so.8.9.7 -> 8.9.7 */
    char err[512];
} lib;
static lib libs[256];
static int nlibs;

/* search order of the loader: dirs with their origin */
typedef struct { char dir[PATH_MAX]; char origin[64]; } sdir;
static sdir order[128];
static int norder;

static void add_dir(const char *dir, const char *origin)
{
    if (!dir[0] || norder >= 128) return;
    for (int i = 0; i < norder; i++)
        if (!strcmp(order[i].dir, dir)) return;
    snprintf(order[norder].dir, sizeof order[norder].dir, "%s", dir);
    snprintf(order[norder].origin, sizeof order[norder].origin, "%s", origin);
    norder++;
}

static void add_path_list(const char *list, const char *origin, const char *exe_dir)
{
    if (!list) return;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        char d[PATH_MAX];
        if (exe_dir && !strncmp(t, "$ORIGIN", 7)) snprintf(d, sizeof d, "%s%s", exe_dir, t + 7);
        else if (exe_dir && !strncmp(t, "${ORIGIN}", 9)) snprintf(d, sizeof d, "%s%s", exe_dir, t + 9);
        else snprintf(d, sizeof d, "%s", t);
        add_dir(d, origin);
    }
    free(copy);
}

static void file_version_of(const char *real, char *out_v, size_t n)
{
    const char *b = strrchr(real, '/');
    b = b ? b + 1 : real;
    const char *so = strstr(b, ".so.");
    snprintf(out_v, n, "%s", so ? so + 4 : "");
}

static int is_cudnn_name(const char *n) { return !strncmp(n, "libcudnn", 8) && strstr(n, ".so"); }

static void add_lib(const char *path, const char *origin, int visible)
{
    if (nlibs >= 256) return;
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode)) return;
    for (int i = 0; i < nlibs; i++)
        if (!strcmp(libs[i].path, path)) return;
    lib *l = &libs[nlibs++];
    memset(l, 0, sizeof *l);
    snprintf(l->path, sizeof l->path, "%s", path);
    if (!realpath(path, l->real)) snprintf(l->real, sizeof l->real, "%s", path);
    const char *b = strrchr(path, '/');
    snprintf(l->name, sizeof l->name, "%s", b ? b + 1 : path);
    snprintf(l->origin, sizeof l->origin, "%s", origin);
    l->loader_visible = visible;
    l->version = -1;
    file_version_of(l->real, l->file_version, sizeof l->file_version);
}

static void scan_dir(const char *dir, const char *origin, int visible)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char *names[512];
    int n = 0;
    while ((e = readdir(d)) && n < 512)
        if (is_cudnn_name(e->d_name)) names[n++] = strdup(e->d_name);
    closedir(d);
    for (int i = 0; i < n; i++) {
        char p[PATH_MAX * 2];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        add_lib(p, origin, visible);
        free(names[i]);
    }
}

/* Load one library in a child: version, FreeDNN or not, or why it failed / crashed. */
static void probe(lib *l)
{
    int fds[2];
    if (pipe(fds)) return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(20);
        /* a crash in the library must end this child with its signal, whatever handlers the
         * process had installed (sanitizers, for instance) */
        int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
        for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], SIG_DFL);
        char msg[600];
        void *h = dlopen(l->path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(msg, sizeof msg, "E %s", dlerror());
        } else {
            size_t (*gv)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
            void *fd = dlsym(h, "freednnGetBackendName");
            /* dlsym with a handle can find symbols of dependencies: require the definition in this file */
            Dl_info info;
            if (gv && dladdr((void *)gv, &info) && info.dli_fname) {
                char r1[PATH_MAX], r2[PATH_MAX];
                if (realpath(info.dli_fname, r1) && realpath(l->path, r2) && strcmp(r1, r2)) gv = NULL;
            }
            snprintf(msg, sizeof msg, "V %ld %d", gv ? (long)gv() : -1L, fd != NULL);
        }
        ssize_t w = write(fds[1], msg, strlen(msg));
        (void)w;
        _exit(0);
    }
    close(fds[1]);
    char buf[600] = "";
    ssize_t got = 0, r;
    while ((r = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) got += r;
    buf[got > 0 ? got : 0] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    l->probed = 1;
    if (WIFSIGNALED(status)) {
        l->crashed = 1;
        snprintf(l->err, sizeof l->err, "crashed with signal %d (%s) while being loaded", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else if (buf[0] == 'V') {
        int fd = 0;
        sscanf(buf + 2, "%ld %d", &l->version, &fd);
        l->loaded = 1;
        l->freednn = fd;
    } else if (buf[0] == 'E') {
        snprintf(l->err, sizeof l->err, "cannot be loaded: %s", buf + 2);
    } else {
        snprintf(l->err, sizeof l->err, "the child process loading it exited with status %d", WEXITSTATUS(status));
    }
}

static const lib *find_lib_in(const char *dir, const char *soname)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/%s", dir, soname);
    for (int i = 0; i < nlibs; i++)
        if (!strcmp(libs[i].path, p)) return &libs[i];
    return NULL;
}

/* ldconfig -p: soname => path */
static char ldc_name[128][128], ldc_path[128][PATH_MAX];
static int nldc;
static void read_ldconfig(void)
{
    const char *cands[] = { "/sbin/ldconfig -p 2>/dev/null", "/usr/sbin/ldconfig -p 2>/dev/null", "ldconfig -p 2>/dev/null" };
    for (size_t c = 0; c < 3 && nldc == 0; c++) {
        FILE *f = popen(cands[c], "r");
        if (!f) continue;
        char line[PATH_MAX + 256];
        while (fgets(line, sizeof line, f) && nldc < 128) {
            char nm[128], *arrow = strstr(line, "=> ");
            if (!arrow || sscanf(line, " %127s", nm) != 1 || !is_cudnn_name(nm)) continue;
            if (!strstr(line, "x86-64") && !strstr(line, "64bit") && strstr(line, "libc6,")) continue;
            snprintf(ldc_name[nldc], sizeof ldc_name[nldc], "%s", nm);
            snprintf(ldc_path[nldc], sizeof ldc_path[nldc], "%s", arrow + 3);
            ldc_path[nldc][strcspn(ldc_path[nldc], "\n")] = 0;
            nldc++;
        }
        pclose(f);
    }
}

static const char *default_dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
                                      "/lib", "/usr/lib" };

/* the library the loader picks for soname, walking order[] (up to the ldconfig step, then the
 * cache, then the default dirs); NULL if none */
static const lib *resolve(const char *soname, int nsearch_before_cache)
{
    for (int i = 0; i < nsearch_before_cache; i++) {
        const lib *l = find_lib_in(order[i].dir, soname);
        if (l) return l;
    }
    for (int i = 0; i < nldc; i++)
        if (!strcmp(ldc_name[i], soname))
            for (int j = 0; j < nlibs; j++)
                if (!strcmp(libs[j].path, ldc_path[i])) return &libs[j];
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++) {
        const lib *l = find_lib_in(default_dirs[i], soname);
        if (l) return l;
    }
    return NULL;
}

/* ------------------------------------------------------------------ ELF */
typedef struct { char rpath[4096], runpath[4096]; char needed[32][128]; int nneeded; int ok; } elfinfo;

static void read_elf(const char *path, elfinfo *ei)
{
    memset(ei, 0, sizeof *ei);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    Elf64_Ehdr eh;
    if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096) {
        fclose(f);
        return;
    }
    Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
    if (fseek(f, (long)eh.e_shoff, SEEK_SET) || fread(sh, sizeof *sh, eh.e_shnum, f) != eh.e_shnum) goto done;
    for (int i = 0; i < eh.e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh.e_shnum) continue;
        Elf64_Shdr *ss = &sh[sh[i].sh_link];
        if (sh[i].sh_size > (1 << 24) || ss->sh_size > (1 << 24)) break;
        char *str = malloc(ss->sh_size + 1);
        Elf64_Dyn *dyn = malloc(sh[i].sh_size);
        if (!fseek(f, (long)ss->sh_offset, SEEK_SET) && fread(str, 1, ss->sh_size, f) == ss->sh_size &&
            !fseek(f, (long)sh[i].sh_offset, SEEK_SET) && fread(dyn, 1, sh[i].sh_size, f) == sh[i].sh_size) {
            str[ss->sh_size] = 0;
            size_t nd = sh[i].sh_size / sizeof(Elf64_Dyn);
            for (size_t k = 0; k < nd && dyn[k].d_tag != DT_NULL; k++) {
                if (dyn[k].d_un.d_val >= ss->sh_size) continue;
                const char *s = str + dyn[k].d_un.d_val;
                if (dyn[k].d_tag == DT_RPATH) snprintf(ei->rpath, sizeof ei->rpath, "%s", s);
                else if (dyn[k].d_tag == DT_RUNPATH) snprintf(ei->runpath, sizeof ei->runpath, "%s", s);
                else if (dyn[k].d_tag == DT_NEEDED && ei->nneeded < 32)
                    snprintf(ei->needed[ei->nneeded++], sizeof ei->needed[0], "%s", s);
            }
            ei->ok = 1;
        }
        free(str);
        free(dyn);
        break;
    }
done:
    free(sh);
    fclose(f);
}

/* ------------------------------------------------------------------ headers */
typedef struct { char path[PATH_MAX]; int major, minor, patch; } header;
static header headers[32];
static int nheaders;

static int define_value(const char *text, const char *name)
{
    const char *p = text;
    size_t l = strlen(name);
    while ((p = strstr(p, "#define"))) {
        p += 7;
        while (*p == ' ' || *p == '\t') p++;
        if (!strncmp(p, name, l) && (p[l] == ' ' || p[l] == '\t')) return atoi(p + l);
    }
    return -1;
}

static void scan_header(const char *dir)
{
    char p[PATH_MAX * 2];
    snprintf(p, sizeof p, "%s/cudnn_version.h", dir);
    for (int i = 0; i < nheaders; i++)
        if (!strcmp(headers[i].path, p)) return;
    FILE *f = fopen(p, "r");
    if (!f || nheaders >= 32) { if (f) fclose(f); return; }
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    header *h = &headers[nheaders++];
    snprintf(h->path, sizeof h->path, "%s", p);
    h->major = define_value(text, "CUDNN_MAJOR");
    h->minor = define_value(text, "CUDNN_MINOR");
    h->patch = define_value(text, "CUDNN_PATCHLEVEL");
}

/* ------------------------------------------------------------------ backends */
typedef struct {
    const char *name;
    int created;
    char status[64], reason[512];
    char conv[64], conv_detail[512];
    double maxerr;
} backend_res;

/* In a child: cudnnCreate with FREEDNN_BACKEND=name, then a tiny convolution against the reference. */
static void check_backend(backend_res *b)
{
    int fds[2];
    memset(b->status, 0, sizeof b->status);
    if (pipe(fds)) return;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(60);
        char msg[1400];
        setenv("FREEDNN_BACKEND", b->name, 1);
        cudnnHandle_t h;
        char err[512] = "";
        cudnnStatus_t st = cudnnCreate(&h);
        if (st != CUDNN_STATUS_SUCCESS) {
            cudnnGetLastErrorString(err, sizeof err);
            snprintf(msg, sizeof msg, "0\t%s\t%s\t-\t-\t0", cudnnGetErrorString(st), err);
        } else {
            int dev = !strcmp(freednnGetBackendName(h), "cuda");
            fdt_conv c = { .n = 1, .c = 2, .h = 5, .w = 4, .k = 3, .r = 3, .s = 3, .sh = 1, .sw = 1, .ph = 1, .pw = 1,
                           .dh = 1, .dw = 1, .g = 1 };
            double x[40], w[54], ref[60];
            float xf[40], wf[54], yf[60];
            for (int i = 0; i < 40; i++) x[i] = (i * 7 % 11) - 5;
            for (int i = 0; i < 54; i++) w[i] = (i * 5 % 7) - 3;
            fdt_ref_fwd(&c, x, w, ref);
            fdt_from_double(x, CUDNN_DATA_FLOAT, xf, 40);
            fdt_from_double(w, CUDNN_DATA_FLOAT, wf, 54);
            for (int i = 0; i < 60; i++) yf[i] = NAN;
            void *xb = fdt_alloc(dev, sizeof xf), *wb = fdt_alloc(dev, sizeof wf), *yb = fdt_alloc(dev, sizeof yf);
            cudnnTensorDescriptor_t xd, yd;
            cudnnFilterDescriptor_t wd;
            cudnnConvolutionDescriptor_t cd;
            const char *cstat = "-", *detail = "";
            double me = 0;
            if (!xb || !wb || !yb) {
                cstat = "ALLOC_FAILED";
                detail = "cannot allocate the test tensors";
            } else {
                fdt_upload(dev, xb, xf, sizeof xf);
                fdt_upload(dev, wb, wf, sizeof wf);
                fdt_upload(dev, yb, yf, sizeof yf);
                cudnnCreateTensorDescriptor(&xd);
                cudnnCreateTensorDescriptor(&yd);
                cudnnCreateFilterDescriptor(&wd);
                cudnnCreateConvolutionDescriptor(&cd);
                cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 2, 5, 4);
                cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 3, 5, 4);
                cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 3, 2, 3, 3);
                cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
                float alpha = 1, beta = 0;
                st = cudnnConvolutionForward(h, &alpha, xd, xb, wd, wb, cd, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                             NULL, 0, &beta, yd, yb);
                if (st != CUDNN_STATUS_SUCCESS) {
                    cstat = cudnnGetErrorString(st);
                    cudnnGetLastErrorString(err, sizeof err);
                    detail = err;
                } else {
                    fdt_download(dev, yf, yb, sizeof yf);
                    for (int i = 0; i < 60; i++) {
                        double e = fabs(yf[i] - ref[i]);
                        if (!(e <= me)) me = e;
                    }
                    cstat = me == 0 ? "MATCH" : "MISMATCH";
                }
            }
            snprintf(msg, sizeof msg, "1\tCUDNN_STATUS_SUCCESS\t%s\t%s\t%s\t%g", freednnGetBackendName(h), cstat, detail, me);
        }
        ssize_t wr = write(fds[1], msg, strlen(msg));
        (void)wr;
        _exit(0);
    }
    close(fds[1]);
    char buf[1400] = "";
    ssize_t got = 0, r;
    while ((r = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) got += r;
    buf[got > 0 ? got : 0] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        snprintf(b->status, sizeof b->status, "CRASHED");
        snprintf(b->reason, sizeof b->reason, "the check crashed with signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        return;
    }
    char *f[6] = { 0 };
    char *save = NULL, *p = buf;
    for (int i = 0; i < 6; i++) {
        f[i] = strsep(&p, "\t");
        if (!f[i]) f[i] = "";
    }
    (void)save;
    b->created = atoi(f[0]);
    snprintf(b->status, sizeof b->status, "%s", f[1]);
    if (b->created) {
        snprintf(b->conv, sizeof b->conv, "%s", f[3]);
        snprintf(b->conv_detail, sizeof b->conv_detail, "%s", f[4]);
        b->maxerr = atof(f[5]);
    } else {
        snprintf(b->reason, sizeof b->reason, "%s", f[2]);
    }
}

/* ------------------------------------------------------------------ CUDA driver */
typedef struct { int present; int driver; int ndev; char names[8][128]; int cc[8][2]; char err[256]; } cudainfo;

static void check_driver(cudainfo *ci)
{
    memset(ci, 0, sizeof *ci);
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(ci->err, sizeof ci->err, "libcuda.so.1 (the NVIDIA driver) is not installed or not visible");
        return;
    }
    ci->present = 1;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*ver)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int (*get)(int *, int) = (int (*)(int *, int))dlsym(h, "cuDeviceGet");
    int (*attr)(int *, int, int) = (int (*)(int *, int, int))dlsym(h, "cuDeviceGetAttribute");
    int (*name)(char *, int, int) = (int (*)(char *, int, int))dlsym(h, "cuDeviceGetName");
    if (ver) ver(&ci->driver);
    int rc = init ? init(0) : -1;
    if (rc != 0) {
        snprintf(ci->err, sizeof ci->err, "cuInit failed with CUresult %d%s", rc,
                 rc == 100 ? " (no CUDA-capable device)" : rc == 35 ? " (driver older than the runtime)" : "");
        return;
    }
    if (count) count(&ci->ndev);
    for (int i = 0; i < ci->ndev && i < 8; i++) {
        int d = 0;
        if (get) get(&d, i);
        if (name) name(ci->names[i], sizeof ci->names[i], d);
        if (attr) { attr(&ci->cc[i][0], 75, d); attr(&ci->cc[i][1], 76, d); }
    }
}

/* The driver is queried in a child process: a parent that has called cuInit cannot use CUDA in
 * the children it forks afterwards (the per-backend checks run in children), and a broken
 * driver cannot crash the doctor. */
static void check_driver_isolated(cudainfo *ci)
{
    int fd[2];
    memset(ci, 0, sizeof *ci);
    if (pipe(fd) != 0) {
        check_driver(ci);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        cudainfo r;
        check_driver(&r);
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (pid > 0 && got < sizeof *ci) {
        ssize_t r = read(fd[0], (char *)ci + got, sizeof *ci - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    if (got != sizeof *ci) {
        memset(ci, 0, sizeof *ci);
        snprintf(ci->err, sizeof ci->err, "querying the CUDA driver crashed the child process (status %d)", status);
    }
}

/* ------------------------------------------------------------------ main */
static void usage(FILE *f)
{
    fprintf(f,
"usage: freednn doctor [--exe PROGRAM] [--include DIR]... [--json]\n"
"Diagnoses the cuDNN setup of this machine, FreeDNN's or NVIDIA's:\n"
"  - every libcudnn* file the dynamic loader can see (LD_LIBRARY_PATH, the RPATH/RUNPATH of\n"
"    PROGRAM with --exe, the ldconfig cache, the standard directories) and the Python wheels\n"
"    (site-packages/nvidia/cudnn), which are FreeDNN and which NVIDIA, their versions (each\n"
"    loaded in a child process), which one a program would load, and mixed sets;\n"
"  - cudnn_version.h on the include path (CPATH, C_INCLUDE_PATH, --include, standard dirs)\n"
"    against the library: same major version, and the library's minor >= the headers' minor;\n"
"  - the CUDA driver, the GPUs and their compute capability;\n"
"  - cudnnCreate and a tiny convolution on each FreeDNN backend, checked against a reference.\n"
"Each problem is printed with the command that fixes it. Exit status 0 when there is none.\n"
"  --exe PROGRAM   diagnose the libraries PROGRAM would load (its DT_NEEDED, RPATH/RUNPATH)\n"
"  --include DIR   also look for headers in DIR (repeatable)\n"
"  --json          machine-readable report on stdout\n");
}

/* directory of the libcudnn this freednn runs with */
static const char *self_lib_dir(char *buf, size_t n)
{
    Dl_info info;
    char r[PATH_MAX];
    if (!dladdr((void *)cudnnGetVersion, &info) || !info.dli_fname || !realpath(info.dli_fname, r)) return NULL;
    char *s = strrchr(r, '/');
    if (!s) return NULL;
    *s = 0;
    snprintf(buf, n, "%s", r);
    return buf;
}

static void vstr(long v, char *buf, size_t n)
{
    if (v < 0) snprintf(buf, n, "unknown");
    else if (v >= 90000) snprintf(buf, n, "%ld.%ld.%ld", v / 10000, v % 10000 / 100, v % 100);
    else snprintf(buf, n, "%ld.%ld.%ld", v / 1000, v % 1000 / 100, v % 100);
}
static int vmajor(long v) { return v >= 90000 ? (int)(v / 10000) : (int)(v / 1000); }
static int vminor(long v) { return v >= 90000 ? (int)(v % 10000 / 100) : (int)(v % 1000 / 100); }

int fdt_doctor_main(int argc, char **argv)
{
    const char *exe = NULL;
    const char *incs[16];
    int nincs = 0;
    static const struct option lo[] = { { "exe", required_argument, 0, 'e' }, { "include", required_argument, 0, 'I' },
                                        { "json", no_argument, 0, 'j' }, { "help", no_argument, 0, 'H' }, { 0, 0, 0, 0 } };
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
        switch (ch) {
        case 'e': exe = optarg; break;
        case 'I': if (nincs < 16) incs[nincs++] = optarg; break;
        case 'j': json_mode = 1; break;
        case 'H': usage(stdout); return 0;
        case ':': fprintf(stderr, "freednn doctor: option %s needs a value\n", argv[optind - 1]); return 2;
        default: fprintf(stderr, "freednn doctor: unknown option '%s' (see freednn doctor --help)\n", argv[optind - 1]); return 2;
        }
    }
    if (optind < argc) { fprintf(stderr, "freednn doctor: unexpected argument '%s'\n", argv[optind]); return 2; }
    nproblems = nnotes = nlibs = norder = nheaders = nldc = 0;

    out("FreeDNN doctor (freednn %s, linked with cuDNN API %zu)\n", FREEDNN_TOOLS_VERSION, cudnnGetVersion());
    char selfdir[PATH_MAX + 8];
    const char *self = self_lib_dir(selfdir, sizeof selfdir);

    /* --- the program */
    elfinfo ei;
    memset(&ei, 0, sizeof ei);
    char exe_dir[PATH_MAX] = "";
    const char *want_so = "libcudnn.so.8";
    if (exe) {
        read_elf(exe, &ei);
        if (!ei.ok) {
            fprintf(stderr, "freednn doctor: --exe %s is not a readable 64-bit ELF program\n", exe);
            return 2;
        }
        char r[PATH_MAX];
        if (realpath(exe, r)) { snprintf(exe_dir, sizeof exe_dir, "%s", r); char *s = strrchr(exe_dir, '/'); if (s) *s = 0; }
        want_so = NULL;
        for (int i = 0; i < ei.nneeded; i++)
            if (!strncmp(ei.needed[i], "libcudnn.so.", 12)) want_so = ei.needed[i];
        out("\n== Program %s\n  needs: %s\n  RPATH: %s\n  RUNPATH: %s\n", exe, want_so ? want_so : "(no libcudnn.so.N)",
            ei.rpath[0] ? ei.rpath : "-", ei.runpath[0] ? ei.runpath : "-");
        if (!want_so) {
            NOTE("", "%s does not link libcudnn directly (it may dlopen it); checking libcudnn.so.8", exe);
            want_so = "libcudnn.so.8";
        }
    }

    /* --- search order */
    if (exe && ei.rpath[0] && !ei.runpath[0]) add_path_list(ei.rpath, "RPATH of the program", exe_dir);
    add_path_list(getenv("LD_LIBRARY_PATH"), "LD_LIBRARY_PATH", NULL);
    if (exe && ei.runpath[0]) add_path_list(ei.runpath, "RUNPATH of the program", exe_dir);
    int nbefore = norder;
    for (int i = 0; i < norder; i++) scan_dir(order[i].dir, order[i].origin, 1);
    read_ldconfig();
    for (int i = 0; i < nldc; i++) add_lib(ldc_path[i], "ldconfig cache", 1);
    for (size_t i = 0; i < sizeof default_dirs / sizeof default_dirs[0]; i++) scan_dir(default_dirs[i], "standard directory", 1);
    scan_dir("/usr/local/cuda/lib64", "CUDA toolkit (not searched by the loader)", 0);
    if (self) scan_dir(self, "this freednn's own prefix", exe == NULL ? 0 : 0);
    /* Python wheels */
    const char *pats[] = { "/usr/lib/python3*/site-packages/nvidia/cudnn/lib", "/usr/lib/python3*/dist-packages/nvidia/cudnn/lib",
                           "/usr/local/lib/python3*/site-packages/nvidia/cudnn/lib", "/usr/local/lib/python3*/dist-packages/nvidia/cudnn/lib",
                           "%s/.local/lib/python3*/site-packages/nvidia/cudnn/lib", "%s/lib/python3*/site-packages/nvidia/cudnn/lib" };
    for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
        char pat[PATH_MAX];
        const char *base = i == 4 ? getenv("HOME") : i == 5 ? getenv("VIRTUAL_ENV") : "";
        if (!base) continue;
        snprintf(pat, sizeof pat, pats[i], base);
        glob_t g;
        if (glob(pat, 0, NULL, &g) == 0) {
            for (size_t k = 0; k < g.gl_pathc; k++) scan_dir(g.gl_pathv[k], "Python wheel nvidia-cudnn (loaded by frameworks, not the loader)", 0);
            globfree(&g);
        }
    }
    if (getenv("PYTHONPATH")) {
        char *copy = strdup(getenv("PYTHONPATH")), *sv = NULL;
        for (char *t = strtok_r(copy, ":", &sv); t; t = strtok_r(NULL, ":", &sv)) {
            char d[PATH_MAX];
            snprintf(d, sizeof d, "%.3000s/nvidia/cudnn/lib", t);
            scan_dir(d, "Python wheel nvidia-cudnn (PYTHONPATH)", 0);
        }
        free(copy);
    }

    /* --- probe every main library in a child; sub-libraries by file version */
    out("\n== cuDNN libraries found\n");
    for (int i = 0; i < nlibs; i++) {
        lib *l = &libs[i];
        int is_main = !strncmp(l->name, "libcudnn.so", 11);
        char v[32];
        int dup = 0;
        for (int j = 0; j < i && !dup; j++) dup = !strcmp(libs[j].real, l->real);
        if (is_main && !dup) probe(l);
        else if (is_main) {   /* same file under another name: copy the probe */
            for (int j = 0; j < i; j++)
                if (!strcmp(libs[j].real, l->real) && libs[j].probed) {
                    l->probed = 1; l->loaded = libs[j].loaded; l->freednn = libs[j].freednn; l->crashed = libs[j].crashed;
                    l->version = libs[j].version;
                    memcpy(l->err, libs[j].err, sizeof l->err);
                    break;
                }
        }
        vstr(l->version, v, sizeof v);
        if (dup) continue;   /* listed once, under its first name; the other names follow */
        out("  %s  [%s]", l->real, l->origin);
        if (is_main) {
            if (l->loaded) out(": %s %s\n", l->freednn ? "FreeDNN, cuDNN API" : "cuDNN (not FreeDNN)", v);
            else out(": %s\n", l->err);
        } else {
            out(": sub-library %s\n", l->file_version[0] ? l->file_version : "");
        }
        int nalias = 0;
        for (int j = 0; j < nlibs; j++)
            if (!strcmp(libs[j].real, l->real) && strcmp(libs[j].path, l->real)) {
                out("%s%s", nalias++ ? ", " : "      as: ", libs[j].path);
            }
        if (nalias) out("\n");
        if (is_main && l->crashed)
            PROBLEM("", "%s %s", l->path, l->err);
        if (is_main && l->loaded && l->version >= 0) {
            /* soname major vs reported major */
            const char *so = strstr(l->name, ".so.");
            int somaj = so ? atoi(so + 4) : -1;
            if (somaj > 0 && vmajor(l->version) != somaj) {
                char fix[1024];
                snprintf(fix, sizeof fix, "rm %s   # or take its directory out of %s", l->path, l->origin);
                PROBLEM(fix, "%s is named for cuDNN %d but reports version %s: a program linked against cuDNN %d would load an incompatible library",
                        l->path, somaj, v, somaj);
            }
        }
    }
    if (nlibs == 0) out("  (none)\n");
    if (self) out("  this freednn runs with the FreeDNN in %s\n", self);

    /* --- which one wins */
    out("\n== What the loader picks (%s)\n", exe ? exe : "a program without RPATH/RUNPATH");
    const lib *win = resolve(want_so, nbefore);
    char fixbuf[2048];
    int win_broken = 0;
    if (!win) {
        snprintf(fixbuf, sizeof fixbuf, "export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}", self ? self : "/path/to/freednn/lib");
        int other = 0;
        for (int i = 0; i < nlibs; i++)
            if (!strncmp(libs[i].name, "libcudnn.so.", 12) && libs[i].loader_visible) other = 1;
        PROBLEM(fixbuf, "no %s is visible to the dynamic loader%s", want_so,
                other ? " (another major version is: programs built for this one will not start)" : "");
        out("  %s: not found\n", want_so);
    } else {
        char v[32];
        vstr(win->version, v, sizeof v);
        out("  %s -> %s (%s, %s, version %s)\n", want_so, win->path, win->origin, win->freednn ? "FreeDNN" : "not FreeDNN", v);
        /* shadowing: a FreeDNN later in the order, or this freednn's own */
        for (int i = 0; i < nlibs; i++) {
            const lib *o = &libs[i];
            if (o == win || strcmp(o->name, win->name) || !o->freednn || win->freednn) continue;
            if (!win->loaded || (win->version >= 0 && vmajor(win->version) != 8)) {
                char od[PATH_MAX];
                snprintf(od, sizeof od, "%s", o->path);
                if (strrchr(od, '/')) *strrchr(od, '/') = 0;
                snprintf(fixbuf, sizeof fixbuf, "export LD_LIBRARY_PATH=%s   # put FreeDNN's directory first, or remove %s", od,
                         win->path);
                PROBLEM(fixbuf, "%s (%s) shadows FreeDNN at %s", win->path, win->origin, o->path);
            } else {
                NOTE("", "%s (%s, not FreeDNN) is loaded before FreeDNN at %s", win->path, win->origin, o->path);
            }
            break;
        }
        {
            const char *so = strstr(win->name, ".so.");
            win_broken = !win->loaded || (win->version >= 0 && so && vmajor(win->version) != atoi(so + 4));
        }
        if (!win->loaded && !win->crashed) {
            snprintf(fixbuf, sizeof fixbuf, "rm %s   # or remove it from the search path (%s)", win->path, win->origin);
            PROBLEM(fixbuf, "the %s that would be loaded (%s) %s", want_so, win->path, win->err);
        }
        /* mixed sets: every sub-library the loader would pick vs the main library */
        static const char *subs[] = { "ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train" };
        int major = atoi(want_so + 12);
        char mainv[32];
        snprintf(mainv, sizeof mainv, "%s", win->file_version);
        if (win->loaded && win->version >= 0) vstr(win->version, mainv, sizeof mainv);
        if (major == 8 && !win_broken) {
            for (int s = 0; s < 6; s++) {
                char so[64];
                snprintf(so, sizeof so, "libcudnn_%s.so.8", subs[s]);
                const lib *sl = resolve(so, nbefore);
                if (!sl) {
                    if (win->freednn || win->loaded) {
                        char d[PATH_MAX];
                        snprintf(d, sizeof d, "%s", win->path);
                        *strrchr(d, '/') = 0;
                        snprintf(fixbuf, sizeof fixbuf, "install the matching %s next to %s (FreeDNN: cmake --install puts all six in lib/)", so, d);
                        NOTE(fixbuf, "%s is not visible: programs that load it explicitly will fail", so);
                    }
                    continue;
                }
                out("  %s -> %s (file version %s)\n", so, sl->path, sl->file_version);
                if (sl->file_version[0] && strcmp(sl->file_version, mainv) && strchr(sl->file_version, '.')) {
                    char d[PATH_MAX];
                    snprintf(d, sizeof d, "%s", win->path);
                    *strrchr(d, '/') = 0;
                    snprintf(fixbuf, sizeof fixbuf, "rm %s   # then install libcudnn_%s.so.%s (same release as libcudnn.so.8) into %s",
                             sl->path, subs[s], mainv, d);
                    PROBLEM(fixbuf, "mixed cuDNN set: %s is version %s but %s is %s", sl->path, sl->file_version, win->path, mainv);
                }
            }
        }
        if (win->loaded && win->version >= 0 && vmajor(win->version) >= 9 && major == 8)
            PROBLEM("point the loader at a cuDNN 8 (e.g. FreeDNN's lib/)", "a cuDNN 8 program would load %s, which is cuDNN %d", win->path, vmajor(win->version));
    }
    /* a v8 program whose only visible libcudnn is v9 */
    if (!win && !strcmp(want_so, "libcudnn.so.8"))
        for (int i = 0; i < nlibs; i++)
            if (!strncmp(libs[i].name, "libcudnn.so.9", 13) && libs[i].loader_visible) {
                NOTE("", "only cuDNN 9 (%s) is visible; cuDNN 9 is not ABI-compatible with programs built for cuDNN 8", libs[i].path);
                break;
            }

    /* --- headers */
    out("\n== Headers (cudnn_version.h)\n");
    const char *envs[] = { "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH" };
    for (int i = 0; i < nincs; i++) scan_header(incs[i]);
    for (int e = 0; e < 3; e++) {
        const char *v = getenv(envs[e]);
        if (!v) continue;
        char *copy = strdup(v), *sv = NULL;
        for (char *t = strtok_r(copy, ":", &sv); t; t = strtok_r(NULL, ":", &sv)) scan_header(t);
        free(copy);
    }
    scan_header("/usr/local/include");
    scan_header("/usr/include");
    scan_header("/usr/include/x86_64-linux-gnu");
    scan_header("/usr/local/cuda/include");
    if (self) {
        char inc[PATH_MAX + 16];
        snprintf(inc, sizeof inc, "%s/../include", self);
        char r[PATH_MAX];
        if (realpath(inc, r)) scan_header(r);
    }
    for (int i = 0; i < nheaders; i++)
        out("  %s: %d.%d.%d%s\n", headers[i].path, headers[i].major, headers[i].minor, headers[i].patch,
            i == 0 ? "   (first on the include path: what a compile without -I uses)" : "");
    if (nheaders == 0) out("  (none found)\n");
    lib selflib;
    memset(&selflib, 0, sizeof selflib);
    if (!win && self) {   /* no library visible: compare with the FreeDNN this freednn runs with */
        snprintf(selflib.path, sizeof selflib.path, "%s/libcudnn.so.8", self);
        selflib.loaded = 1;
        selflib.version = (long)cudnnGetVersion();
    }
    const lib *hl = win ? (win_broken ? NULL : win) : self ? &selflib : NULL;
    if (nheaders && hl && hl->loaded && hl->version >= 0) {
        const lib *win = hl;
        const header *h = &headers[0];
        int lmaj = vmajor(win->version), lmin = vminor(win->version);
        char v[32];
        vstr(win->version, v, sizeof v);
        out("  rule: a program built with headers X.Y runs with a library X.Z where Z >= Y (same major, library minor at least the headers')\n");
        if (h->major != lmaj || lmin < h->minor) {
            char d[PATH_MAX];
            snprintf(d, sizeof d, "%s", h->path);
            *strrchr(d, '/') = 0;
            const char *good = NULL;
            for (int i = 1; i < nheaders; i++)
                if (headers[i].major == lmaj && headers[i].minor <= lmin) { good = headers[i].path; break; }
            char gd[PATH_MAX] = "";
            if (good) { snprintf(gd, sizeof gd, "%s", good); *strrchr(gd, '/') = 0; }
            snprintf(fixbuf, sizeof fixbuf, "compile with -I%s (the headers matching the library) or remove %s from the include path",
                     good ? gd : "<the include/ of the library you run>", d);
            PROBLEM(fixbuf, "headers %s are cuDNN %d.%d.%d but the library that would be loaded (%s) is %s: %s",
                    h->path, h->major, h->minor, h->patch, win->path, v,
                    h->major != lmaj ? "major versions differ (different ABI)" : "the library's minor version is older than the headers'");
        }
    }

    /* --- CUDA */
    cudainfo ci;
    check_driver_isolated(&ci);
    out("\n== CUDA\n");
    size_t rt = cudnnGetCudartVersion();
    if (!ci.present) {
        out("  driver: %s\n", ci.err);
        NOTE("", "no NVIDIA driver: only the CPU backend can be used");
    } else {
        out("  driver: CUDA %d.%d%s%s\n", ci.driver / 1000, ci.driver % 1000 / 10, ci.err[0] ? ", " : "", ci.err);
        for (int i = 0; i < ci.ndev && i < 8; i++) out("  GPU %d: %s, compute capability %d.%d\n", i, ci.names[i], ci.cc[i][0], ci.cc[i][1]);
    }
    char rtb[64] = "none (built without the CUDA backend)";
    if (rt) snprintf(rtb, sizeof rtb, "%zu.%zu", rt / 1000, rt % 1000 / 10);
    out("  CUDA runtime FreeDNN was built with: %s\n", rtb);
    out("  architectures compiled into FreeDNN: %s\n", FREEDNN_TOOLS_CUDA_ARCHS[0] ? FREEDNN_TOOLS_CUDA_ARCHS : "none");
    if (ci.present && rt && ci.driver && (int)rt > ci.driver)
        PROBLEM("update the NVIDIA driver (e.g. sudo apt install nvidia-driver-XXX) to one supporting CUDA >= the runtime",
                "driver too old: the driver supports CUDA %d.%d but FreeDNN was built with CUDA %zu.%zu", ci.driver / 1000,
                ci.driver % 1000 / 10, rt / 1000, rt % 1000 / 10);
    if (FREEDNN_TOOLS_CUDA_ARCHS[0])
        for (int i = 0; i < ci.ndev && i < 8; i++) {
            int cc = ci.cc[i][0] * 10 + ci.cc[i][1], real = 0, ptx = 0;
            const char *a = FREEDNN_TOOLS_CUDA_ARCHS;
            while (*a) {
                int v = atoi(a);
                const char *end = strchr(a, ';');
                size_t len = end ? (size_t)(end - a) : strlen(a);
                if (memmem(a, len, "virtual", 7)) { if (v <= cc) ptx = 1; }
                else if (v == cc) real = 1;
                a += len + (end ? 1 : 0);
            }
            if (real) out("  GPU %d: native code for sm_%d\n", i, cc);
            else if (ptx) NOTE("", "GPU %d (sm_%d) has no native FreeDNN code: runs through PTX JIT compilation (slower first start)", i, cc);
            else PROBLEM("rebuild FreeDNN with -DFREEDNN_CUDA_ARCHS=\"<...>;XX-real\" including this GPU's sm_XX",
                         "not supported on this GPU: GPU %d has compute capability %d.%d, below every architecture compiled in (%s)",
                         i, ci.cc[i][0], ci.cc[i][1], FREEDNN_TOOLS_CUDA_ARCHS);
        }

    /* --- backends */
    out("\n== FreeDNN backends (cudnnCreate + a 1x2x5x4 convolution with 3 3x3 filters)\n");
    backend_res br[2] = { { .name = "cpu" }, { .name = "cuda" } };
    for (int b = 0; b < 2; b++) {
        check_backend(&br[b]);
        backend_res *r = &br[b];
        if (!r->created) {
            out("  %-4s: cudnnCreate -> %s: %s\n", r->name, r->status, r->reason);
            int gpu_expected = b == 1 && ci.present && ci.ndev > 0;
            if (b == 0)
                PROBLEM("report a bug: the CPU backend must always be available", "cudnnCreate on the CPU backend failed: %s %s", r->status, r->reason);
            else if (gpu_expected && strstr(r->reason, "built without"))
                NOTE("cmake -S . -B build -DFREEDNN_CUDA=ON && cmake --build build", "this machine has a GPU but FreeDNN was built without the CUDA backend");
            else if (gpu_expected)
                PROBLEM("see the reason above (driver, memory, architecture)", "cudnnCreate on the CUDA backend failed: %s", r->reason);
            else
                NOTE("", "CUDA backend not usable here: %s", r->reason);
            continue;
        }
        out("  %-4s: cudnnCreate OK; convolution: %s%s%s", r->name, r->conv, r->conv_detail[0] ? " (" : "", r->conv_detail);
        out("%s\n", r->conv_detail[0] ? ")" : "");
        if (!strcmp(r->conv, "MISMATCH"))
            PROBLEM("report a bug with the output of freednn doctor --json", "the tiny convolution on the %s backend is wrong (max error %g against the reference)", r->name, r->maxerr);
        else if (!strcmp(r->conv, "CUDNN_STATUS_NOT_SUPPORTED"))
            PROBLEM("update FreeDNN to a version implementing cudnnConvolutionForward on this backend",
                    "convolution is not available on the %s backend (CUDNN_STATUS_NOT_SUPPORTED: %s)", r->name, r->conv_detail);
        else if (strcmp(r->conv, "MATCH"))
            PROBLEM("see the message above", "the tiny convolution on the %s backend failed: %s %s", r->name, r->conv, r->conv_detail);
    }

    /* --- the CPU backend's BLAS: an OpenBLAS built for many CPUs (DYNAMIC_ARCH) picks its
     * kernels by CPU model and falls back to SSE3 ones on models newer than itself */
    char blas_core[64] = "";
    {
        char *(*corename)(void) = (char *(*)(void))dlsym(RTLD_DEFAULT, "openblas_get_corename");
        const char *core = corename ? corename() : NULL;
        snprintf(blas_core, sizeof blas_core, "%s", core ? core : "");
#if defined(__x86_64__) || defined(__i386__)
        __builtin_cpu_init();
        const char *simd = __builtin_cpu_supports("avx512f") ? "AVX-512" : __builtin_cpu_supports("avx2") ? "AVX2" : "";
#else
        const char *simd = "";
#endif
        out("\n== CPU GEMM\n  OpenBLAS kernels: %s; CPU: %s\n", core ? core : "(no OpenBLAS in this process)", simd[0] ? simd : "no AVX2");
        /* the library's own test (fdnn_cpu_blas_core_ok, src/cpu/cpu_features.c, not exported) uses the same list */
        static const char *const good[] = { "Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen", "Excavator" };
        int ok = 0;
        for (size_t i = 0; core && i < sizeof good / sizeof good[0]; i++) ok |= !strcasecmp(core, good[i]);
        if (core && simd[0] && !ok)
            NOTE(!strcmp(simd, "AVX-512") ? "export OPENBLAS_CORETYPE=SkylakeX (before the program starts), or install an OpenBLAS that knows this CPU"
                                          : "export OPENBLAS_CORETYPE=Haswell (before the program starts), or install an OpenBLAS that knows this CPU",
                 "OpenBLAS runs its %s kernels on this %s CPU (it does not know the model): FreeDNN's CPU backend uses its own GEMM kernels "
                 "instead, but other OpenBLAS users in the process stay several times slower",
                 core, simd);
    }

    /* --- report */
    if (json_mode) {
        FILE *f = stdout;
        fprintf(f, "{\n  \"ok\": %s,\n  \"libraries\": [", nproblems ? "false" : "true");
        for (int i = 0; i < nlibs; i++) {
            const lib *l = &libs[i];
            fprintf(f, "%s\n    {\"path\": ", i ? "," : "");
            jstr(f, l->path);
            fprintf(f, ", \"real\": ");
            jstr(f, l->real);
            fprintf(f, ", \"origin\": ");
            jstr(f, l->origin);
            fprintf(f, ", \"loader_visible\": %s, \"probed\": %s, \"freednn\": %s, \"version\": %ld, \"file_version\": ",
                    l->loader_visible ? "true" : "false", l->probed ? "true" : "false", l->freednn ? "true" : "false", l->version);
            jstr(f, l->file_version);
            fprintf(f, ", \"error\": ");
            jstr(f, l->err);
            fprintf(f, "}");
        }
        fprintf(f, "\n  ],\n  \"loaded\": {\"soname\": ");
        jstr(f, want_so);
        fprintf(f, ", \"path\": ");
        jstr(f, win ? win->path : "");
        fprintf(f, "},\n  \"headers\": [");
        for (int i = 0; i < nheaders; i++) {
            fprintf(f, "%s{\"path\": ", i ? ", " : "");
            jstr(f, headers[i].path);
            fprintf(f, ", \"version\": \"%d.%d.%d\"}", headers[i].major, headers[i].minor, headers[i].patch);
        }
        fprintf(f, "],\n  \"cuda\": {\"driver_present\": %s, \"driver_version\": %d, \"runtime_version\": %zu, \"devices\": [",
                ci.present ? "true" : "false", ci.driver, rt);
        for (int i = 0; i < ci.ndev && i < 8; i++) {
            fprintf(f, "%s{\"name\": ", i ? ", " : "");
            jstr(f, ci.names[i]);
            fprintf(f, ", \"cc\": \"%d.%d\"}", ci.cc[i][0], ci.cc[i][1]);
        }
        fprintf(f, "]},\n  \"backends\": [");
        for (int b = 0; b < 2; b++) {
            fprintf(f, "%s{\"name\": \"%s\", \"created\": %s, \"status\": ", b ? ", " : "", br[b].name, br[b].created ? "true" : "false");
            jstr(f, br[b].status);
            fprintf(f, ", \"reason\": ");
            jstr(f, br[b].reason);
            fprintf(f, ", \"convolution\": ");
            jstr(f, br[b].conv);
            fprintf(f, "}");
        }
        fprintf(f, "],\n  \"openblas_core\": ");
        jstr(f, blas_core);
        fprintf(f, ",\n  \"problems\": [");
        for (int i = 0; i < nproblems; i++) {
            fprintf(f, "%s\n    {\"what\": ", i ? "," : "");
            jstr(f, problems[i].what);
            fprintf(f, ", \"fix\": ");
            jstr(f, problems[i].fix);
            fprintf(f, "}");
        }
        fprintf(f, "\n  ],\n  \"notes\": [");
        for (int i = 0; i < nnotes; i++) {
            fprintf(f, "%s\n    {\"what\": ", i ? "," : "");
            jstr(f, notes[i].what);
            fprintf(f, ", \"fix\": ");
            jstr(f, notes[i].fix);
            fprintf(f, "}");
        }
        fprintf(f, "\n  ]\n}\n");
    } else {
        printf("\n== Summary\n");
        for (int i = 0; i < nnotes; i++) {
            printf("note: %s\n", notes[i].what);
            if (notes[i].fix[0]) printf("  fix: %s\n", notes[i].fix);
        }
        for (int i = 0; i < nproblems; i++) {
            printf("PROBLEM: %s\n", problems[i].what);
            if (problems[i].fix[0]) printf("  fix: %s\n", problems[i].fix);
        }
        printf(nproblems ? "%d problem(s) found.\n" : "All is well.\n", nproblems);
    }
    return nproblems ? 1 : 0;
}
