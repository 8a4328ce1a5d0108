#ifndef VITRINE_LAZY_LINK_H
#define VITRINE_LAZY_LINK_H
/*
 * Libraries loaded when first needed instead of at start. Each maps a dozen more (libheif maps the x265 and aom
 * encoders, libmicrohttpd GnuTLS, libmosquitto OpenSSL, libinput GLib through libwacom, FreeType libpng and
 * brotli): about 9 MiB of a process that may need none of them (a headless player, `vitrine render` of a JPEG, a
 * frame without MQTT, a show that never puts text on screen). libcurl (with its 30 libraries), expat and
 * libsmbclient (110) are loaded by `vitrine sync` only, never by the player. FFmpeg's libraries (libavcodec maps
 * some 40 more: codecs, VA-API, VDPAU) are loaded by the first clip, libswresample and ALSA's libasound by the first
 * clip that plays sound.
 *
 * Calls go through stubs that jump to the library's function once `vitrine_lazy_load` has succeeded for it;
 * a call before that is a bug and ends the process with a message.
 */
#include <stddef.h>

enum vitrine_lazy_library {
    VITRINE_LAZY_HEIF,
    VITRINE_LAZY_DAV1D,
    VITRINE_LAZY_INPUT,
    VITRINE_LAZY_MOSQUITTO,
    VITRINE_LAZY_MICROHTTPD,
    VITRINE_LAZY_QRENCODE,
    VITRINE_LAZY_FREETYPE,
    VITRINE_LAZY_CURL,
    VITRINE_LAZY_EXPAT,
    VITRINE_LAZY_SMBCLIENT,
    VITRINE_LAZY_AVUTIL,
    VITRINE_LAZY_AVCODEC,
    VITRINE_LAZY_AVFORMAT,
    VITRINE_LAZY_SWSCALE,
    VITRINE_LAZY_SWRESAMPLE,
    VITRINE_LAZY_ASOUND,
};

/* The file name the library is loaded by (its soname). */
const char *vitrine_lazy_soname(enum vitrine_lazy_library library);

/* Loads the library and resolves every function Vitrine calls in it, once; later calls return the first result.
 * Thread-safe. Returns 0, or -1 with the loader's message (the file missing, a function missing) in `why`. */
int vitrine_lazy_load(enum vitrine_lazy_library library, char *why, size_t why_size);

/* Whether the library has been loaded. */
int vitrine_lazy_loaded(enum vitrine_lazy_library library);

/* Whether a load has been tried, loaded or not: a later `vitrine_lazy_load` reads nothing from disk. */
int vitrine_lazy_tried(enum vitrine_lazy_library library);

#endif
