#ifndef VITRINE_CDRM_SHIM_H
#define VITRINE_CDRM_SHIM_H
/* libdrm's macros that Swift cannot import (DRM_FORMAT_XRGB8888 is built with fourcc_code(), the dumb-buffer
 * ioctls with _IOWR), and the reading of flip events, whose structs carry the user data as an integer. */
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>

static const uint32_t VITRINE_DRM_FORMAT_XRGB8888 = DRM_FORMAT_XRGB8888;
static const uint32_t VITRINE_DRM_MODE_TYPE_PREFERRED = DRM_MODE_TYPE_PREFERRED;
static const uint32_t VITRINE_DRM_MODE_PROP_BLOB = DRM_MODE_PROP_BLOB;
static const uint32_t VITRINE_DRM_MODE_PROP_ENUM = DRM_MODE_PROP_ENUM;
static const uint32_t VITRINE_DRM_MODE_PROP_RANGE = DRM_MODE_PROP_RANGE;
static const uint32_t VITRINE_DRM_MODE_PROP_IMMUTABLE = DRM_MODE_PROP_IMMUTABLE;
static const uint32_t VITRINE_DRM_MODE_OBJECT_PLANE = DRM_MODE_OBJECT_PLANE;
static const uint64_t VITRINE_DRM_CLIENT_CAP_UNIVERSAL_PLANES = DRM_CLIENT_CAP_UNIVERSAL_PLANES;

static const uint64_t VITRINE_DRM_CLIENT_CAP_ATOMIC = DRM_CLIENT_CAP_ATOMIC;
static const uint32_t VITRINE_DRM_FORMAT_NV12 = DRM_FORMAT_NV12;

/* Returns 0 and fills handle, pitch and size, or -1 with errno. */
static inline int vitrine_drm_create_dumb_bpp(int fd, uint32_t width, uint32_t height, uint32_t bpp, uint32_t *handle,
                                              uint32_t *pitch, uint64_t *size) {
    struct drm_mode_create_dumb request;
    memset(&request, 0, sizeof request);
    request.width = width;
    request.height = height;
    request.bpp = bpp;
    if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &request) != 0) {
        return -1;
    }
    *handle = request.handle;
    *pitch = request.pitch;
    *size = request.size;
    return 0;
}

static const uint32_t VITRINE_DRM_FORMAT_ARGB8888 = DRM_FORMAT_ARGB8888;

/* An atomic commit of `count` (object, property, value) settings. `flip`: non-blocking, with a flip event carrying
 * `serial`; else it blocks until the kernel has applied it. 0, or -1 with errno (EBUSY: a flip is pending). */
static inline int vitrine_drm_atomic_commit(int fd, const uint32_t *objects, const uint32_t *properties,
                                            const uint64_t *values, int count, int flip, uint64_t serial) {
    drmModeAtomicReq *request = drmModeAtomicAlloc();
    if (request == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int added = 0;
    for (int index = 0; index < count && added >= 0; index++) {
        added = drmModeAtomicAddProperty(request, objects[index], properties[index], values[index]);
    }
    int result = -1;
    if (added < 0) {
        errno = -added;
    } else {
        uint32_t flags = flip ? DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT : 0;
        result = drmModeAtomicCommit(fd, request, flags, (void *)(uintptr_t)serial);
        if (result != 0) {
            result = -1; /* libdrm returns -errno and leaves errno set */
        }
    }
    int saved = errno;
    drmModeAtomicFree(request);
    errno = saved;
    return result;
}

/* The offset to mmap the dumb buffer at, or -1 with errno. */
static inline int vitrine_drm_map_dumb(int fd, uint32_t handle, uint64_t *offset) {
    struct drm_mode_map_dumb request;
    memset(&request, 0, sizeof request);
    request.handle = handle;
    if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &request) != 0) {
        return -1;
    }
    *offset = request.offset;
    return 0;
}

static inline int vitrine_drm_destroy_dumb(int fd, uint32_t handle) {
    struct drm_mode_destroy_dumb request;
    memset(&request, 0, sizeof request);
    request.handle = handle;
    return drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &request);
}

/* Reads the pending DRM events and keeps the flip completions: the serial each flip carried as its user data,
 * the vblank sequence it completed at, that vblank's time and the CRTC it was on (0 before Linux 4.12, which left
 * the field reserved; a card that drives two screens sends both screens' events here). Returns how many were stored (up to capacity), 0 when none was pending
 * (the descriptor is non-blocking), or -1 with errno. Reading the events directly, instead of through
 * drmHandleEvent's callback, lets a late event be matched to the flip it belongs to. */
static inline int vitrine_drm_read_flips(int fd, uint64_t *serials, uint32_t *sequences, double *times,
                                         uint32_t *crtcs, int capacity) {
    char buffer[1024];
    ssize_t length = read(fd, buffer, sizeof buffer);
    if (length < 0) {
        return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
    }
    int count = 0;
    ssize_t offset = 0;
    while (offset + (ssize_t)sizeof(struct drm_event) <= length) {
        struct drm_event header;
        memcpy(&header, buffer + offset, sizeof header);
        if (header.length < sizeof header || offset + (ssize_t)header.length > length) {
            break;
        }
        if (header.type == DRM_EVENT_FLIP_COMPLETE && header.length >= sizeof(struct drm_event_vblank) &&
            count < capacity) {
            struct drm_event_vblank flip;
            memcpy(&flip, buffer + offset, sizeof flip);
            serials[count] = flip.user_data;
            sequences[count] = flip.sequence;
            /* The vblank's time, CLOCK_MONOTONIC (DRM_CAP_TIMESTAMP_MONOTONIC, the default since Linux 3.8). */
            times[count] = (double)flip.tv_sec + (double)flip.tv_usec / 1e6;
            crtcs[count] = flip.crtc_id;
            count += 1;
        }
        offset += header.length;
    }
    return count;
}

/* drmModePageFlip with the serial as the event's user data. */
static inline int vitrine_drm_page_flip(int fd, uint32_t crtc, uint32_t framebuffer, uint64_t serial) {
    return drmModePageFlip(fd, crtc, framebuffer, DRM_MODE_PAGE_FLIP_EVENT, (void *)(uintptr_t)serial);
}

/* mmap is variadic-free but MAP_FAILED is a macro cast Swift cannot import. */
static inline void *vitrine_mmap_shared(int fd, size_t length, uint64_t offset) {
    void *address = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
    return address == MAP_FAILED ? NULL : address;
}
#endif
