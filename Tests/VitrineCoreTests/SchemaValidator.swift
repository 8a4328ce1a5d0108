import VitrineCore

/// The part of JSON Schema (draft 2020-12) that Config/schema uses: type, enum, const, minimum, maximum, minLength,
/// pattern, properties, additionalProperties: false, required, items, minItems, oneOf and local `$ref`. Enough to
/// hold the schema files to what the loaders accept; not a general validator.
struct SchemaValidator {
    let root: JSONValue

    /// The first reason `value` does not match, nil when it does.
    func problem(_ value: JSONValue, _ schema: JSONValue? = nil, at path: String = "") -> String? {
        let schema = schema ?? root
        guard case .object(let members) = schema.kind else { return "\(path): schema is not an object" }
        func member(_ key: String) -> JSONValue? { members.first { $0.key == key }?.value }
        if let reference = member("$ref"), case .string(let pointer) = reference.kind {
            guard let target = resolve(pointer) else { return "\(path): cannot resolve \(pointer)" }
            return problem(value, target, at: path)
        }
        if let type = member("type"), !matches(value, type: type) {
            return "\(path): \(value.typeName) is not of type \(describe(type))"
        }
        if let choices = member("enum"), case .array(let allowed) = choices.kind,
            !allowed.contains(where: { $0.kind == value.kind })
        {
            return "\(path): not one of the allowed values"
        }
        if let constant = member("const"), constant.kind != value.kind { return "\(path): not the constant" }
        if case .number(let number) = value.kind {
            if let minimum = member("minimum"), case .number(let bound) = minimum.kind, number < bound {
                return "\(path): below \(bound)"
            }
            if let maximum = member("maximum"), case .number(let bound) = maximum.kind, number > bound {
                return "\(path): above \(bound)"
            }
        }
        if case .string(let text) = value.kind {
            if let minimum = member("minLength"), case .number(let bound) = minimum.kind, text.count < Int(bound) {
                return "\(path): shorter than \(Int(bound))"
            }
            if let pattern = member("pattern"), case .string(let expression) = pattern.kind {
                guard let regex = try? Regex(expression) else { return "\(path): bad pattern \(expression)" }
                if text.firstMatch(of: regex) == nil { return "\(path): does not match \(expression)" }
            }
        }
        if let alternatives = member("oneOf"), case .array(let schemas) = alternatives.kind {
            let matching = schemas.filter { problem(value, $0, at: path) == nil }.count
            if matching != 1 { return "\(path): matches \(matching) of oneOf" }
        }
        if case .object(let fields) = value.kind {
            var known: [String: JSONValue] = [:]
            if let properties = member("properties"), case .object(let declared) = properties.kind {
                for (key, schema) in declared { known[key] = schema }
            }
            if let required = member("required"), case .array(let names) = required.kind {
                for name in names {
                    if case .string(let key) = name.kind, !fields.contains(where: { $0.key == key }) {
                        return "\(path).\(key): missing"
                    }
                }
            }
            for (key, field) in fields {
                if let schema = known[key] {
                    if let found = problem(field, schema, at: "\(path).\(key)") { return found }
                } else if let extra = member("additionalProperties"), extra.kind == .bool(false) {
                    return "\(path).\(key): not allowed"
                }
            }
        }
        if case .array(let elements) = value.kind {
            if let minimum = member("minItems"), case .number(let bound) = minimum.kind, elements.count < Int(bound) {
                return "\(path): fewer than \(Int(bound)) items"
            }
            if let items = member("items") {
                for (index, element) in elements.enumerated() {
                    if let found = problem(element, items, at: "\(path)[\(index)]") { return found }
                }
            }
        }
        return nil
    }

    private func resolve(_ pointer: String) -> JSONValue? {
        guard pointer.hasPrefix("#/") else { return nil }
        var current = root
        for part in pointer.dropFirst(2).split(separator: "/") {
            guard case .object(let members) = current.kind, let next = members.first(where: { $0.key == part })
            else { return nil }
            current = next.value
        }
        return current
    }

    private func matches(_ value: JSONValue, type: JSONValue) -> Bool {
        switch type.kind {
        case .string(let name): return matches(value, typeName: name)
        case .array(let names):
            return names.contains { name in
                if case .string(let text) = name.kind { return matches(value, typeName: text) }
                return false
            }
        default: return false
        }
    }

    private func matches(_ value: JSONValue, typeName: String) -> Bool {
        switch (typeName, value.kind) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string), ("array", .array),
            ("object", .object):
            return true
        case ("integer", .number(let number)): return number.rounded() == number
        default: return false
        }
    }

    private func describe(_ type: JSONValue) -> String {
        switch type.kind {
        case .string(let name): return name
        case .array(let names):
            return names.map { if case .string(let text) = $0.kind { text } else { "?" } }.joined(separator: "|")
        default: return "?"
        }
    }
}
