#!/usr/bin/env python3
"""Records what a sound device plays, independently of the player: runs in the guest, reads the capture side of
snd-aloop through libasound (ctypes, no Vitrine code) and writes the samples (S16 stereo, 48 kHz) to OUT.raw and,
after each read, the monotonic time and the samples read so far to OUT.tsv, so each sample's time can be worked out
(`timeline`). OUT is best in the guest's memory (its /tmp), not on the 9p share: a write there every read is a
round trip through QEMU, which under TCG takes time from the guest's CPUs while the player is measured. Prints
"ready" once recording; ends on SIGTERM, its files whole.

    capture_sound.py DEVICE OUT
"""
import ctypes
import signal
import sys
import time

RATE = 48_000
# One period of a 200 ms buffer: a wake-up every 50 ms.
FRAMES = 2400


def main():
    device, out = sys.argv[1], sys.argv[2]
    alsa = ctypes.CDLL("libasound.so.2")
    # Frame counts are unsigned long and signed long in C: ctypes must not pass them as 32-bit ints.
    alsa.snd_pcm_readi.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulong]
    alsa.snd_pcm_readi.restype = ctypes.c_long
    alsa.snd_pcm_recover.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    alsa.snd_pcm_set_params.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                        ctypes.c_int, ctypes.c_uint]
    pcm = ctypes.c_void_p()
    # SND_PCM_STREAM_CAPTURE = 1; SND_PCM_FORMAT_S16_LE = 2; SND_PCM_ACCESS_RW_INTERLEAVED = 3.
    # SND_PCM_EINTR (0x80): a signal ends a read under way; without it libasound goes back to waiting, and
    # SIGTERM would not end the recording.
    if alsa.snd_pcm_open(ctypes.byref(pcm), device.encode(), 1, 0x80) < 0:
        sys.exit(f"capture_sound: cannot open {device}")
    if alsa.snd_pcm_set_params(pcm, 2, 3, 2, RATE, 0, 200_000) < 0:
        sys.exit(f"capture_sound: cannot set up {device}")
    # Started at once rather than by the first read: on snd-aloop a read that is to start the capture waits out
    # the kernel's 10 s timeout and fails (EIO).
    if alsa.snd_pcm_start(pcm) < 0:
        sys.exit(f"capture_sound: cannot start {device}")
    buffer = (ctypes.c_int16 * (FRAMES * 2))()
    total = 0
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    with open(out + ".raw", "wb") as raw, open(out + ".tsv", "w") as stamps:
        print("ready", flush=True)
        while not stopping:
            read = alsa.snd_pcm_readi(pcm, buffer, FRAMES)
            now = time.monotonic()
            if read < 0:
                # An overrun: samples were lost, so the count no longer says the time; a new stretch starts.
                alsa.snd_pcm_recover(pcm, read, 1)
                stamps.write("gap\n")
                continue
            raw.write(bytes(buffer)[:read * 4])
            total += read
            stamps.write(f"{now:.6f}\t{total}\n")
    alsa.snd_pcm_close(pcm)


if __name__ == "__main__":
    main()
