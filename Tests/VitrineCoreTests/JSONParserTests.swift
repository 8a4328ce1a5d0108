import Testing
import VitrineCore

@Suite struct JSONParserTests {
    @Test func parsesEveryKindWithPositions() throws {
        let value = try JSONParser.parse("{\n  \"a\": [1, -2.5e1, true, null],\n  \"b\": \"x\\u00e9\\n\"\n}")
        guard case .object(let members) = value.kind else {
            Issue.record("expected an object")
            return
        }
        #expect(members.map(\.key) == ["a", "b"])
        #expect(members[0].value.line == 2)
        #expect(members[1].value.line == 3)
        #expect(members[1].value.kind == .string("xé\n"))
        guard case .array(let elements) = members[0].value.kind else {
            Issue.record("expected an array")
            return
        }
        #expect(elements.map(\.kind) == [.number(1), .number(-25), .bool(true), .null])
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, "expected a quoted key"),
        ("{\n\"a\": 1\n\"b\": 2}", 3, "expected ',' or '}'"),
        ("[1, 2", 1, "unexpected end of file"),
        ("{\"a\": 01}", 1, "expected ',' or '}'"),
        ("{\"a\": 1, \"a\": 2}", 1, "duplicate key \"a\""),
        ("\"tab\there\"", 1, "control character"),
        ("{} x", 1, "unexpected text after"),
        ("{\"a\": tru}", 1, "invalid literal"),
    ])
    func reportsSyntaxErrorsWithTheirLine(text: String, line: Int, message: String) {
        #expect {
            _ = try JSONParser.parse(text)
        } throws: { error in
            guard let error = error as? JSONParser.SyntaxError else { return false }
            return error.line == line && error.message.contains(message)
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParser.SyntaxError.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 20) + String(repeating: "]", count: 20)
        #expect(throws: Never.self) { try JSONParser.parse(fine) }
    }
}
