#ifndef VITRINE_CLIBINPUT_SHIM_H
#define VITRINE_CLIBINPUT_SHIM_H
/* libinput opens devices through callbacks it keeps the address of: they are C functions in a static struct
 * here, so the address is stable and no Swift closure is involved. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <libinput.h>
#include <libudev.h>

/* The first error open_restricted met (a negative errno), so the player can say which group is missing. */
static int vitrine_libinput_open_error = 0;

static int vitrine_libinput_open(const char *path, int flags, void *user_data) {
    (void)flags;
    (void)user_data;
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (vitrine_libinput_open_error == 0) {
            vitrine_libinput_open_error = -errno;
        }
        return -errno;
    }
    return fd;
}

static void vitrine_libinput_close(int fd, void *user_data) {
    (void)user_data;
    close(fd);
}

static const struct libinput_interface vitrine_libinput_interface = {
    .open_restricted = vitrine_libinput_open,
    .close_restricted = vitrine_libinput_close,
};

/* A libinput context on udev seat0, or NULL. */
static inline struct libinput *vitrine_libinput_create(struct udev *udev) {
    struct libinput *context = libinput_udev_create_context(&vitrine_libinput_interface, NULL, udev);
    if (context == NULL) {
        return NULL;
    }
    if (libinput_udev_assign_seat(context, "seat0") != 0) {
        libinput_unref(context);
        return NULL;
    }
    return context;
}

static inline int vitrine_libinput_take_open_error(void) {
    int error = vitrine_libinput_open_error;
    vitrine_libinput_open_error = 0;
    return error;
}
#endif
