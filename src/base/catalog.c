/*
 * catalog.c - catalogue directories and name lookup (see base/catalog.h).
 */
#include "base/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PPL_SOURCE_ROOT
#define PPL_SOURCE_ROOT "."
#endif
#ifndef PPL_BUILD_ROOT
#define PPL_BUILD_ROOT "."
#endif
#ifndef PPL_INSTALL_DATADIR
#define PPL_INSTALL_DATADIR "/usr/local/share/parplan"
#endif

static const char *kind_dir(ppl_catalog_kind kind)
{
    return kind == PPL_CATALOG_MODELS ? "models" : "topologies";
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* True when this process runs the binary of the build tree (uninstalled). */
static bool running_from_build_tree(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    size_t root_len = strlen(PPL_BUILD_ROOT);
    return strncmp(exe, PPL_BUILD_ROOT, root_len) == 0 && exe[root_len] == '/';
}

/* The catalogue directory in use for kind; PPL_EINPUT when none exists. */
static ppl_status catalog_dir(ppl_catalog_kind kind, char *buf, size_t size, ppl_error *err)
{
    const char *env = getenv("PARPLAN_DATA_DIR");
    if (env && env[0]) {
        snprintf(buf, size, "%s/%s", env, kind_dir(kind));
        if (is_dir(buf))
            return PPL_OK;
        return ppl_error_set(err, PPL_EINPUT, "", "", "PARPLAN_DATA_DIR: no directory '%s'", buf);
    }
    const char *first = PPL_INSTALL_DATADIR, *second = PPL_SOURCE_ROOT;
    if (running_from_build_tree()) {
        first = PPL_SOURCE_ROOT;
        second = PPL_INSTALL_DATADIR;
    }
    snprintf(buf, size, "%s/%s", first, kind_dir(kind));
    if (is_dir(buf))
        return PPL_OK;
    snprintf(buf, size, "%s/%s", second, kind_dir(kind));
    if (is_dir(buf))
        return PPL_OK;
    return ppl_error_set(err, PPL_EINPUT, "", "",
                         "no %s catalogue found (looked in %s/%s and %s/%s)", kind_dir(kind), first,
                         kind_dir(kind), second, kind_dir(kind));
}

static bool looks_like_path(const char *arg)
{
    size_t len = strlen(arg);
    return strchr(arg, '/') != NULL || (len > 5 && strcmp(arg + len - 5, ".json") == 0);
}

static bool valid_name(const char *arg)
{
    if (!arg[0] || arg[0] == '.')
        return false;
    for (const char *p = arg; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '-' || *p == '_' || *p == '.'))
            return false;
    return true;
}

bool ppl_catalog_find(ppl_catalog_kind kind, const char *name, char *path, size_t size)
{
    char dir[PATH_MAX];
    ppl_error dir_err;
    if (!name || !valid_name(name) || catalog_dir(kind, dir, sizeof dir, &dir_err) != PPL_OK)
        return false;
    int n = snprintf(path, size, "%s/%s.json", dir, name);
    return n > 0 && (size_t)n < size && is_file(path);
}

ppl_status ppl_catalog_resolve(ppl_catalog_kind kind, const char *arg, char *path, size_t size,
                               ppl_error *err)
{
    const char *what = kind == PPL_CATALOG_MODELS ? "model" : "topology";
    if (!arg || !arg[0])
        return ppl_error_set(err, PPL_EUSAGE, "", what, "expected a %s name or file path", what);
    if (looks_like_path(arg)) {
        if (strlen(arg) >= size)
            return ppl_error_set(err, PPL_EUSAGE, "", what, "path is too long");
        /* a path that names nothing is a missing input file (exit 3), as in
         * every loader; what the file holds is the loader's to check */
        if (!is_file(arg))
            return ppl_error_set(err, PPL_EINPUT, arg, "", "cannot open: %s",
                                 is_dir(arg) ? "is a directory" : strerror(ENOENT));
        snprintf(path, size, "%s", arg);
        return PPL_OK;
    }
    if (ppl_catalog_find(kind, arg, path, size))
        return PPL_OK;
    if (is_file(arg) && strlen(arg) < size) {
        snprintf(path, size, "%s", arg);
        return PPL_OK;
    }
    return ppl_error_set(err, PPL_EUSAGE, "", what, "'%s' is neither a catalogue %s nor a file",
                         arg, what);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void ppl_catalog_free(char **names, size_t count)
{
    if (!names)
        return;
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

ppl_status ppl_catalog_list(ppl_catalog_kind kind, char ***names_out, size_t *count_out,
                            ppl_error *err)
{
    char dir[PATH_MAX];
    ppl_status st = catalog_dir(kind, dir, sizeof dir, err);
    *names_out = NULL;
    *count_out = 0;
    if (st != PPL_OK)
        return st;
    DIR *d = opendir(dir);
    if (!d)
        return ppl_error_set(err, PPL_EINPUT, dir, "", "cannot open: %s", strerror(errno));
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **grown = realloc(names, ncap * sizeof *names);
            if (!grown)
                goto out_nomem;
            names = grown;
            cap = ncap;
        }
        names[count] = strndup(e->d_name, len - 5);
        if (!names[count])
            goto out_nomem;
        count++;
    }
    closedir(d);
    qsort(names, count, sizeof *names, compare_names);
    *names_out = names;
    *count_out = count;
    return PPL_OK;
out_nomem:
    closedir(d);
    ppl_catalog_free(names, count);
    return ppl_error_set(err, PPL_EINTERNAL, "", "", "out of memory");
}
