/*
 * Moves a process's wall clock by CLOCK_SHIFT_SECONDS (LD_PRELOAD), and with
 * CLOCK_SHIFT_RATE makes it run that much faster or slower from the process's first
 * reading (1.083: an NTP daemon slewing at its largest rate). Monotonic clocks are left
 * alone so timers run at their usual pace. scripts/test-at.ts loads it into the tests,
 * a throwaway PostgreSQL and a throwaway Redis with one shared offset.
 *
 * Why not libfaketime: redis-server (jemalloc) aborts under it, because jemalloc reads the
 * clock while libfaketime is still initialising. This shim asks the kernel directly
 * (no dlsym, no allocation), so it is safe to call at any point of a process's start.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long shift_seconds(void) {
  static int read_env = 0;
  static long long seconds = 0;
  if (!read_env) {
    const char *value = getenv("CLOCK_SHIFT_SECONDS");
    seconds = value ? atoll(value) : 0;
    read_env = 1;
  }
  return seconds;
}

static double clock_rate(void) {
  static int read_env = 0;
  static double rate = 1.0;
  if (!read_env) {
    const char *value = getenv("CLOCK_SHIFT_RATE");
    if (value) rate = strtod(value, NULL);
    read_env = 1;
  }
  return rate;
}

static int is_wall_clock(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
  static long long first_ns = -1;
  int result = (int)syscall(SYS_clock_gettime, id, ts);
  if (result != 0 || !is_wall_clock(id)) return result;
  if (clock_rate() != 1.0) {
    long long now_ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
    if (first_ns < 0) first_ns = now_ns;
    long long scaled = first_ns + (long long)((double)(now_ns - first_ns) * clock_rate());
    ts->tv_sec = scaled / 1000000000LL;
    ts->tv_nsec = scaled % 1000000000LL;
  }
  ts->tv_sec += shift_seconds();
  return result;
}

int gettimeofday(struct timeval *tv, void *tz) {
  struct timespec ts;
  (void)tz;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}

int timespec_get(struct timespec *ts, int base) {
  if (base != TIME_UTC || clock_gettime(CLOCK_REALTIME, ts) != 0) return 0;
  return base;
}
