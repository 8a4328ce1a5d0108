#ifndef VITRINE_CQRENCODE_SHIM_H
#define VITRINE_CQRENCODE_SHIM_H
/* libqrencode 4 (Debian bookworm, Raspberry Pi OS): the pairing code of the web remote. */
#include <qrencode.h>
#endif
