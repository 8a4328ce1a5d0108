#ifndef VITRINE_CSPNG_SHIM_H
#define VITRINE_CSPNG_SHIM_H
/*
 * libspng, read row by row. SPNG_EOI and the format and flag enums import as plain constants; the return codes are
 * compared as Int32. The stream comes from a FILE* (fdopen of a dup of the photo's descriptor), so no read
 * callback crosses into Swift.
 */
#include <stdio.h>
#include <spng.h>

static const int VITRINE_SPNG_EOI = SPNG_EOI;
static const int VITRINE_SPNG_FMT_RGBA8 = SPNG_FMT_RGBA8;
static const int VITRINE_SPNG_FMT_PNG = SPNG_FMT_PNG;
static const int VITRINE_SPNG_DECODE_TRNS = SPNG_DECODE_TRNS;
static const int VITRINE_SPNG_DECODE_PROGRESSIVE = SPNG_DECODE_PROGRESSIVE;

#endif
