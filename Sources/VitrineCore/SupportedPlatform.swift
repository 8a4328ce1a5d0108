// Vitrine is built for 64-bit Linux only (x86_64, and aarch64 as Raspberry Pi OS 64-bit runs it). Microsecond
// clocks, byte counts of 4K frames and pixel counts of large photos are kept in `Int`, which on a 32-bit build
// would trap on overflow instead of being wrong quietly; rather than a player that traps in the field, a 32-bit
// build stops here with this message.
#if !(arch(x86_64) || arch(arm64))
    #error("Vitrine builds for 64-bit Linux only (x86_64 or aarch64); on a Raspberry Pi use the 64-bit Raspberry Pi OS")
#endif
