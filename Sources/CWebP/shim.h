#ifndef VITRINE_CWEBP_SHIM_H
#define VITRINE_CWEBP_SHIM_H
/*
 * libwebp's decoder and animation decoder. Their option structs are set up by static inline functions that pass
 * the ABI version, and the decoder's output sits in an anonymous union; both are handled here, so Swift calls two
 * plain functions that write into memory it owns.
 */
#include <string.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

/* Decodes a still WebP from memory into `out` (BGRA, straight alpha, `width`x`height` pixels, rows of width*4
 * bytes), scaled by libwebp when the size differs from the bitstream's. Returns libwebp's VP8StatusCode (0: ok). */
static inline int vitrine_webp_decode(const uint8_t *bytes, size_t size, uint8_t *out, int width, int height,
                                      int scale) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) return VP8_STATUS_INVALID_PARAM;
    if (scale) {
        config.options.use_scaling = 1;
        config.options.scaled_width = width;
        config.options.scaled_height = height;
    }
    config.output.colorspace = MODE_BGRA;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = out;
    config.output.u.RGBA.stride = width * 4;
    config.output.u.RGBA.size = (size_t)width * (size_t)height * 4;
    int status = WebPDecode(bytes, size, &config);
    WebPFreeDecBuffer(&config.output);
    return status;
}

/* The first frame of an animated WebP as composed on its canvas (BGRA, straight alpha) into `out`, which holds
 * `width`x`height` pixels. Returns 1 on success, 0 when the file cannot be decoded or its canvas differs. */
static inline int vitrine_webp_first_frame(const uint8_t *bytes, size_t size, uint8_t *out, int width, int height) {
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInit(&options)) return 0;
    options.color_mode = MODE_BGRA;
    options.use_threads = 0;
    WebPData data = { bytes, size };
    WebPAnimDecoder *decoder = WebPAnimDecoderNew(&data, &options);
    if (decoder == NULL) return 0;
    WebPAnimInfo info;
    uint8_t *frame = NULL;
    int timestamp = 0;
    int ok = WebPAnimDecoderGetInfo(decoder, &info) && (int)info.canvas_width == width &&
             (int)info.canvas_height == height && WebPAnimDecoderGetNext(decoder, &frame, &timestamp);
    if (ok) memcpy(out, frame, (size_t)width * (size_t)height * 4);
    WebPAnimDecoderDelete(decoder);
    return ok;
}

/* Tests: a lossless encode with libwebp's advanced settings (effort `method` 0-6, `quality` 0-100 trading effort for
 * size, `exact` keeping the colour of transparent pixels), so every transform, the colour cache and meta prefix
 * codes are reached. Returns the size written to *out (freed with WebPFree), 0 on failure. */
static inline size_t vitrine_webp_encode_lossless(const uint8_t *rgba, int width, int height, int method,
                                                  float quality, int exact, uint8_t **out) {
    WebPConfig config;
    WebPPicture picture;
    WebPMemoryWriter writer;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&picture)) return 0;
    config.lossless = 1;
    config.method = method;
    config.quality = quality;
    config.exact = exact;
    picture.use_argb = 1;
    picture.width = width;
    picture.height = height;
    if (!WebPPictureImportRGBA(&picture, rgba, width * 4)) return 0;
    WebPMemoryWriterInit(&writer);
    picture.writer = WebPMemoryWrite;
    picture.custom_ptr = &writer;
    int ok = WebPEncode(&config, &picture);
    WebPPictureFree(&picture);
    if (!ok) {
        WebPMemoryWriterClear(&writer);
        return 0;
    }
    *out = writer.mem;
    return writer.size;
}

#endif
