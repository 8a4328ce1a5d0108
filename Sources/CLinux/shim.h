#ifndef VITRINE_CLINUX_SHIM_H
#define VITRINE_CLINUX_SHIM_H
/* Glibc's Swift module leaves these Linux interfaces out; the event loop needs them. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <malloc.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <sys/un.h>
#include <time.h>
#include <sys/ioctl.h>
#include <linux/fb.h>
#include <linux/kd.h>
#include <linux/vt.h>

/* Lowers the calling thread's priority (its nice value; Linux keeps one per thread): background work such as
   indexing a large library must not take the CPU from the thread that paints and flips. */
static inline int vitrine_lower_thread_priority(int niceness) {
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), niceness);
}

/* Puts the calling thread at idle priority for the CPU (SCHED_IDLE: it runs only when nothing else wants to) and
   for the disk (IOPRIO_CLASS_IDLE): background renditions must never slow the show or the rest of the board. */
static inline int vitrine_make_thread_idle(void) {
    pid_t thread = (pid_t)syscall(SYS_gettid);
    struct sched_param parameters = {0};
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif
    int cpu = sched_setscheduler(thread, SCHED_IDLE, &parameters);
    /* ioprio_set(IOPRIO_WHO_PROCESS = 1, thread, IOPRIO_CLASS_IDLE = 3 << IOPRIO_CLASS_SHIFT 13) */
    int disk = (int)syscall(SYS_ioprio_set, 1, thread, 3 << 13);
    return cpu != 0 ? cpu : disk;
}

/* A descriptor that becomes readable when the process ends (Linux 5.3), for the event loop: a child reaped then,
   not polled for. */
static inline int vitrine_pidfd_open(pid_t pid) {
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Closes every descriptor from `first` up (close_range, Linux 5.9; by hand before): a process the player started
   keeps nothing of the player's it does not know of. */
static inline void vitrine_close_from(int first) {
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
    if (syscall(SYS_close_range, first, ~0U, 0) == 0) return;
    long limit = sysconf(_SC_OPEN_MAX);
    for (int fd = first; fd < (limit > 0 && limit < 65536 ? limit : 65536); fd++) close(fd);
}

/* Large blocks (a category's arrays, a frame) are mapped on their own and given back to the system when freed:
   glibc would otherwise raise its mmap threshold after the first such free (up to 32 MiB) and keep later ones in
   the heap, where a board's memory stays taken after a library is read again. */
static inline int vitrine_return_large_blocks(void) {
    return mallopt(M_MMAP_THRESHOLD, 256 * 1024);
}

/* Gives the pages of freed heap memory back to the kernel, in every thread's arena: after a decode, whose
 * working memory (libjpeg's, the resampler's rows) is freed in pieces too small to be unmapped on their own and
 * would otherwise stay resident until the next decode reuses them. */
static inline void vitrine_release_free_heap(void) {
    (void)malloc_trim(0);
}

/* Peak resident set size of this process in KiB (ru_maxrss is in KiB on Linux, getrusage(2)). */
static inline long vitrine_peak_rss_kib(void) {
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) {
        return -1;
    }
    return usage.ru_maxrss;
}

/* sigset_t manipulation is done with macros on some libcs; these are functions Swift can call. */
static inline int vitrine_block_signals(const int *signals, int count, sigset_t *set) {
    sigemptyset(set);
    for (int i = 0; i < count; i++) {
        sigaddset(set, signals[i]);
    }
    return pthread_sigmask(SIG_BLOCK, set, NULL);
}

static inline int vitrine_ignore_signal(int signal_number) {
    struct sigaction action = {0};
    action.sa_handler = SIG_IGN;
    return sigaction(signal_number, &action, NULL);
}

static inline int vitrine_ignore_sigpipe(void) {
    return vitrine_ignore_signal(SIGPIPE);
}

/* The epoll_event struct is packed on x86-64, which Swift imports awkwardly; these keep the layout in C. */
static inline int vitrine_epoll_add(int epoll, int fd, unsigned int events, unsigned long long token) {
    struct epoll_event event = {0};
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event);
}

static inline int vitrine_epoll_modify(int epoll, int fd, unsigned int events, unsigned long long token) {
    struct epoll_event event = {0};
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event);
}

