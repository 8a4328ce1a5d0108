#ifndef VITRINE_CALSA_SHIM_H
#define VITRINE_CALSA_SHIM_H
/*
 * ALSA (libasound) for a clip's sound, loaded by the first clip that plays sound (Sources/CLazyLink). What Swift
 * cannot reach itself is here: the library's error handler is variadic.
 */
#include <alsa/asoundlib.h>

/* ALSA prints its own errors to stderr ("ALSA lib pcm.c:2666: Unknown PCM hdmi"); Vitrine says what failed in one
 * line of its own, naming the device and the setting, so the library's are dropped. */
static void vitrine_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void vitrine_alsa_silence_errors(void) { snd_lib_error_set_handler(vitrine_alsa_quiet); }

#endif
