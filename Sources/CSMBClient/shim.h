#ifndef VITRINE_CSMBCLIENT_SHIM_H
#define VITRINE_CSMBCLIENT_SHIM_H
/*
 * libsmbclient (Samba 4.17, Debian bookworm, Raspberry Pi OS), loaded when an SMB source first syncs, in the sync's
 * own process (Sources/CLazyLink): it maps about 110 libraries (Samba's own, ICU, GnuTLS, Kerberos), 17 MB that
 * must never stay in a 512 MB frame's player. Its headers are under samba-4.0/ (see Package.swift's
 * `sambaHeaders`), which pkg-config would say but would link the library too.
 */
#include <sys/stat.h>
#include <libsmbclient.h>

#endif
