/*===- faultfs.c - LD_PRELOAD file system faults for the cache tests ------===//
 *
 * Makes the file system under one directory behave as full or read-only
 * for the process it is preloaded into (root ignores permissions, so a
 * chmod cannot make a directory read-only in CI):
 *   MXFP4_FAULT_DIR=<dir>  where the faults apply (a path prefix)
 *   MXFP4_FAULT=enospc     write() to a file there fails with ENOSPC
 *   MXFP4_FAULT=erofs      creating, writing, renaming or removing there
 *                          fails with EROFS; reading works
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NONE, ENOSPC_MODE, EROFS_MODE };

static int mode(void) {
  const char *m = getenv("MXFP4_FAULT");
  if (!m)
    return NONE;
  if (!strcmp(m, "enospc"))
    return ENOSPC_MODE;
  if (!strcmp(m, "erofs"))
    return EROFS_MODE;
  return NONE;
}

/* `path` (absolute, or relative to the working directory) lies under
 * MXFP4_FAULT_DIR. */
static int under(const char *path) {
  const char *dir = getenv("MXFP4_FAULT_DIR");
  if (!dir || !*dir || !path)
    return 0;
  char full[2 * PATH_MAX + 2];
  if (path[0] == '/') {
    snprintf(full, sizeof(full), "%s", path);
  } else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
      return 0;
    snprintf(full, sizeof(full), "%s/%s", cwd, path);
  }
  size_t n = strlen(dir);
  return strncmp(full, dir, n) == 0 && (full[n] == '/' || full[n] == '\0');
}

static int fdUnder(int fd) {
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof(target) - 1);
  if (n <= 0)
    return 0;
  target[n] = '\0';
  return under(target);
}

#define REAL(name, type) ((type)dlsym(RTLD_NEXT, name))

static int failWrite(const char *path, int flags) {
  return mode() == EROFS_MODE && (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) && under(path);
}

/* open/open64 through `real` unless the fault refuses it. */
static int openOr(const char *real, const char *path, int flags, va_list ap) {
  mode_t m = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
  if (failWrite(path, flags)) {
    errno = EROFS;
    return -1;
  }
  return REAL(real, int (*)(const char *, int, ...))(path, flags, m);
}

int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = openOr("open", path, flags, ap);
  va_end(ap);
  return fd;
}

int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  int fd = openOr("open64", path, flags, ap);
  va_end(ap);
  return fd;
}

ssize_t write(int fd, const void *buf, size_t count) {
  int m = mode();
  if (m != NONE && count > 0 && fd > 2 && fdUnder(fd)) {
    errno = m == ENOSPC_MODE ? ENOSPC : EROFS;
    return -1;
  }
  return REAL("write", ssize_t(*)(int, const void *, size_t))(fd, buf, count);
}

int mkdir(const char *path, mode_t m) {
  if (mode() == EROFS_MODE && under(path)) {
    errno = EROFS;
    return -1;
  }
  return REAL("mkdir", int (*)(const char *, mode_t))(path, m);
}

int rename(const char *from, const char *to) {
  if (mode() == EROFS_MODE && (under(from) || under(to))) {
    errno = EROFS;
    return -1;
  }
  return REAL("rename", int (*)(const char *, const char *))(from, to);
}

int unlink(const char *path) {
  if (mode() == EROFS_MODE && under(path)) {
    errno = EROFS;
    return -1;
  }
  return REAL("unlink", int (*)(const char *))(path);
}

int remove(const char *path) {
  if (mode() == EROFS_MODE && under(path)) {
    errno = EROFS;
    return -1;
  }
  return REAL("remove", int (*)(const char *))(path);
}
