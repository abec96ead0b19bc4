/// A Parquet file's columns as a list reader sees them: each top-level field with the one leaf
/// column it reads, and what that leaf's definition and repetition levels mean. A primitive field
/// is a value or null; a LIST-annotated field (three levels: `group (LIST)`, `repeated group`,
/// `element`, nested as DataComp's `list<list<double>>` face boxes are) is an array, null or
/// empty as the levels say; a legacy repeated primitive is an array too. A struct or a map (a
/// field with several leaves) is named as such and not read.
struct ParquetSchema {
    /// One leaf column, and how its levels build a top-level field's value.
    struct Leaf {
        var path: [String]
        var type: ParquetMetadata.PhysicalType
        var typeLength: Int
        var maximumDefinition: Int
        var maximumRepetition: Int
        /// For each repeated level, outermost first: the definition level from which its list is
        /// present (below it: null) and from which it has an element (below it: empty).
        var lists: [(present: Int, nonEmpty: Int)]
    }

    /// The top-level fields' names, in the file's order.
    private(set) var names: [String] = []
    /// The leaves under each top-level field.
    private var leaves: [String: [Leaf]] = [:]

    init(_ elements: [ParquetMetadata.SchemaElement]) throws(ParquetError) {
        var index = 1
        let topLevel = Int(elements[0].childCount ?? 0)
        // A count past the elements there are (or below zero) is damage: found by FuzzLists.
        guard (0..<elements.count).contains(topLevel) else { throw ParquetError("its schema counts \(topLevel) fields") }
        for _ in 0..<topLevel {
            guard index < elements.count else { throw ParquetError("its schema lists fewer fields than it counts") }
            let name = elements[index].name
            names.append(name)
            var found: [Leaf] = []
            try Self.walk(elements, &index, path: [], definition: 0, repetition: 0, lists: [], depth: 0, into: &found)
            leaves[name] = found
        }
    }

    /// The one leaf of the top-level field `name`.
    func leaf(_ name: String) throws(ParquetError) -> Leaf {
        guard let found = leaves[name] else { throw ParquetError("it has no column \(name)") }
        guard found.count == 1, let leaf = found.first else {
            throw ParquetError("its column \(name) is a struct or a map (\(found.count) leaf columns): only values and lists are read")
        }
        return leaf
    }

    private static func walk(
        _ elements: [ParquetMetadata.SchemaElement], _ index: inout Int, path: [String], definition: Int, repetition: Int,
        lists: [(present: Int, nonEmpty: Int)], depth: Int, into found: inout [Leaf]
    ) throws(ParquetError) {
        guard depth < 32 else { throw ParquetError("its schema nests deeper than 32 levels") }
        guard index < elements.count else { throw ParquetError("its schema lists fewer fields than it counts") }
        let element = elements[index]
        index += 1
        var definition = definition
        var repetition = repetition
        var lists = lists
        switch element.repetition ?? .required {
        case .required: break
        case .optional: definition += 1
        case .repeated:
            lists.append((present: definition, nonEmpty: definition + 1))
            definition += 1
            repetition += 1
        }
        let path = path + [element.name]
        guard let children = element.childCount, children > 0 else {
            guard let type = element.type else { throw ParquetError("its schema has a leaf \(path.joined(separator: ".")) without a type") }
            found.append(
                Leaf(
                    path: path, type: type, typeLength: Int(element.typeLength ?? 0), maximumDefinition: definition,
                    maximumRepetition: repetition, lists: lists))
            return
        }
        for _ in 0..<children {
            try walk(
                elements, &index, path: path, definition: definition, repetition: repetition, lists: lists, depth: depth + 1, into: &found)
        }
    }
}
