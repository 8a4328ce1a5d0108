#ifndef VITRINE_CFREETYPE_SHIM_H
#define VITRINE_CFREETYPE_SHIM_H
#include <ft2build.h>
#include FT_FREETYPE_H

/* FT_LOAD_RENDER and the 26.6 fixed-point advance are macros or bit tricks; plain functions for Swift. */
static inline FT_Error vitrine_ft_render_char(FT_Face face, unsigned long code) {
    return FT_Load_Char(face, code, FT_LOAD_RENDER);
}
#endif
