/// The table printed on stdout: aligned columns, then the counters.
enum ConsoleReport {
    static func render(_ results: [ResultRow], context: RunContext) -> String {
        let table = ResultTable(results)
        let all = [ResultTable.header] + table.rows
        let widths = ResultTable.header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return ResultTable.numeric.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ")
        }
        var text = "\(context.title)\n\(context.subtitle)\n\n"
        text += line(ResultTable.header) + "\n"
        text += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        var previous: String?
        for (row, cells) in zip(results, table.rows) {
            if let previous, previous != row.scenario { text += "\n" }
            text += line(cells) + "\n"
            previous = row.scenario
        }
        if !table.notes.isEmpty {
            text += "\n" + table.notes.joined(separator: "\n") + "\n"
        }
        text += "\n\(context.methodNote)\n"
        return text
    }
}
