#ifndef VITRINE_CLINUX_SHIM_H
#define VITRINE_CLINUX_SHIM_H
/* Glibc's Swift module leaves these Linux interfaces out; the event loop needs them. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>

/* Peak resident set size of this process in KiB (ru_maxrss is in KiB on Linux, getrusage(2)). */
static inline long vitrine_peak_rss_kib(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) {
        return -1;
    }
    return usage.ru_maxrss;
}
#endif
