#ifndef VITRINE_CTURBOJPEG_SHIM_H
#define VITRINE_CTURBOJPEG_SHIM_H
/* TurboJPEG's encoder makes the test fixtures; the player decodes through libjpeg's row API (CJPEG). */
#include <stddef.h>
#include <turbojpeg.h>
#endif