static inline int vitrine_epoll_wait(int epoll, unsigned long long *tokens, unsigned int *events, int capacity,
                                     int timeout_ms) {
    struct epoll_event ready[64];
    if (capacity > 64) {
        capacity = 64;
    }
    int count = epoll_wait(epoll, ready, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

/* sockaddr_un with its path, length checked by the caller (sun_path is 108 bytes). */
static inline int vitrine_unix_connect_or_bind(int fd, const char *path, int bind_it) {
    struct sockaddr_un address = {0};
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path, path, length + 1);
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + 1);
    return bind_it ? bind(fd, (struct sockaddr *)&address, size) : connect(fd, (struct sockaddr *)&address, size);
}

/* One sd_notify(3) datagram to $NOTIFY_SOCKET: a path, or "@name" for the abstract namespace (no terminating NUL
 * is part of an abstract address). MSG_NOSIGNAL: a vanished manager must not kill the player with SIGPIPE. */
static inline ssize_t vitrine_unix_send_datagram(int fd, const char *path, const void *bytes, size_t count) {
    struct sockaddr_un address = {0};
    address.sun_family = AF_UNIX;
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path, path, length);
    socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length);
    if (path[0] == '@') {
        address.sun_path[0] = 0;
    } else {
        size += 1;
    }
    return sendto(fd, bytes, count, MSG_NOSIGNAL, (struct sockaddr *)&address, size);
}

/* ioctl is variadic, which Swift cannot call. */
static inline int vitrine_ioctl_pointer(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}

static inline int vitrine_ioctl_value(int fd, unsigned long request, unsigned long argument) {
    return ioctl(fd, request, argument);
}

static const unsigned long VITRINE_FBIOGET_VSCREENINFO = FBIOGET_VSCREENINFO;
static const unsigned long VITRINE_FBIOPUT_VSCREENINFO = FBIOPUT_VSCREENINFO;
static const unsigned long VITRINE_FBIOGET_FSCREENINFO = FBIOGET_FSCREENINFO;
static const unsigned long VITRINE_FBIOPAN_DISPLAY = FBIOPAN_DISPLAY;
static const unsigned long VITRINE_KDSETMODE = KDSETMODE;
static const unsigned long VITRINE_KD_GRAPHICS = KD_GRAPHICS;
static const unsigned long VITRINE_KD_TEXT = KD_TEXT;
static const unsigned long VITRINE_VT_RELDISP = VT_RELDISP;
static const unsigned long VITRINE_VT_ACKACQ = VT_ACKACQ;
static const unsigned long VITRINE_VT_ACTIVATE = VT_ACTIVATE;
static const unsigned long VITRINE_KDGKBMODE = KDGKBMODE;
static const unsigned long VITRINE_KDSKBMODE = KDSKBMODE;
static const unsigned long VITRINE_K_OFF = K_OFF;
static const unsigned long VITRINE_FBIOBLANK = FBIOBLANK;
static const unsigned long VITRINE_FB_BLANK_UNBLANK = FB_BLANK_UNBLANK;
static const unsigned long VITRINE_FB_BLANK_POWERDOWN = FB_BLANK_POWERDOWN;

/* FBIO_WAITFORVSYNC is defined with _IOW, which Swift cannot import: waits for the next vblank of CRTC 0. */
static inline int vitrine_fb_wait_for_vsync(int fd) {
    unsigned int crtc = 0;
    return ioctl(fd, FBIO_WAITFORVSYNC, &crtc);
}

/* TIOCSCTTY is a macro Swift cannot import: makes the tty the caller's controlling terminal (the caller must lead
 * a session without one). */
static inline int vitrine_take_controlling_tty(int fd) { return ioctl(fd, TIOCSCTTY, 0); }

/* SIGRTMIN is a function call in glibc; Vitrine's VT release and acquire signals sit just above it. */
static inline int vitrine_vt_release_signal(void) { return SIGRTMIN + 1; }
static inline int vitrine_vt_acquire_signal(void) { return SIGRTMIN + 2; }

/* VT_SETMODE: process mode (the kernel asks before switching away, with the signals above) or automatic. */
static inline int vitrine_vt_set_mode(int fd, int process) {
    struct vt_mode mode;
    memset(&mode, 0, sizeof mode);
    mode.mode = process ? VT_PROCESS : VT_AUTO;
    mode.relsig = process ? (short)vitrine_vt_release_signal() : 0;
    mode.acqsig = process ? (short)vitrine_vt_acquire_signal() : 0;
    return ioctl(fd, VT_SETMODE, &mode);
}
/* The filesystem type of `path` (statfs's f_type), or -1 with errno set: a wrapper because the struct and the function
 * share the name `statfs`, which Swift cannot tell apart. */
static inline long long vitrine_filesystem_type(const char *path) {
    struct statfs status;
    if (statfs(path, &status) != 0) {
        return -1;
    }
    return (long long)status.f_type;
}

#endif
