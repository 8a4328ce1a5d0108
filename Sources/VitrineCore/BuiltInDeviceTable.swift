// swift-format-ignore-file
// Made from Config/devices.json by `make builtin-devices` (Tests/Tools/builtin_devices.sh); do not edit.

/// The device table compiled in: used when neither `--devices`, the config's `deviceTable` nor
/// /etc/vitrine/devices.json names one, so the binary plays anywhere on its own.
public enum BuiltInDeviceTable {
    /// How errors and `check-config` name it.
    public static let name = "the built-in device table"
    public static let json = #"""
{
  "version": 1,
  "profiles": [
    {
      "id": "rpi-touch-display",
      "name": "Raspberry Pi Touch Display 7\" (800x480)",
      "match": {
        "connector": [
          "DSI"
        ],
        "mode": "800x480"
      },
      "compose": "800x480",
      "rotation": 0,
      "rendition": "800x480",
      "fit": "contain",
      "memoryBudgetMiB": 48,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Original official 7\" DSI panel: 800x480 native landscape, viewable area 154.08 x 85.92 mm. No EDID (DSI panel), so it is matched on connector and mode only. Composed 1:1, no rotation."
    },
    {
      "id": "rpi-touch-display-2",
      "name": "Raspberry Pi Touch Display 2 7\" (720x1280, landscape)",
      "match": {
        "connector": [
          "DSI"
        ],
        "mode": "720x1280"
      },
      "compose": "1280x720",
      "rotation": 90,
      "rendition": "1280x720",
      "fit": "contain",
      "memoryBudgetMiB": 64,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Native scanout is portrait 720x1280 (ILI9881 panel, active area 154.5 x 87 mm). The Raspberry Pi docs say rotation 90 turns it 90 degrees clockwise into landscape, so this profile composes 1280x720 and rotates 90. Use 270 if the display is mounted the other way up. The 5\" Touch Display 2 has the same 720x1280 mode and gets this profile too."
    },
    {
      "id": "pimoroni-hyperpixel4",
      "name": "Pimoroni HyperPixel 4.0 (480x800 DPI, landscape)",
      "match": {
        "connector": [
          "DPI"
        ],
        "mode": "480x800"
      },
      "compose": "800x480",
      "rotation": 270,
      "rendition": "800x480",
      "fit": "contain",
      "memoryBudgetMiB": 48,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "HyperPixel 4.0 Rectangular is physically a portrait 480x800 DPI panel (vc4-kms-dpi-hyperpixel4 overlay). Composing 800x480 with rotation 270 matches Pimoroni's 'hyperpixel4-rotate left' landscape layout, with the Pi's power/HDMI ports at the bottom. Use 90 for ports at the top."
    },
    {
      "id": "waveshare-7in-hdmi-lcd-c",
      "name": "Waveshare 7\" HDMI LCD (C) (1024x600)",
      "match": {
        "connector": [
          "HDMI-A"
        ],
        "mode": "1024x600"
      },
      "compose": "1024x600",
      "rotation": 0,
      "rendition": "1024x600",
      "fit": "contain",
      "memoryBudgetMiB": 64,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "7\" 1024x600 HDMI panel with USB touch. Waveshare's Pi setup forces hdmi_cvt 1024 600 60 6 0 0 0. The same profile covers the many 7\" 1024x600 HDMI clones."
    },
    {
      "id": "waveshare-10in1-hdmi-lcd",
      "name": "Waveshare 10.1\" HDMI LCD (1280x800)",
      "match": {
        "connector": [
          "HDMI-A"
        ],
        "mode": "1280x800"
      },
      "compose": "1280x800",
      "rotation": 0,
      "rendition": "1280x800",
      "fit": "contain",
      "memoryBudgetMiB": 72,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "10.1\" 1280x800 IPS HDMI panel, e.g. the 10.1inch HDMI LCD (B). Waveshare's Pi setup uses hdmi_cvt 1280 800 60 6 0 0 0. The panel is 16:10, so 3:2 photos get thin bars with contain."
    },
    {
      "id": "hdmi-720p",
      "name": "HDMI 1280x720 panel / HD-ready TV",
      "match": {
        "connector": [
          "HDMI-A"
        ],
        "mode": "1280x720"
      },
      "compose": "1280x720",
      "rotation": 0,
      "rendition": "1280x720",
      "fit": "contain",
      "memoryBudgetMiB": 64,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Small HDMI panels and older HD-ready TVs whose preferred mode is 720p. Composed 1:1."
    },
    {
      "id": "hdmi-1366x768",
      "name": "HDMI 1366x768 monitor / TV",
      "match": {
        "connector": [
          "HDMI-A"
        ],
        "mode": "1366x768"
      },
      "compose": "1366x768",
      "rotation": 0,
      "rendition": "1366x768",
      "fit": "contain",
      "memoryBudgetMiB": 72,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Budget 1366x768 panels and 'HD ready' TVs. Many of them advertise 1920x1080 as well, but 1366x768 is their first detailed (native) timing. When the connector reports 1366x768, compose 1:1 so the TV does not scale."
    },
    {
      "id": "hdmi-1080p",
      "name": "Full HD 1920x1080 monitor / TV",
      "match": {
        "connector": [
          "HDMI-A",
          "DP"
        ],
        "mode": "1920x1080"
      },
      "compose": "1920x1080",
      "rotation": 0,
      "rendition": "1920x1080",
      "fit": "contain",
      "memoryBudgetMiB": 112,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Generic Full HD landscape monitor or TV. 1920x1080 is exactly the fallback's maxComposePixels, so it composes at native size."
    },
    {
      "id": "wuxga-1920x1200",
      "name": "WUXGA 1920x1200 monitor",
      "match": {
        "connector": [
          "HDMI-A",
          "DP"
        ],
        "mode": "1920x1200"
      },
      "compose": "1920x1200",
      "rotation": 0,
      "rendition": "1920x1200",
      "fit": "contain",
      "memoryBudgetMiB": 128,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "16:10 office monitors, e.g. the Dell U2415 (EDID name 'DELL U2415', 518 x 324 mm). Composed at native size: it is only about 11% more pixels than 1080p."
    },
    {
      "id": "qhd-2560x1440",
      "name": "QHD 2560x1440 monitor",
      "match": {
        "connector": [
          "HDMI-A",
          "DP"
        ],
        "mode": "2560x1440"
      },
      "compose": "2560x1440",
      "rotation": 0,
      "rendition": "2560x1440",
      "fit": "contain",
      "memoryBudgetMiB": 160,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "27\" class QHD monitors (about 597 x 336 mm). Composed at native size because boards that drive 1440p (Pi 4/5, x86 mini PCs) have the memory. On a 512 MB board, drop this profile so the fallback halves the canvas to 1280x720."
    },
    {
      "id": "uhd-4k-tv",
      "name": "4K UHD 3840x2160 TV / monitor (composed at 1080p)",
      "match": {
        "connector": [
          "HDMI-A",
          "DP"
        ],
        "mode": "3840x2160"
      },
      "compose": "1920x1080",
      "rotation": 0,
      "rendition": "1920x1080",
      "fit": "contain",
      "memoryBudgetMiB": 96,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "A 4K panel composes at 1920x1080, half size per axis, and Vitrine asks the connector for its 1920x1080 mode (every 4K TV offers one); the TV scales it up. Two 4K scanout buffers would cost 63 MiB and every frame four times the decode and compose work, which small boards (Pi Zero 2 W, Pi 3, Pi 4) cannot spare; at viewing distance the TV's scaler hides the difference for photos."
    },
    {
      "id": "portrait-signage-1080x1920",
      "name": "Portrait signage display 1080x1920 (native portrait mode)",
      "match": {
        "connector": [
          "HDMI-A"
        ],
        "mode": "1080x1920"
      },
      "compose": "1080x1920",
      "rotation": 0,
      "rendition": "1080x1920",
      "fit": "contain",
      "memoryBudgetMiB": 112,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Signage panels whose EDID already advertises a portrait 1080x1920 timing, so no rotation is needed. Composed 1:1."
    },
    {
      "id": "edp-laptop-1080p",
      "name": "Laptop internal eDP panel 1920x1080",
      "match": {
        "connector": [
          "eDP"
        ],
        "mode": "1920x1080"
      },
      "compose": "1920x1080",
      "rotation": 0,
      "rendition": "1920x1080",
      "fit": "contain",
      "memoryBudgetMiB": 112,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Internal 14\"-15.6\" Full HD laptop panels (a 15.6\" one is about 344 x 194 mm), e.g. an old laptop reused as a frame. Composed 1:1."
    },
    {
      "id": "laptop-panel-1366x768",
      "name": "Laptop internal LVDS/eDP panel 1366x768",
      "match": {
        "connector": [
          "LVDS",
          "eDP"
        ],
        "mode": "1366x768"
      },
      "compose": "1366x768",
      "rotation": 0,
      "rendition": "1366x768",
      "fit": "contain",
      "memoryBudgetMiB": 72,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Older 15.6\" laptop panels (e.g. Samsung LTN156AT24 on LVDS, 344 x 194 mm). Composed 1:1."
    },
    {
      "id": "waveshare-7in9-dsi",
      "name": "Waveshare 7.9\" DSI LCD (400x1280, landscape bar)",
      "match": {
        "connector": [
          "DSI"
        ],
        "mode": "400x1280"
      },
      "compose": "1280x400",
      "rotation": 90,
      "rendition": "1280x400",
      "fit": "cover",
      "memoryBudgetMiB": 48,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Native scanout is portrait 400x1280 (vc4-kms-dsi-waveshare-panel,7_9_inch), but the panel is mounted as a wide 1280x400 bar, so this profile composes 1280x400 and rotates 90. Fit is cover because a 3.2:1 strip would show only a small centred picture with contain."
    },
    {
      "id": "waveshare-7in-dsi-c",
      "name": "Waveshare 7\" DSI LCD (C) (1024x600)",
      "match": {
        "connector": [
          "DSI"
        ],
        "mode": "1024x600"
      },
      "compose": "1024x600",
      "rotation": 0,
      "rendition": "1024x600",
      "fit": "contain",
      "memoryBudgetMiB": 64,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Waveshare 7inch DSI LCD (C), driven by the vc4-kms-dsi-waveshare-panel overlay with a native landscape 1024x600 mode. Composed 1:1."
    },
    {
      "id": "waveshare-10in1-dsi",
      "name": "Waveshare 8\"/10.1\" DSI LCD (C) (1280x800)",
      "match": {
        "connector": [
          "DSI"
        ],
        "mode": "1280x800"
      },
      "compose": "1280x800",
      "rotation": 0,
      "rendition": "1280x800",
      "fit": "contain",
      "memoryBudgetMiB": 72,
      "transition": "fade",
      "transitionSeconds": 1.0,
      "note": "Waveshare 8inch and 10.1inch DSI LCD (C) share one native landscape 1280x800 mode in the Raspberry Pi waveshare-panel driver. Composed 1:1."
    }
  ],
  "fallback": {
    "name": "Unknown panel",
    "maxComposePixels": 2073600,
    "fit": "contain",
    "baseMemoryMiB": 24,
    "framesInBudget": 6,
    "transition": "fade",
    "transitionSeconds": 1.0,
    "boardMemoryShare": 0.125,
    "maxMemoryMiB": 256
  }
}
"""#
}
