#ifndef VITRINE_CHEIF_SHIM_H
#define VITRINE_CHEIF_SHIM_H
/*
 * libheif reading from an open file descriptor with pread, so a HEIF file's boxes are read as libheif asks for
 * them (the meta box, the item data it decodes) and a 5 MB photo's header costs a few kilobytes. The callbacks
 * are plain C here; Swift only fills `vitrine_heif_source` and keeps it alive while the context reads.
 *
 * libheif 1.15 has no way to cancel a decode, but it reads each coded image (each tile of a grid, as phones write
 * them) through the reader when it decodes it: once `cancelled` says so, reads are answered with zeros, which the
 * HEVC and AV1 decoders reject at once, so the decode ends at the next tile.
 *
 * A read is never reported as failed: libheif 1.15 asserts that an item's data read succeeds once its size check
 * has passed (Box_iloc::read_data), and Debian builds it with assertions, so a failure would abort the player. A
 * read that cannot be answered (cancelled, or the file shrank or failed since it was opened) is zero-filled and
 * noted in `refused`, which the caller turns into an error.
 */
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <libheif/heif.h>

typedef struct vitrine_heif_source {
    int descriptor;
    int64_t size;
    int64_t position;
    /* Asked before each read; non-zero refuses it. May be called from libheif's tile-decoding threads (which
     * libheif serialises around the reader). */
    int (*cancelled)(void *context);
    void *cancel_context;
    /* Why reads were answered with zeros: 0 none, 1 cancelled, 2 the file ended or failed early (errno kept). */
    int refused;
    int read_errno;
    /* File offsets of bytes whose lowest bit is cleared as they are read: the hidden flag of a grid's tiles, so
     * libheif 1.15 (which hands out top-level items only) gives a handle to each tile. Sorted. */
    const int64_t *reveal;
    size_t reveal_count;
} vitrine_heif_source;

static int64_t vitrine_heif_get_position(void *userdata) { return ((vitrine_heif_source *)userdata)->position; }

static int vitrine_heif_read(void *data, size_t size, void *userdata) {
    vitrine_heif_source *source = userdata;
    if (source->refused == 0 && source->cancelled != NULL && source->cancelled(source->cancel_context))
        source->refused = 1;
    size_t done = 0;
    while (source->refused == 0 && done < size) {
        ssize_t count = pread(source->descriptor, (char *)data + done, size - done, source->position + (int64_t)done);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) {
            source->refused = 2;
            source->read_errno = count < 0 ? errno : 0;
            break;
        }
        done += (size_t)count;
    }
    if (done < size) memset((char *)data + done, 0, size - done);
    for (size_t i = 0; i < source->reveal_count; i++) {
        int64_t at = source->reveal[i] - source->position;
        if (at >= 0 && at < (int64_t)size) ((unsigned char *)data)[at] &= 0xFE;
    }
    source->position += (int64_t)size;
    return 0;
}

static int vitrine_heif_seek(int64_t position, void *userdata) {
    vitrine_heif_source *source = userdata;
    if (position < 0 || position > source->size) return -1;
    source->position = position;
    return 0;
}

static enum heif_reader_grow_status vitrine_heif_wait_for_file_size(int64_t target, void *userdata) {
    return target > ((vitrine_heif_source *)userdata)->size ? heif_reader_grow_status_size_beyond_eof
                                                             : heif_reader_grow_status_size_reached;
}

static const struct heif_reader vitrine_heif_reader = {
    1, vitrine_heif_get_position, vitrine_heif_read, vitrine_heif_seek, vitrine_heif_wait_for_file_size,
};

/* Reads the file `source` describes into `context`; `source` must outlive the context. */
static inline struct heif_error vitrine_heif_read_source(struct heif_context *context, vitrine_heif_source *source) {
    return heif_context_read_from_reader(context, &vitrine_heif_reader, source, NULL);
}

/* Decoding options: the HEIF transforms applied (libheif's default), HDR reduced to 8 bits. */
static inline struct heif_decoding_options *vitrine_heif_decoding_options(void) {
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (options) options->convert_hdr_to_8bit = 1;
    return options;
}

/* Decoding options for a grid's tile: as coded (the grid's transforms apply to the whole picture), 8 bits. */
static inline struct heif_decoding_options *vitrine_heif_tile_decoding_options(void) {
    struct heif_decoding_options *options = heif_decoding_options_alloc();
    if (options) {
        options->ignore_transformations = 1;
        options->convert_hdr_to_8bit = 1;
    }
    return options;
}

static const int VITRINE_HEIF_COMPRESSION_HEVC = heif_compression_HEVC;
static const int VITRINE_HEIF_COMPRESSION_AV1 = heif_compression_AV1;

#endif
