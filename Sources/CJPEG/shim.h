#ifndef VITRINE_CJPEG_SHIM_H
#define VITRINE_CJPEG_SHIM_H
/*
 * libjpeg reports errors by calling error_exit, which must not return: the usual answer is longjmp back to a
 * setjmp in the caller. Swift cannot host a setjmp, so each libjpeg call that can fail is wrapped here by a
 * function that sets the jump point in its own C frame. No Swift frame is ever jumped over.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jpeglib.h>
#include <jerror.h>

typedef struct vitrine_jpeg {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    jmp_buf recovery;
    FILE *file;
    int created;
    char message[JMSG_LENGTH_MAX];
    /* libjpeg's warnings (corrupt data it decoded past): how many, and the first one's text. */
    int warnings;
    char warning[JMSG_LENGTH_MAX];
    /* The file ended (JWRN_JPEG_EOF: libjpeg inserted an end marker) / the entropy decoder needed bits that were
     * not there (JWRN_HIT_MARKER: the rest of the scan is filled with grey). */
    int ran_out;
    int hit_marker;
} vitrine_jpeg;

/* libjpeg-turbo's own limit for TJFLAG_LIMITSCANS: a progressive file with more scans is a decoding bomb. */
#define VITRINE_JPEG_MAX_SCANS 500

static void vitrine_jpeg_error_exit(j_common_ptr info) {
    vitrine_jpeg *self = (vitrine_jpeg *)info->client_data;
    (*info->err->format_message)(info, self->message);
    longjmp(self->recovery, 1);
}

/* Warnings (level -1) are what libjpeg decoded past: extraneous bytes between markers, a missing end marker after
 * complete data, a damaged segment. Such photos are shown, as djpeg, Pillow and every viewer show them, and the
 * first warning is kept for one log line. Only a premature end stops the decode (README, "Broken photos"): the
 * file ran out and the decoder needed data that was not there (a baseline scan cut short), or it ran out with scans
 * of a progressive or multi-scan file still to come. That is nearly always a file still being copied, which is
 * decoded again once it is closed. Trace messages (level >= 0) are ignored. */
static void vitrine_jpeg_emit_message(j_common_ptr info, int level) {
    if (level >= 0) {
        return;
    }
    vitrine_jpeg *self = (vitrine_jpeg *)info->client_data;
    int code = info->err->msg_code;
    if (code == JWRN_JPEG_EOF) {
        self->ran_out = 1;
    } else if (code == JWRN_HIT_MARKER) {
        self->hit_marker = 1;
    }
    if (self->warnings++ == 0) {
        (*info->err->format_message)(info, self->warning);
    }
    if (self->ran_out && info->is_decompressor) {
        j_decompress_ptr decompress = (j_decompress_ptr)info;
        int more_scans = decompress->progressive_mode || decompress->comps_in_scan < decompress->num_components;
        if (self->hit_marker || more_scans) {
            snprintf(self->message, sizeof self->message, "Premature end of JPEG file (truncated)");
            longjmp(self->recovery, 1);
        }
    }
}

static inline int vitrine_jpeg_warning_count(const vitrine_jpeg *self) { return self->warnings; }
static inline int vitrine_jpeg_ran_out(const vitrine_jpeg *self) { return self->ran_out; }

static void vitrine_jpeg_progress(j_common_ptr info) {
    vitrine_jpeg *self = (vitrine_jpeg *)info->client_data;
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    if (info->is_decompressor && decompress->input_scan_number > VITRINE_JPEG_MAX_SCANS) {
        snprintf(self->message, sizeof self->message, "more than %d progressive scans", VITRINE_JPEG_MAX_SCANS);
        longjmp(self->recovery, 1);
    }
}

static inline vitrine_jpeg *vitrine_jpeg_create(void) {
    return (vitrine_jpeg *)calloc(1, sizeof(vitrine_jpeg));
}

static inline void vitrine_jpeg_destroy(vitrine_jpeg *self) {
    if (self == NULL) {
        return;
    }
    if (self->created) {
        jpeg_destroy_decompress(&self->info);
    }
    if (self->file != NULL) {
        fclose(self->file);
    }
    free(self);
}

/* Reads the header from `descriptor` (which stays the caller's), sets the DCT scale to scale_num/8 and the output
 * to BGRX (or CMYK for four-component files, which libjpeg cannot convert), and starts decompression.
 * Returns 0, or -1 with self->message set. */
static inline int vitrine_jpeg_start(vitrine_jpeg *self, int descriptor, unsigned int scale_num, int cmyk) {
    if (setjmp(self->recovery)) {
        return -1;
    }
    self->info.err = jpeg_std_error(&self->errors);
    self->errors.error_exit = vitrine_jpeg_error_exit;
    self->errors.emit_message = vitrine_jpeg_emit_message;
    jpeg_create_decompress(&self->info);
    self->created = 1;
    self->info.client_data = self;
    self->progress.progress_monitor = vitrine_jpeg_progress;
    self->info.progress = &self->progress;
    int copy = dup(descriptor);
    self->file = copy >= 0 ? fdopen(copy, "rb") : NULL;
    if (self->file == NULL) {
        if (copy >= 0) {
            close(copy);
        }
        snprintf(self->message, sizeof self->message, "cannot open the file for decoding");
        return -1;
    }
    jpeg_stdio_src(&self->info, self->file);
    jpeg_read_header(&self->info, TRUE);
    self->info.scale_num = scale_num;
    self->info.scale_denom = 8;
    self->info.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_BGRX;
    jpeg_start_decompress(&self->info);
    return 0;
}

