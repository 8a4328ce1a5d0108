#ifndef VITRINE_CFFMPEG_SHIM_H
#define VITRINE_CFFMPEG_SHIM_H
/*
 * FFmpeg (libavformat, libavcodec, libavutil, libswscale, and libswresample for a clip's sound) for clips. Loaded when the first clip is opened
 * (Sources/CLazyLink), so a frame that shows only photos never maps them (libavcodec alone maps some 40 more
 * libraries). What Swift cannot reach itself is here: FFmpeg's error macros and the decoder's callbacks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>

static inline int vitrine_av_eof(void) { return AVERROR_EOF; }
static inline int vitrine_av_exit(void) { return AVERROR_EXIT; }
static inline int vitrine_av_invalid_data(void) { return AVERROR_INVALIDDATA; }
static inline int vitrine_av_again(void) { return AVERROR(EAGAIN); }
static inline int vitrine_av_error(int code) { return AVERROR(code); }
static inline int64_t vitrine_av_nopts(void) { return AV_NOPTS_VALUE; }
static inline int vitrine_av_time_base(void) { return AV_TIME_BASE; }

/* The interrupt callback: libavformat asks it during every blocking read, so a clip no longer wanted (or a share that
 * stalls while a decode is given up) ends at its next read. `flag` points at a word the canceller sets to 1. */
static int vitrine_av_interrupted(void *flag) {
    return __atomic_load_n((const int *)flag, __ATOMIC_ACQUIRE) != 0;
}

/* Opens `path` with the interrupt word `flag` (which must outlive the context). 0 or a negative AVERROR. */
static inline int vitrine_av_open(AVFormatContext **context, const char *path, int *flag) {
    AVFormatContext *made = avformat_alloc_context();
    if (made == NULL) return AVERROR(ENOMEM);
    made->interrupt_callback.callback = vitrine_av_interrupted;
    made->interrupt_callback.opaque = flag;
    /* Probing reads at most 5 MB and 5 s of the file's start: bounded whatever the file claims. */
    int result = avformat_open_input(&made, path, NULL, NULL);
    if (result < 0) return result; /* avformat_open_input frees the context on failure */
    *context = made;
    return 0;
}

/* The display matrix's rotation in degrees (counter-clockwise, as FFmpeg reports it), or 0. iPhone clips are stored
 * landscape with a matrix that turns them upright. */
static inline double vitrine_av_rotation(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix == NULL || size < 9 * sizeof(int32_t)) return 0;
    double degrees = av_display_rotation_get((const int32_t *)matrix);
    return degrees != degrees ? 0 : degrees; /* NaN for a matrix that is no rotation */
}

/* The hardware frames' software format is chosen by FFmpeg; the decoder's get_format picks the hardware surface
 * format when the device offers it, else the first software format (so a clip the hardware refuses still plays). */
static enum AVPixelFormat vitrine_av_pick_format(AVCodecContext *context, const enum AVPixelFormat *formats) {
    enum AVPixelFormat wanted = (enum AVPixelFormat)(intptr_t)context->opaque;
    for (const enum AVPixelFormat *format = formats; *format != AV_PIX_FMT_NONE; format++) {
        if (*format == wanted) return *format;
    }
    for (const enum AVPixelFormat *format = formats; *format != AV_PIX_FMT_NONE; format++) {
        const AVPixFmtDescriptor *descriptor = av_pix_fmt_desc_get(*format);
        if (descriptor != NULL && !(descriptor->flags & AV_PIX_FMT_FLAG_HWACCEL)) return *format;
    }
    return AV_PIX_FMT_NONE;
}

/* Hands decoding to a hardware device of `type` (VA-API): 0, or a negative AVERROR when there is none. */
static inline int vitrine_av_use_device(AVCodecContext *context, enum AVHWDeviceType type, const char *device,
                                        enum AVPixelFormat surface) {
    AVBufferRef *made = NULL;
    int result = av_hwdevice_ctx_create(&made, type, device, NULL, 0);
    if (result < 0) return result;
    context->hw_device_ctx = made; /* the context owns the reference now */
    context->opaque = (void *)(intptr_t)surface;
    context->get_format = vitrine_av_pick_format;
    return 0;
}

/* The error's text. */
static inline void vitrine_av_describe(int code, char *text, size_t size) {
    if (av_strerror(code, text, size) < 0) snprintf(text, size, "error %d", code);
}

/* Sets a scaler's Y'CbCr matrix and ranges from the frame's own description (BT.709 for HD, BT.601 for SD when the
 * file says nothing, as players do), output full-range RGB. */
