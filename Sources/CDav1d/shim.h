#ifndef VITRINE_CDAV1D_SHIM_H
#define VITRINE_CDAV1D_SHIM_H
/*
 * dav1d for an AVIF still image, decoded straight from the item's data so the picture is held once, as the
 * decoder's own Y'CbCr planes (libheif 1.15 copies them and converts the whole picture to RGB twice over, four to
 * six times the memory). Swift fills the data buffer from the file and turns the planes into rows itself.
 */
#include <errno.h>
#include <string.h>
#include <dav1d/dav1d.h>

/* A buffer of `size` bytes for the coded data, owned by `data` (released by dav1d once decoded, or by
 * dav1d_data_unref). NULL when out of memory. */
static inline uint8_t *vitrine_av1_data(Dav1dData *data, size_t size) {
    memset(data, 0, sizeof *data);
    return dav1d_data_create(data, size);
}

/* Decodes the one frame in `data` into `picture` (released with dav1d_picture_unref; it outlives the decoder,
 * whose buffers are reference-counted). `threads` decoding threads, no frame delay, frames above `pixel_limit`
 * refused. 0, or a negative errno. */
static inline int vitrine_av1_decode(Dav1dData *data, int threads, unsigned pixel_limit, Dav1dPicture *picture) {
    Dav1dSettings settings;
    dav1d_default_settings(&settings);
    settings.n_threads = threads;
    settings.max_frame_delay = 1;
    settings.all_layers = 0;
    settings.frame_size_limit = pixel_limit;
    Dav1dContext *context = NULL;
    int result = dav1d_open(&context, &settings);
    if (result < 0) {
        dav1d_data_unref(data);
        return result;
    }
    memset(picture, 0, sizeof *picture);
    int got = 0;
    while (data->sz > 0 && result >= 0 && !got) {
        result = dav1d_send_data(context, data);
        if (result == DAV1D_ERR(EAGAIN)) {
            /* The decoder holds a picture to hand out before it takes more data. */
            result = dav1d_get_picture(context, picture);
            if (result == 0) got = 1;
            else if (result == DAV1D_ERR(EAGAIN)) result = 0;
        }
    }
    /* All data is in: asking again drains the decoder (it waits for its threads to finish the frame). */
    for (int attempt = 0; attempt < 4 && result >= 0 && !got; attempt++) {
        result = dav1d_get_picture(context, picture);
        if (result == 0) got = 1;
    }
    if (result >= 0 && !got) result = DAV1D_ERR(EINVAL);
    dav1d_data_unref(data);
    dav1d_close(&context);
    return result;
}

#endif