/* Decodes up to max_rows rows into rows[]; returns how many, or -1 with self->message set. */
static inline int vitrine_jpeg_read_rows(vitrine_jpeg *self, unsigned char **rows, unsigned int max_rows) {
    if (setjmp(self->recovery)) {
        return -1;
    }
    return (int)jpeg_read_scanlines(&self->info, rows, max_rows);
}

/* Reads to the end of the image, where a truncated file is finally noticed. Returns 0 or -1. */
static inline int vitrine_jpeg_finish(vitrine_jpeg *self) {
    if (setjmp(self->recovery)) {
        return -1;
    }
    jpeg_finish_decompress(&self->info);
    return 0;
}

static inline unsigned int vitrine_jpeg_output_width(const vitrine_jpeg *self) { return self->info.output_width; }
static inline unsigned int vitrine_jpeg_output_height(const vitrine_jpeg *self) { return self->info.output_height; }
static inline int vitrine_jpeg_row_batch(const vitrine_jpeg *self) { return self->info.rec_outbuf_height; }

/* Encodes width x height BGRX pixels (rows `stride` bytes apart) as a baseline JPEG (4:2:0, optimised Huffman
 * tables, still baseline): into `descriptor`, which stays the caller's, or with `descriptor` -1 into memory that
 * `*memory` points to afterwards (`*memory_size` bytes, the caller frees it with free()). The compress object
 * lives and dies in this one C frame, so an error's longjmp never crosses Swift. Returns 0, or -1 with `message`
 * (JMSG_LENGTH_MAX bytes). */
typedef struct vitrine_jpeg_encoder {
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    jmp_buf recovery;
    char *message;
} vitrine_jpeg_encoder;

static void vitrine_jpeg_encode_error_exit(j_common_ptr info) {
    vitrine_jpeg_encoder *self = (vitrine_jpeg_encoder *)info->client_data;
    (*info->err->format_message)(info, self->message);
    longjmp(self->recovery, 1);
}

static inline int vitrine_jpeg_encode_to(int descriptor, unsigned char **memory, unsigned long *memory_size,
                                         const unsigned char *pixels, unsigned int width, unsigned int height,
                                         size_t stride, int quality, char *message) {
    vitrine_jpeg_encoder *self = (vitrine_jpeg_encoder *)calloc(1, sizeof(vitrine_jpeg_encoder));
    if (self == NULL) {
        snprintf(message, JMSG_LENGTH_MAX, "out of memory");
        return -1;
    }
    self->message = message;
    if (descriptor < 0) {
        *memory = NULL;
        *memory_size = 0;
    }
    FILE *volatile file = NULL;
    volatile int created = 0;
    volatile int status = -1;
    if (setjmp(self->recovery) == 0) {
        self->info.err = jpeg_std_error(&self->errors);
        self->errors.error_exit = vitrine_jpeg_encode_error_exit;
        jpeg_create_compress(&self->info);
        created = 1;
        self->info.client_data = self;
        int ready = 1;
        if (descriptor >= 0) {
            int copy = dup(descriptor);
            file = copy >= 0 ? fdopen(copy, "wb") : NULL;
            if (file == NULL) {
                if (copy >= 0) {
                    close(copy);
                }
                snprintf(message, JMSG_LENGTH_MAX, "cannot open the file for encoding");
                ready = 0;
            } else {
                jpeg_stdio_dest(&self->info, file);
            }
        } else {
            jpeg_mem_dest(&self->info, memory, memory_size);
        }
        if (ready) {
            self->info.image_width = width;
            self->info.image_height = height;
            self->info.input_components = 4;
            self->info.in_color_space = JCS_EXT_BGRX;
            jpeg_set_defaults(&self->info);
            jpeg_set_quality(&self->info, quality, TRUE);
            self->info.optimize_coding = TRUE;
            jpeg_start_compress(&self->info, TRUE);
            while (self->info.next_scanline < height) {
                JSAMPROW row = (JSAMPROW)(pixels + (size_t)self->info.next_scanline * stride);
                jpeg_write_scanlines(&self->info, &row, 1);
            }
            jpeg_finish_compress(&self->info);
            status = 0;
        }
    }
    if (created) {
        jpeg_destroy_compress(&self->info);
    }
    if (file != NULL && fclose(file) != 0 && status == 0) {
        snprintf(message, JMSG_LENGTH_MAX, "cannot write the file");
        status = -1;
    }
    if (status != 0 && descriptor < 0 && *memory != NULL) {
        free(*memory);
        *memory = NULL;
        *memory_size = 0;
    }
    free(self);
    return status;
}

static inline int vitrine_jpeg_encode(int descriptor, const unsigned char *pixels, unsigned int width,
                                      unsigned int height, size_t stride, int quality, char *message) {
    return vitrine_jpeg_encode_to(descriptor, NULL, NULL, pixels, width, height, stride, quality, message);
}

static inline int vitrine_jpeg_encode_memory(unsigned char **memory, unsigned long *memory_size,
                                             const unsigned char *pixels, unsigned int width, unsigned int height,
                                             size_t stride, int quality, char *message) {
    return vitrine_jpeg_encode_to(-1, memory, memory_size, pixels, width, height, stride, quality, message);
}

#endif