static inline void vitrine_sws_describe(struct SwsContext *scaler, const AVFrame *frame) {
    int space;
    switch (frame->colorspace) {
    case AVCOL_SPC_BT709: space = SWS_CS_ITU709; break;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: space = SWS_CS_BT2020; break;
    case AVCOL_SPC_SMPTE170M:
    case AVCOL_SPC_BT470BG: space = SWS_CS_ITU601; break;
    case AVCOL_SPC_FCC: space = SWS_CS_FCC; break;
    case AVCOL_SPC_SMPTE240M: space = SWS_CS_SMPTE240M; break;
    default: space = frame->height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601; break;
    }
    int full = frame->color_range == AVCOL_RANGE_JPEG || frame->format == AV_PIX_FMT_YUVJ420P ||
               frame->format == AV_PIX_FMT_YUVJ422P || frame->format == AV_PIX_FMT_YUVJ444P;
    const int *table = sws_getCoefficients(space);
    sws_setColorspaceDetails(scaler, table, full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
}

/* Sets the interrupt word from another thread. */
static inline void vitrine_av_raise(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELEASE); }

/* The frame's presentation time in its stream's time base: the decoder's best guess (FFmpeg fills it from the
 * packets' times when frames carry none). */
static inline int64_t vitrine_av_frame_time(const AVFrame *frame) {
    return frame->best_effort_timestamp != AV_NOPTS_VALUE ? frame->best_effort_timestamp : frame->pts;
}

/* The value of `key` in `dictionary`, or NULL. */
static inline const char *vitrine_av_tag(const AVDictionary *dictionary, const char *key) {
    const AVDictionaryEntry *entry = av_dict_get(dictionary, key, NULL, 0);
    return entry != NULL ? entry->value : NULL;
}

/* Scales the frame's pictures into one packed plane (BGRX): the rows written, or a negative AVERROR. */
static inline int vitrine_sws_scale_packed(struct SwsContext *scaler, const AVFrame *frame, uint8_t *target,
                                           int stride) {
    uint8_t *planes[4] = {target, NULL, NULL, NULL};
    int strides[4] = {stride, 0, 0, 0};
    return sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides);
}

/* A resampler from the decoder's samples to interleaved signed 16-bit stereo at `rate`, or NULL. */
static inline struct SwrContext *vitrine_swr_stereo(const AVCodecContext *decoder, int rate) {
    AVChannelLayout stereo;
    av_channel_layout_default(&stereo, 2);
    struct SwrContext *made = NULL;
    if (swr_alloc_set_opts2(&made, &stereo, AV_SAMPLE_FMT_S16, rate, &decoder->ch_layout, decoder->sample_fmt,
                            decoder->sample_rate, 0, NULL) < 0) {
        return NULL;
    }
    if (swr_init(made) < 0) {
        swr_free(&made);
        return NULL;
    }
    return made;
}

/* Converts a decoded frame's samples into `target` (room for `capacity` stereo frames): the frames written, or a
 * negative AVERROR. */
static inline int vitrine_swr_convert_frame(struct SwrContext *resampler, const AVFrame *frame, int16_t *target,
                                            int capacity) {
    uint8_t *planes[1] = {(uint8_t *)target};
    return swr_convert(resampler, planes, capacity, (const uint8_t **)frame->extended_data, frame->nb_samples);
}

/* ---- Clip renditions: H.264 in MP4, written by `vitrine renditions` ---- */

/* An MP4 muxer writing to `path`: 0, or a negative AVERROR. */
static inline int vitrine_av_create_mp4(AVFormatContext **context, const char *path) {
    AVFormatContext *made = NULL;
    int result = avformat_alloc_output_context2(&made, NULL, "mp4", path);
    if (result < 0) return result;
    result = avio_open(&made->pb, path, AVIO_FLAG_WRITE);
    if (result < 0) {
        avformat_free_context(made);
        return result;
    }
    *context = made;
    return 0;
}

/* Closes the file and frees the muxer (safe on NULL). */
static inline void vitrine_av_close_mp4(AVFormatContext **context) {
    if (*context == NULL) return;
    avio_closep(&(*context)->pb);
    avformat_free_context(*context);
    *context = NULL;
}

/* Writes the header, the index at the file's start (`+faststart`: a player on a share reads it first). */
static inline int vitrine_av_write_mp4_header(AVFormatContext *context) {
    AVDictionary *options = NULL;
    av_dict_set(&options, "movflags", "+faststart", 0);
    int result = avformat_write_header(context, &options);
    av_dict_free(&options);
    return result;
}

/* Whether the muxer asks for codec headers out of band (MP4 does). */
static inline int vitrine_av_wants_global_header(const AVFormatContext *context) {
    return (context->oformat->flags & AVFMT_GLOBALHEADER) != 0;
}

static inline void vitrine_av_set_global_header(AVCodecContext *context) {
    context->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
}

/* Copies the source's display matrix to the rendition's stream, so a phone's sideways clip stays upright. */
static inline void vitrine_av_copy_rotation(AVStream *to, const AVStream *from) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(from, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (matrix == NULL || size < 9 * sizeof(int32_t)) return;
    uint8_t *copy = av_stream_new_side_data(to, AV_PKT_DATA_DISPLAYMATRIX, size);
    if (copy != NULL) memcpy(copy, matrix, size);
}

