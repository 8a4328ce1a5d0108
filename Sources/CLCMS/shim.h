#ifndef VITRINE_CLCMS_SHIM_H
#define VITRINE_CLCMS_SHIM_H
/*
 * LittleCMS transforms from a photo's colour space to sRGB, on the BGRX rows the decoders hand out. The pixel
 * format constants are macros built from shifts, which Swift does not import; the profiles are opened and closed
 * here, so Swift owns only the transform.
 */
#include <stddef.h>
#include <lcms2.h>

/* An RGB ICC profile (`bytes`) to sRGB, perceptual intent as Pillow's ImageCms uses by default, on BGRX rows (the
 * fourth byte left alone). NULL when the profile cannot be read or is not an RGB profile. */
static inline cmsHTRANSFORM vitrine_cms_transform_from_icc(const void *bytes, size_t length) {
    cmsHPROFILE input = cmsOpenProfileFromMem(bytes, (cmsUInt32Number)length);
    if (input == NULL) return NULL;
    cmsHTRANSFORM transform = NULL;
    if (cmsGetColorSpace(input) == cmsSigRgbData) {
        cmsHPROFILE srgb = cmsCreate_sRGBProfile();
        if (srgb != NULL) {
            transform = cmsCreateTransform(input, TYPE_BGRA_8, srgb, TYPE_BGRA_8, INTENT_PERCEPTUAL,
                                           cmsFLAGS_COPY_ALPHA);
            cmsCloseProfile(srgb);
        }
    }
    cmsCloseProfile(input);
    return transform;
}

/* An RGB space given by its primaries and white point (CIE xy) and a parametric tone curve (ICC type `curve_type`
 * with `parameters`, as cmsBuildParametricToneCurve takes them) to sRGB, as HEIF and AVIF nclx boxes describe
 * colour. NULL when LittleCMS refuses it. */
static inline cmsHTRANSFORM vitrine_cms_transform_from_primaries(const double xy[8], int curve_type,
                                                                 const double parameters[7]) {
    cmsCIExyY white = {xy[6], xy[7], 1.0};
    cmsCIExyYTRIPLE primaries = {{xy[0], xy[1], 1.0}, {xy[2], xy[3], 1.0}, {xy[4], xy[5], 1.0}};
    cmsToneCurve *curve = cmsBuildParametricToneCurve(NULL, curve_type, parameters);
    if (curve == NULL) return NULL;
    cmsToneCurve *curves[3] = {curve, curve, curve};
    cmsHPROFILE input = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsFreeToneCurve(curve);
    if (input == NULL) return NULL;
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsHTRANSFORM transform = NULL;
    if (srgb != NULL) {
        transform = cmsCreateTransform(input, TYPE_BGRA_8, srgb, TYPE_BGRA_8, INTENT_PERCEPTUAL, cmsFLAGS_COPY_ALPHA);
        cmsCloseProfile(srgb);
    }
    cmsCloseProfile(input);
    return transform;
}


#endif
