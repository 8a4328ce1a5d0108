import Testing
import VitrineCore

/// `gpio` and `presence` in `vitrine.json`: what a frame's owner writes, and each mistake refused with its line
/// and field.
@Suite struct GPIOSettingsTests {
    @Test func buttonsAndASensorAreRead() throws {
        let settings = try Settings.parse(
            """
            {"gpio": {"debounceMs": 30, "longPressSeconds": 1.5, "buttons": [
               {"line": "GPIO17", "action": "next", "longPress": "nextCategory"},
               {"chip": "pinctrl-bcm2835", "offset": 27, "action": "screen", "bias": "pull-down", "activeLow": false,
                "debounceMs": 5}]},
             "presence": {"sensor": {"line": "GPIO4"}, "offAfter": 10, "wakeOutsideSchedule": true}}
            """, file: "v.json")
        #expect(settings.longPressSeconds == 1.5)
        #expect(
            settings.buttons == [
                GPIOButton(
                    line: GPIOLine(name: "GPIO17", bias: .pullUp, activeLow: true),
                    binding: .init(action: .next, longAction: .nextCategory), debounceSeconds: 0.03),
                GPIOButton(
                    line: GPIOLine(chip: "pinctrl-bcm2835", offset: 27, bias: .pullDown, activeLow: false),
                    binding: .init(action: .screen), debounceSeconds: 0.005),
            ])
        #expect(settings.buttons.map(\.line.description) == ["GPIO17", "pinctrl-bcm2835 line 27"])
        #expect(
            settings.presence
                == PresenceSettings(
                    sensor: GPIOLine(name: "GPIO4", bias: .disabled, activeLow: false), offAfterMinutes: 10,
                    wakeOutsideSchedule: true))
    }

    /// Presence without a sensor: only input keeps the screen on.
    @Test func presenceNeedsNoSensor() throws {
        let settings = try Settings.parse(#"{"presence": {"offAfter": 0.5}}"#, file: "v.json")
        #expect(settings.presence == PresenceSettings(sensor: nil, offAfterMinutes: 0.5))
        #expect(try Settings.parse("{}", file: "v.json").presence == nil)
    }

    @Test(arguments: [
        (
            #"{"gpio": {"buttons": [{"line": "GPIO17"}]}}"#,
            "v.json:1: gpio.buttons[0].action: missing (expected one of the key actions, e.g. \"next\")"
        ),
        (
            #"{"gpio": {"buttons": [{"line": "GPIO17", "offset": 3, "action": "next"}]}}"#,
            "v.json:1: gpio.buttons[0].offset: give a line's name or its offset on a chip, not both"
        ),
        (
            #"{"gpio": {"buttons": [{"offset": 3, "action": "next"}]}}"#,
            "v.json:1: gpio.buttons[0].offset: an offset needs the chip it is on (e.g. \"chip\": \"gpiochip0\")"
        ),
        (
            #"{"gpio": {"buttons": [{"chip": "gpiochip0", "action": "next"}]}}"#,
            "v.json:1: gpio.buttons[0]: names no line (expected \"line\": \"GPIO17\", or \"chip\" and \"offset\")"
        ),
        (
            #"{"gpio": {"buttons": [{"line": "GPIO5", "action": "next"}, {"line": "GPIO5", "action": "pause"}]}}"#,
            "v.json:1: gpio.buttons[1].line: GPIO5 is already button 1's line"
        ),
        (
            #"{"gpio": {"buttons": [{"line": "GPIO5", "action": "jump"}]}}"#,
            "v.json:1: gpio.buttons[0].action: \"jump\" is not allowed"
        ),
        (
            #"{"gpio": {"buttons": [{"line": "GPIO5", "action": "next", "bias": "up"}]}}"#,
            "v.json:1: gpio.buttons[0].bias: \"up\" is not allowed"
        ),
        (
            #"{"gpio": {"buttons": [{"line": "GPIO5", "action": "next", "pin": 5}]}}"#,
            "v.json:1: gpio.buttons[0].pin: unknown key"
        ),
        (#"{"presence": {"sensor": {"line": "GPIO4"}}}"#, "v.json:1: presence.offAfter: missing"),
        (#"{"presence": {"offAfter": 0}}"#, "v.json:1: presence.offAfter:"),
        (
            #"{"presence": {"offAfter": 5, "sensor": {"chip": "/sys/gpio", "offset": 1}}}"#,
            "v.json:1: presence.sensor.chip: \"/sys/gpio\" is not a chip (expected e.g. gpiochip0 or pinctrl-bcm2835)"
        ),
    ])
    func mistakesAreRefusedWithLineAndField(text: String, message: String) {
        #expect {
            _ = try Settings.parse(text, file: "v.json")
        } throws: { error in
            let description = (error as? ConfigError)?.description ?? ""
            return description.hasPrefix(message)
        }
    }

    /// A multi-line file: the refusal names the line the mistake is on.
    @Test func theRefusalNamesTheLine() {
        let text = """
            {
              "gpio": {
                "buttons": [
                  {"line": "GPIO17", "action": "next"},
                  {"line": "GPIO27", "action": "sideways"}
                ]
              }
            }
            """
        #expect {
            _ = try Settings.parse(text, file: "frame.json")
        } throws: { error in
            (error as? ConfigError)?.description.hasPrefix("frame.json:5: gpio.buttons[1].action:") == true
        }
    }
}
