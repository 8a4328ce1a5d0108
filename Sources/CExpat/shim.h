#ifndef VITRINE_CEXPAT_SHIM_H
#define VITRINE_CEXPAT_SHIM_H
/*
 * expat 2.5 (Debian bookworm), loaded with libcurl when a WebDAV source first syncs (Sources/CLazyLink): it reads
 * the servers' PROPFIND answers.
 */
#include <expat.h>

#endif
