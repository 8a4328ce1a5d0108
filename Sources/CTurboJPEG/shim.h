#ifndef VITRINE_CTURBOJPEG_SHIM_H
#define VITRINE_CTURBOJPEG_SHIM_H
#include <stddef.h>
#include <turbojpeg.h>

/* TJSCALED is a function-like macro, which Swift cannot import. */
static inline int vitrine_tj_scaled(int dimension, tjscalingfactor factor) {
    return TJSCALED(dimension, factor);
}

/* Flag macros built from other macros do not always import; name the ones Vitrine uses. */
static const int VITRINE_TJFLAG_STOPONWARNING = TJFLAG_STOPONWARNING;
static const int VITRINE_TJFLAG_LIMITSCANS = TJFLAG_LIMITSCANS;
static const int VITRINE_TJFLAG_ACCURATEDCT = TJFLAG_ACCURATEDCT;

#endif
