#ifndef VITRINE_CDRM_SHIM_H
#define VITRINE_CDRM_SHIM_H
/* libdrm's macros that Swift cannot import (DRM_FORMAT_XRGB8888 is built with fourcc_code(), the dumb-buffer
 * ioctls with _IOWR), and the page-flip callback, which must be a C function. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>

static const uint32_t VITRINE_DRM_FORMAT_XRGB8888 = DRM_FORMAT_XRGB8888;
static const uint32_t VITRINE_DRM_MODE_PAGE_FLIP_EVENT = DRM_MODE_PAGE_FLIP_EVENT;
static const uint32_t VITRINE_DRM_MODE_TYPE_PREFERRED = DRM_MODE_TYPE_PREFERRED;
static const uint32_t VITRINE_DRM_MODE_PROP_BLOB = DRM_MODE_PROP_BLOB;
static const uint32_t VITRINE_DRM_MODE_PROP_ENUM = DRM_MODE_PROP_ENUM;

/* Returns 0 and fills handle, pitch and size, or -1 with errno. */
static inline int vitrine_drm_create_dumb(int fd, uint32_t width, uint32_t height, uint32_t *handle, uint32_t *pitch,
                                          uint64_t *size) {
    struct drm_mode_create_dumb request;
    memset(&request, 0, sizeof request);
    request.width = width;
    request.height = height;
    request.bpp = 32;
    if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &request) != 0) {
        return -1;
    }
    *handle = request.handle;
    *pitch = request.pitch;
    *size = request.size;
    return 0;
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

/* A completed flip increments the counter whose address was given to drmModePageFlip. */
static void vitrine_drm_page_flip_done(int fd, unsigned int sequence, unsigned int seconds, unsigned int microseconds,
                                       void *counter) {
    (void)fd;
    (void)sequence;
    (void)seconds;
    (void)microseconds;
    if (counter != NULL) {
        *(int *)counter += 1;
    }
}

/* Reads the pending DRM events (flip completions); returns drmHandleEvent's result. */
static inline int vitrine_drm_handle_events(int fd) {
    drmEventContext context;
    memset(&context, 0, sizeof context);
    context.version = 2;
    context.page_flip_handler = vitrine_drm_page_flip_done;
    return drmHandleEvent(fd, &context);
}

/* mmap is variadic-free but MAP_FAILED is a macro cast Swift cannot import. */
static inline void *vitrine_mmap_shared(int fd, size_t length, uint64_t offset) {
    void *address = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
    return address == MAP_FAILED ? NULL : address;
}
#endif
