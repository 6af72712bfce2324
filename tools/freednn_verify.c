/* freednn verify [DIR]: checks a FreeDNN install tree or unpacked archive against
 * DIR/share/freednn/SHA256SUMS (sha256sum format, paths relative to DIR). Lists missing,
 * extra and modified files; exit 0 only when the tree matches exactly. SHA-256 from
 * OpenSSL's libcrypto (EVP). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <openssl/evp.h>
#include "freednn_tools.h"

#define MANIFEST "share/freednn/SHA256SUMS"

typedef struct { char *path; char hex[65]; int seen; } entry;

static int sha256_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    size_t n;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1;
    while (ok && (n = fread(buf, 1, sizeof buf, f)) > 0) ok = EVP_DigestUpdate(ctx, buf, n) == 1;
    if (ok && ferror(f)) ok = 0;
    if (ok) ok = EVP_DigestFinal_ex(ctx, md, &mdlen) == 1;
    EVP_MD_CTX_free(ctx);
    fclose(f);
    if (!ok) return -1;
    for (unsigned i = 0; i < mdlen; i++) sprintf(hex + 2 * i, "%02x", md[i]);
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* every regular file and symlink under root, relative paths */
static void walk(const char *root, const char *rel, char ***out, int *n)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s%s%s", root, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char r[PATH_MAX], full[2 * PATH_MAX + 2];
        snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, r);
        struct stat st;
        if (lstat(full, &st)) continue;
        if (S_ISDIR(st.st_mode)) walk(root, r, out, n);
        else {
            *out = realloc(*out, sizeof(char *) * (size_t)(*n + 1));
            (*out)[(*n)++] = strdup(r);
        }
    }
    closedir(d);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: freednn verify [DIR]\n"
               "Checks every file under DIR against DIR/" MANIFEST " (written by cmake --install and\n"
               "carried by the release archive). Lists MISSING, EXTRA and MODIFIED files; exit status 0 when\n"
               "the tree matches, 1 on any difference, 2 when the manifest cannot be read.\n"
               "Without DIR, checks the prefix this freednn is installed in (the directory above bin/).\n");
}

int fdt_verify_main(int argc, char **argv)
{
    char root[PATH_MAX];
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) { usage(stdout); return 0; }
        usage(stderr);
        return 2;
    }
    if (argc == 2) snprintf(root, sizeof root, "%s", argv[1]);
    else if (fdt_self_prefix(root, sizeof root)) {
        fprintf(stderr, "freednn verify: cannot find the install prefix of this program\n");
        return 2;
    }
    char mpath[PATH_MAX + 64];
    snprintf(mpath, sizeof mpath, "%s/%s", root, MANIFEST);
    FILE *m = fopen(mpath, "r");
    if (!m) {
        fprintf(stderr, "freednn verify: cannot read the manifest %s: %s\n"
                        "  (is %s a FreeDNN install prefix or unpacked archive? the manifest is written by cmake --install)\n",
                mpath, strerror(errno), root);
        return 2;
    }
    entry *es = NULL;
    int ne = 0, bad_lines = 0;
    char line[PATH_MAX + 128];
    while (fgets(line, sizeof line, m)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0]) continue;
        /* "<64 hex>  <path>" (a '*' before the path marks binary mode) */
        if (strlen(line) < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') ||
            strspn(line, "0123456789abcdef") != 64) {
            bad_lines++;
            continue;
        }
        es = realloc(es, sizeof(entry) * (size_t)(ne + 1));
        memcpy(es[ne].hex, line, 64);
        es[ne].hex[64] = 0;
        es[ne].path = strdup(line + 66);
        es[ne].seen = 0;
        ne++;
    }
    fclose(m);
    int missing = 0, modified = 0, extra = 0, ok = 0;
    if (bad_lines) printf("MALFORMED %d line(s) in %s\n", bad_lines, MANIFEST);
    for (int i = 0; i < ne; i++) {
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", root, es[i].path);
        char hex[65];
        struct stat st;
        if (lstat(full, &st)) {
            printf("MISSING  %s\n", es[i].path);
            missing++;
        } else if (sha256_file(full, hex)) {
            printf("MODIFIED %s (unreadable: %s)\n", es[i].path, strerror(errno));
            modified++;
        } else if (strcmp(hex, es[i].hex)) {
            printf("MODIFIED %s\n", es[i].path);
            modified++;
        } else ok++;
    }
    char **files = NULL;
    int nf = 0;
    walk(root, "", &files, &nf);
    qsort(files, (size_t)nf, sizeof(char *), cmp_str);
    for (int i = 0; i < nf; i++) {
        int found = !strcmp(files[i], MANIFEST);
        for (int j = 0; !found && j < ne; j++) found = !strcmp(files[i], es[j].path);
        if (!found) {
            printf("EXTRA    %s\n", files[i]);
            extra++;
        }
        free(files[i]);
    }
    free(files);
    for (int i = 0; i < ne; i++) free(es[i].path);
    free(es);
    int bad = missing + modified + extra + bad_lines;
    printf("%s: %d file(s) OK, %d missing, %d modified, %d extra -> %s\n", root, ok, missing, modified, extra,
           bad ? "FAILED" : "OK");
    return bad ? 1 : 0;
}
