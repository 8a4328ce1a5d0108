#ifndef VITRINE_CZLIB_SHIM_H
#define VITRINE_CZLIB_SHIM_H
#include <zlib.h>
#endif
