#include "lazy_link.h"
#include "symbols.h"

#include <dav1d/version.h>
#include <libavcodec/version_major.h>
#include <libavformat/version_major.h>
#include <libavutil/version.h>
#include <libswresample/version.h>
#include <libswscale/version_major.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define VITRINE_STRING(x) #x
#define VITRINE_EXPAND(x) VITRINE_STRING(x)

#define VITRINE_LAZY_COUNT (VITRINE_LAZY_ASOUND + 1)

/* The sonames of the packages the player depends on (Debian bookworm, Raspberry Pi OS). dav1d's and FFmpeg's follow
 * their API's major version, so they are taken from the headers the build compiled against. */
static const char *const sonames[VITRINE_LAZY_COUNT] = {
    [VITRINE_LAZY_HEIF] = "libheif.so.1",
    [VITRINE_LAZY_DAV1D] = "libdav1d.so." VITRINE_EXPAND(DAV1D_API_VERSION_MAJOR),
    [VITRINE_LAZY_INPUT] = "libinput.so.10",
    [VITRINE_LAZY_MOSQUITTO] = "libmosquitto.so.1",
    [VITRINE_LAZY_MICROHTTPD] = "libmicrohttpd.so.12",
    [VITRINE_LAZY_QRENCODE] = "libqrencode.so.4",
    [VITRINE_LAZY_FREETYPE] = "libfreetype.so.6",
    [VITRINE_LAZY_CURL] = "libcurl.so.4",
    [VITRINE_LAZY_EXPAT] = "libexpat.so.1",
    [VITRINE_LAZY_SMBCLIENT] = "libsmbclient.so.0",
    [VITRINE_LAZY_AVUTIL] = "libavutil.so." VITRINE_EXPAND(LIBAVUTIL_VERSION_MAJOR),
    [VITRINE_LAZY_AVCODEC] = "libavcodec.so." VITRINE_EXPAND(LIBAVCODEC_VERSION_MAJOR),
    [VITRINE_LAZY_AVFORMAT] = "libavformat.so." VITRINE_EXPAND(LIBAVFORMAT_VERSION_MAJOR),
    [VITRINE_LAZY_SWSCALE] = "libswscale.so." VITRINE_EXPAND(LIBSWSCALE_VERSION_MAJOR),
    [VITRINE_LAZY_SWRESAMPLE] = "libswresample.so." VITRINE_EXPAND(LIBSWRESAMPLE_VERSION_MAJOR),
    [VITRINE_LAZY_ASOUND] = "libasound.so.2",
};

__attribute__((noreturn, used)) void vitrine_lazy_unloaded(void) {
    fputs("vitrine: a library's function was called before the library was loaded (vitrine_lazy_load)\n", stderr);
    abort();
}

/* One slot per function: the stub jumps through it. */
#define VITRINE_SLOT(library, name) \
    __attribute__((visibility("hidden"))) void *vitrine_lazy_slot_##name = (void *)vitrine_lazy_unloaded;
VITRINE_LAZY_SYMBOLS(VITRINE_SLOT)

struct vitrine_lazy_entry {
    enum vitrine_lazy_library library;
    const char *name;
    void **slot;
};
#define VITRINE_ENTRY(library, name) {library, #name, &vitrine_lazy_slot_##name},
static const struct vitrine_lazy_entry entries[] = {VITRINE_LAZY_SYMBOLS(VITRINE_ENTRY)};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* 0 not tried, 1 loaded, -1 failed: a failure is kept, so a missing library costs one search, not one per photo. */
static int state[VITRINE_LAZY_COUNT];
static char failure[VITRINE_LAZY_COUNT][256];

static void load(enum vitrine_lazy_library library) {
    void *handle = dlopen(sonames[library], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(failure[library], sizeof failure[library], "%s", why != NULL ? why : sonames[library]);
        state[library] = -1;
        return;
    }
    void *found[sizeof entries / sizeof entries[0]];
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        if (entries[i].library != library) continue;
        found[i] = dlsym(handle, entries[i].name);
        if (found[i] == NULL) {
            snprintf(failure[library], sizeof failure[library], "%s has no function %s", sonames[library],
                     entries[i].name);
            state[library] = -1;
            /* Left loaded: its constructors have run and unloading a library that has threads is not safe. */
            return;
        }
    }
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        if (entries[i].library == library) *entries[i].slot = found[i];
    }
    state[library] = 1;
}

const char *vitrine_lazy_soname(enum vitrine_lazy_library library) {
    return (unsigned)library < VITRINE_LAZY_COUNT ? sonames[library] : "";
}

int vitrine_lazy_load(enum vitrine_lazy_library library, char *why, size_t why_size) {
    if ((unsigned)library >= VITRINE_LAZY_COUNT) return -1;
    pthread_mutex_lock(&lock);
    if (state[library] == 0) load(library);
    int result = state[library] == 1 ? 0 : -1;
    if (result != 0 && why != NULL && why_size > 0) snprintf(why, why_size, "%s", failure[library]);
    pthread_mutex_unlock(&lock);
    return result;
}

static int current_state(enum vitrine_lazy_library library) {
    if ((unsigned)library >= VITRINE_LAZY_COUNT) return 0;
    pthread_mutex_lock(&lock);
    int now = state[library];
    pthread_mutex_unlock(&lock);
    return now;
}

int vitrine_lazy_loaded(enum vitrine_lazy_library library) { return current_state(library) == 1; }

int vitrine_lazy_tried(enum vitrine_lazy_library library) { return current_state(library) != 0; }