/* A scaler into limited-range 4:2:0 in the source's own matrix (what H.264 players expect). */
static inline void vitrine_sws_describe_yuv(struct SwsContext *scaler, const AVFrame *frame, int matrix) {
    int full = frame->color_range == AVCOL_RANGE_JPEG || frame->format == AV_PIX_FMT_YUVJ420P ||
               frame->format == AV_PIX_FMT_YUVJ422P || frame->format == AV_PIX_FMT_YUVJ444P;
    const int *table = sws_getCoefficients(matrix);
    sws_setColorspaceDetails(scaler, table, full, table, 0, 0, 1 << 16, 1 << 16);
}

/* The libswscale matrix for a frame (as vitrine_sws_describe chooses it). */
static inline int vitrine_sws_matrix(const AVFrame *frame) {
    switch (frame->colorspace) {
    case AVCOL_SPC_BT709: return SWS_CS_ITU709;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return SWS_CS_BT2020;
    case AVCOL_SPC_SMPTE170M:
    case AVCOL_SPC_BT470BG: return SWS_CS_ITU601;
    default: return frame->height >= 720 ? SWS_CS_ITU709 : SWS_CS_ITU601;
    }
}

/* Scales a decoded picture into `target`'s planes (allocated 4:2:0). Rows written, or a negative AVERROR. */
static inline int vitrine_sws_scale_frame(struct SwsContext *scaler, const AVFrame *frame, AVFrame *target) {
    return sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, target->data,
                     target->linesize);
}

/* Scales the frame's pictures into NV12: the Y' rows at `luma`, the interleaved CbCr rows at `chroma`, both
 * `stride` bytes apart. The rows written, or a negative AVERROR. */
static inline int vitrine_sws_scale_nv12(struct SwsContext *scaler, const AVFrame *frame, uint8_t *luma,
                                         uint8_t *chroma, int stride) {
    uint8_t *planes[4] = {luma, chroma, NULL, NULL};
    int strides[4] = {stride, stride, 0, 0};
    return sws_scale(scaler, (const uint8_t *const *)frame->data, frame->linesize, 0, frame->height, planes, strides);
}

/* Whether the frame's values are full range (JPEG's) rather than limited. */
static inline int vitrine_av_full_range(const AVFrame *frame) {
    return frame->color_range == AVCOL_RANGE_JPEG || frame->format == AV_PIX_FMT_YUVJ420P ||
           frame->format == AV_PIX_FMT_YUVJ422P || frame->format == AV_PIX_FMT_YUVJ444P;
}

/* One picture between packed BGRX and NV12, the same size, in the Y'CbCr matrix `matrix` (an SWS_CS_ value) and
 * range: `to_nv12` 1 turns the BGRX at `packed` into the planes, 0 the planes into BGRX. 0 on success. */
static inline int vitrine_sws_nv12_convert(int width, int height, int to_nv12, int matrix, int full, uint8_t *packed,
                                           int packed_stride, uint8_t *luma, uint8_t *chroma, int stride) {
    enum AVPixelFormat from = to_nv12 ? AV_PIX_FMT_BGR0 : AV_PIX_FMT_NV12;
    enum AVPixelFormat to = to_nv12 ? AV_PIX_FMT_NV12 : AV_PIX_FMT_BGR0;
    /* Accurate rounding: once a clip, not once a picture, so the few levels the fast path loses are not worth it. */
    struct SwsContext *scaler = sws_getContext(width, height, from, width, height, to,
                                               SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
    if (scaler == NULL) {
        return -1;
    }
    const int *table = sws_getCoefficients(matrix);
    if (to_nv12) {
        sws_setColorspaceDetails(scaler, table, 1, table, full, 0, 1 << 16, 1 << 16);
    } else {
        sws_setColorspaceDetails(scaler, table, full, table, 1, 0, 1 << 16, 1 << 16);
    }
    uint8_t *planes[4] = {luma, chroma, NULL, NULL};
    int strides[4] = {stride, stride, 0, 0};
    uint8_t *packed_planes[4] = {packed, NULL, NULL, NULL};
    int packed_strides[4] = {packed_stride, 0, 0, 0};
    int rows = to_nv12 ? sws_scale(scaler, (const uint8_t *const *)packed_planes, packed_strides, 0, height, planes,
                                   strides)
                       : sws_scale(scaler, (const uint8_t *const *)planes, strides, 0, height, packed_planes,
                                   packed_strides);
    sws_freeContext(scaler);
    return rows == height ? 0 : -1;
}

static const int VITRINE_SWS_CS_ITU601 = SWS_CS_ITU601;
static const int VITRINE_SWS_CS_ITU709 = SWS_CS_ITU709;
static const int VITRINE_SWS_CS_BT2020 = SWS_CS_BT2020;

#endif
